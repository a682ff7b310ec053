// `lockstep bisect`: where a target stops agreeing with the reference, by
//   stage  constants, each kernel on reference inputs, readback, cache, repeated compiles, A-B-A;
//   node   (capture) the first fusion group of the program as compiled whose value diverges,
//          then the node inside it, run alone on the reference's inputs; (cuts) prefix cuts
//          at node outputs with binary search;
//   pass   binary search over --pass-limit to the first pass application after which it diverges;
//   all    stage, then node, then pass, with one verdict.
// Every compile goes through one Session and is counted.
#pragma once
#include <string>
#include <vector>

#include "backend/registry.h"
#include "runtime/target.h"
#include "verify/check.h"

namespace lockstep {

struct BisectOptions : VerifyOptions {
  std::string target = default_target();
  enum By { Node, Pass, Stage, All } by = All;
  bool cuts = false;  // node mode (b): prefix cuts instead of capturing the compiled program
};

// report.agree: no divergence anywhere. report.verdict: one line naming the stage, the ONNX
// node(s) and, for a pass, "#N pass-name".
Report run_bisect(const Graph& g, const TensorMap& inputs, const BisectOptions& o);

// Nodes of `g` (indices, any order) as a model of their own. Values they read from other
// nodes become graph inputs fed from `values` (graph inputs and the reference's values, by
// name); initializers stay. `outputs`: the values to expose; empty: every value they produce.
struct Isolated {
  Graph graph;
  TensorMap inputs;
};
Isolated isolate(const Graph& g, std::vector<int> nodes, const TensorMap& values, std::vector<int> outputs = {});

// Adds to `values` the reference's value of everything `nodes` read from nodes outside them
// that `values` lacks (values internal to another fusion group), by running the reference on
// a cut of `g`.
void add_missing_values(const Graph& g, const std::vector<int>& nodes, const TensorMap& inputs, const std::string& ref,
                        const CompileOptions& o, TensorMap& values);

// "#12 fuse-epilogue: merged ... (a, b)" -> number, pass name and nodes.
struct PassApplication {
  int number = 0;
  std::string pass;
  std::vector<std::string> nodes;
};
PassApplication parse_pass_record(const std::string& line);

}  // namespace lockstep
