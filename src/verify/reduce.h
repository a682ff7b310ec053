// `lockstep reduce`: delta debugging over nodes to a minimal model that still diverges on a
// target, written as an ONNX backend-test bundle a fresh shell can rerun.
#pragma once
#include <string>
#include <vector>

#include "backend/registry.h"
#include "runtime/target.h"
#include "verify/bisect.h"

namespace lockstep {

struct ReduceOptions {
  std::string target = default_target(), ref = "ref";
  CompileOptions compile;
  Tolerances tol;
  int max_compiles = 64;  // the search stops there and keeps the smallest failing model so far
};

struct Reduction {
  bool diverges = false;       // false: the model agrees, nothing to reduce
  Isolated model;              // the reduced model and its inputs (reference values)
  std::vector<RefTensor> reference;  // its outputs on the reference
  std::vector<std::string> nodes;    // the ONNX nodes kept
  Report report;               // probes, compiles, verdict
};

// Seeds with the first diverging fusion group of the program as compiled (capture), or the
// whole graph where the target cannot capture, then runs ddmin over its nodes: every
// candidate is the kept nodes alone, fed the reference's values of everything they read.
Reduction reduce_model(const Graph& g, const TensorMap& inputs, const ReduceOptions& o);

// Writes DIR/model.onnx, DIR/test_data_set_0/input_K.pb (the K-th graph input), output_K.pb
// (reference outputs in the model's dtypes) and DIR/README.md with `command` in it.
// Writes the bundle into `dir`, all files or none; the caller gives a new or empty folder (a
// user's folder is never written into: its model.onnx and README.md would be replaced).
void write_bundle(const Reduction& r, const std::string& dir, const std::string& command, const std::string& original);

}  // namespace lockstep
