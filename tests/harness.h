// The differential harness every op and backend goes through (as ggml's test-backend-ops):
// each case is a small description (op, attributes, input shapes), built into a one-node
// graph, run on every target and compared with `ref`. Unsupported combinations are
// reported, not failed; checked execution surrounds buffers with sentinels.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "verify/compare.h"

namespace lockstep {

struct OpCase {
  std::string name;  // "Conv1d k5 d2 pad4"
  std::string op;
  struct Input {
    DType dtype;
    Shape shape;
    double lo = -1, hi = 1;  // generated values are uniform in [lo, hi) (ints: truncated)
  };
  std::vector<Input> inputs;                         // graph inputs, generated from the case name
  std::vector<std::pair<size_t, Tensor>> constants;  // input index -> initializer (shape params)
  Attrs attrs;
  int opset = 17;
  int outputs = 1;
  std::vector<size_t> omitted;  // node input positions left empty (optional inputs not given)
  size_t node_inputs() const { return inputs.size() + constants.size() + omitted.size(); }
  bool is_omitted(size_t k) const { return std::find(omitted.begin(), omitted.end(), k) != omitted.end(); }
};

struct CaseOutcome {
  std::string case_name, target;
  enum Status { Passed, Failed, Unsupported } status = Failed;
  std::string detail;
};

// Builds the one-node graph of a case.
Graph build_case(const OpCase& c);
// Runs one case on one target against ref.
CaseOutcome run_case(const OpCase& c, const std::string& target);
// Cases covering every supported op, with the attribute combinations the VITS family uses.
std::vector<OpCase> standard_cases();
// Small tensor helpers for writing cases.
Tensor ints_tensor(const std::vector<int64_t>& v);
Tensor floats_tensor(const std::vector<float>& v);

}  // namespace lockstep
