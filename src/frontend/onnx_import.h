// ONNX import: ModelProto (through Debian's libonnx message classes) -> Graph, then
// lockstep's own validation. libonnx's checker only adds warnings for models it knows.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace onnx {
class ModelProto;
class TensorProto;
}  // namespace onnx

namespace lockstep {

// Reads, converts and validates a model file. Throws Error naming the file or node.
Graph load_onnx(const std::string& path);

// Parses a ModelProto from a file; errors name the file.
onnx::ModelProto read_model_proto(const std::string& path);

// Converts and validates; `base_dir` resolves external-data locations.
Graph import_model(const onnx::ModelProto& model, const std::string& source,
                   const std::string& base_dir);

// A TensorProto's contents (raw_data, typed fields or external data). `what` names it in errors.
Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& base_dir,
                         const std::string& what);

// The file an external-data `location` names, checked: a relative path that stays inside the
// model's folder once every link and ".." is resolved, naming a regular file (never a FIFO,
// device or folder). Throws Error naming `what` otherwise.
std::filesystem::path resolve_external_location(const std::string& base_dir, const std::string& location,
                                               const std::string& what);

// The `location` entries of a tensor stored as external data (none for an inline tensor).
std::vector<std::string> external_data_locations(const onnx::TensorProto& t);

// Reads a TensorProto file (ONNX backend-test layout: input_0.pb).
Tensor load_tensor_pb(const std::string& path);

}  // namespace lockstep
