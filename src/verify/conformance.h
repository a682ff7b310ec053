// Runs a folder of ONNX backend-test cases (model.onnx + test_data_set_N/{input,output}_K.pb)
// on one target and scores them by op.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace lockstep {

struct CaseResult {
  enum Status { Passed, Failed, Unsupported };
  std::string name;
  std::vector<std::string> ops;
  Status status = Failed;
  std::string detail;  // why it failed or is unsupported
};

// `dir` holds one sub-folder per case and optionally index.json ([{name, ops, rtol, atol}]).
// `filter`, when non-empty, keeps cases whose name contains it. `sample` N > 1 runs, in name
// order, each case with an op no earlier case had and every Nth of the rest from the
// `slice`th on (every op stays covered; N runs with slices 0..N-1 run every case; the others
// are left out of the results).
std::vector<CaseResult> run_conformance(const std::string& dir, const std::string& target,
                                        const std::string& filter = "", size_t sample = 1, size_t slice = 0);

// Scoreboard by op: passed / failed / unsupported, then one line per failed case.
void print_scoreboard(std::ostream& os, const std::vector<CaseResult>& results);

}  // namespace lockstep
