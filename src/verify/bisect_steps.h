// The bisection's shared state and its steps (bisect.cpp: core and verdict; bisect_node.cpp,
// bisect_pass.cpp, bisect_stage.cpp: one mode each). Internal to src/verify.
#pragma once
#include <memory>
#include <optional>

#include "verify/bisect.h"

namespace lockstep {

// What a probe compile answered.
struct ProbeOutcome {
  bool diverges = false;
  Agreement worst;        // the output furthest from the reference
  std::string error;      // the compile or run failed
  int64_t poisoned = 0;   // output elements still holding checked mode's all-ones poison
};

struct StageFinding {
  bool differs = false;
  bool runtime = false;           // a runtime stage: node and pass bisection do not apply
  std::string stage, detail;
  std::vector<std::string> nodes;
};

struct NodeFinding {
  bool found = false;
  std::string kernel;                 // the first diverging fusion group (capture mode)
  std::vector<std::string> group;     // its ONNX nodes
  std::vector<std::string> culprits;  // the node(s) the divergence is localised to
  bool alone_diverges = false;        // the group diverges alone on the reference's inputs
  bool unwritten = false;             // the culprit leaves output elements unwritten
  std::string detail;
};

struct PassFinding {
  enum Kind { NotRun, NoDivergence, NotAPass, Found } kind = NotRun;
  PassApplication app;
  std::string line;
};

class Bisector {
 public:
  Bisector(const Graph& g, const TensorMap& in, const BisectOptions& o, Report& r);

  // Steps; each records its rows and probes in the report.
  StageFinding stages();
  NodeFinding groups();   // capture mode; falls back to cuts() where the target cannot capture
  NodeFinding cuts();
  PassFinding passes(bool zero_first);

  bool outputs_diverge();
  int compiles() const { return s_.compiles(); }
  int pass_applications();

 private:
  friend Report run_bisect(const Graph&, const TensorMap&, const BisectOptions&);
  Program& main();
  const std::vector<Tensor>& main_outputs();
  const std::vector<RefTensor>& ref_outputs();
  GroupTracer* tracer();  // null when the target cannot capture
  // The first diverging group alone on the reference's inputs (computed once).
  const ProbeOutcome& group_alone();
  std::vector<int> group_nodes(int cap);
  // Graph inputs and the reference's values of everything `nodes` read (computed on demand).
  const TensorMap& values_for(const std::vector<int>& nodes);
  ProbeOutcome probe(const std::string& mode, const std::string& setting, const Graph& g, const TensorMap& in,
                     const CompileOptions& o, const std::vector<RefTensor>* ref = nullptr);
  void add_stage(const StageRow& row);

  const Graph& g_;
  const TensorMap& in_;
  const BisectOptions& o_;
  Report& r_;
  Session s_;
  std::unique_ptr<Program> main_;
  std::vector<Tensor> outs_;
  bool ran_ = false, ref_done_ = false, traced_ = false;
  std::vector<RefTensor> ref_outs_;
  std::unique_ptr<GroupTracer> tracer_;
  std::optional<ProbeOutcome> alone_;
  TensorMap known_;
  bool known_ready_ = false;
};

}  // namespace lockstep
