// Graph -> ONNX ModelProto: the inverse of onnx_import, for generated models, cuts and
// reduced repros. Initializers are written as raw_data.
#pragma once
#include <optional>
#include <string>

#include "graph/graph.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace lockstep {

struct ExportOptions {
  // Unset: the graph's own values when non-zero, else IR 8 / opset 17 (what libonnx 1.12 checks).
  std::optional<int64_t> ir_version;
  std::optional<int> opset;
  std::string producer_name = "lockstep";
  // Also write value_info for every node output, from shape inference (as PyTorch does).
  bool value_info = false;
};

// Each node is written with its id as its name. Graph outputs whose dtype is unknown get their
// type from shape inference. Throws Error for what ONNX cannot hold (an unnamed value, an
// attribute of unsupported kind).
onnx::ModelProto export_model(const Graph& g, const ExportOptions& opts = {});

// Writes the model atomically: a temporary file next to `path`, then rename.
void save_onnx(const Graph& g, const std::string& path, const ExportOptions& opts = {});

}  // namespace lockstep
