// `lockstep check`: each target's outputs against the reference ("agree" as docs/why.md defines it), then
// determinism: run to run, in-process compiles, cache off, fresh processes, A-B-A. Also the
// pieces `bisect` and `reduce` share: the compile-counting Session, the reference values,
// tolerances and fresh-process hashes.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/registry.h"
#include "graph/bind.h"
#include "runtime/program.h"
#include "runtime/target.h"
#include "verify/compile_flags.h"
#include "verify/progress.h"
#include "verify/report.h"

namespace lockstep {

// Per-output tolerances: defaults from docs/why.md, overridable for one output or all.
struct Tolerances {
  Tolerance all;
  std::map<std::string, Tolerance> per_output;
  const Tolerance& of(const std::string& output) const;
};
// "[OUTPUT:]cosine=X[,rel_l2=Y]"; throws Error for a malformed text or unknown output.
void parse_tolerance(const std::string& text, const std::vector<std::string>& outputs, Tolerances& t);

// How to run the same check in a fresh process: `binary check MODEL_ARGS... COMPILE_ARGS...`.
struct FreshProcess {
  std::string binary;                    // the lockstep executable
  std::vector<std::string> model_args;   // the model and its input flags
};
// What a fresh process (`check --sha-only`) reports: each output's SHA-256 in output order,
// the identity of the program it compiled (Program::identity) and the compile options it
// parsed, spelled back (compile_args): a process that compiled something else shows.
struct FreshResult {
  std::vector<std::string> sha256;
  std::string plan, options;
};
// Runs `target` in a fresh process. Throws Error with the process's message when it fails.
FreshResult fresh_process_run(const FreshProcess& p, const std::string& target, const CompileOptions& o);
// The lines `check --sha-only` prints for a program and its outputs, and their reading.
std::string fresh_report(const std::vector<Tensor>& outs, const Program& p, const CompileOptions& o);
FreshResult parse_fresh_report(const std::string& text);
// compile_args(o) joined by spaces: what a fresh process reports back as `options`.
std::string options_line(const CompileOptions& o);

// One target under test: every compile goes through here and is counted.
class Session {
 public:
  Session(std::string target, CompileOptions opts, std::string ref = "ref");
  const std::string& target() const { return target_; }
  const std::string& ref() const { return ref_; }
  const CompileOptions& options() const { return opts_; }
  // A fresh Program of `g` on the target, compiled for `inputs` now (so the count is honest).
  std::unique_ptr<Program> compile(const Graph& g, const TensorMap& inputs, const CompileOptions& o);
  std::unique_ptr<Program> compile(const Graph& g, const TensorMap& inputs) { return compile(g, inputs, opts_); }
  int compiles() const { return compiles_; }
  void count_compile() { ++compiles_; }  // a compile made in another process
  // A progress line on stderr ("[cpu 12.3s] ..."), or a note on `bar` when one is set.
  void progress(const std::string& what) const;
  void set_bar(ProgressBar* bar) { bar_ = bar; }

 private:
  std::string target_, ref_;
  CompileOptions opts_;
  int compiles_ = 0;
  double start_;
  ProgressBar* bar_ = nullptr;
};

// The reference's outputs: the float64 interpreter for "ref", else another target's (run
// without the fault). Each value the reference computes is passed to `on_value` by name
// ("ref": every node output; a target: every fusion-group output).
std::vector<RefTensor> reference_run(const Graph& g, const TensorMap& inputs, const std::string& ref,
                                     const CompileOptions& o,
                                     const std::function<void(const std::string&, const RefTensor&)>& on_value = {});

// Position of each node id (graph.h's node_id) in g's current order: ids stay, positions move.
std::map<std::string, int> node_positions(const Graph& g);

// Compares a program's captured fusion groups with the reference's values of the same graph
// values as the reference computes them (nothing float64 is kept).
class GroupTracer {
 public:
  GroupTracer(const Graph& g, std::string target, std::vector<Program::GroupValue> caps, Tolerance tol,
              bool keep_reference = false);
  void on_value(const std::string& name, const RefTensor& ref);
  // Compared groups in execution order (groups holding no graph value are left out).
  std::vector<TracePoint> points() const;
  // Index into caps() of the first compared group that disagrees, or -1.
  int first_bad() const;
  const std::vector<Program::GroupValue>& caps() const { return caps_; }
  // keep_reference: the reference's value of every captured graph value (and every small
  // one, such as folded shapes), in the model's dtype.
  const TensorMap& reference() const { return kept_; }

 private:
  std::string target_;
  std::vector<Program::GroupValue> caps_;
  std::vector<TracePoint> points_;
  std::vector<bool> compared_;
  std::map<std::string, std::vector<int>> by_value_;
  Tolerance tol_;
  bool keep_;
  TensorMap kept_;
};

// --- Determinism stages, shared by check and bisect --by stage. `sha` is the SHA-256 of each
// output of the first run; each stage compiles through the Session, so compiles are counted.
std::vector<std::string> output_sha256(const std::vector<Tensor>& outs);
// "'a', 'b', ... (12 in all)": at most `most` items, each in `quote`.
std::string brief_list(const std::vector<std::string>& items, size_t most, const std::string& quote = "");
// Constants as resident on the target against the host bytes; `changed` gets their names.
StageRow stage_constants(const std::string& target, Program& p, const std::string& when,
                         std::vector<std::string>* changed = nullptr);
StageRow stage_repeat(Session& s, const Graph& g, const TensorMap& in, const std::vector<std::string>& sha, int compiles);
StageRow stage_cache(Session& s, const Graph& g, const TensorMap& in, const std::vector<std::string>& sha);
// `plan`: the in-process program's identity, which every fresh process must also compile.
StageRow stage_fresh(Session& s, const FreshProcess& p, int processes, const std::vector<std::string>& sha,
                     const std::string& plan);
// Compile B, then A again: A must not change, and B after A must equal B alone (a fresh
// process when `p.binary` is set, else B compiled here with the cache off). `b` null: the
// model cut at its middle node.
StageRow stage_aba(Session& s, const Graph& g, const TensorMap& in, const std::vector<std::string>& sha,
                   const Graph* b, const TensorMap& b_inputs, const FreshProcess& p);

// What check and bisect share: the oracle, the compile flags under test, the tolerances, B of
// A-B-A, and how to start fresh processes.
struct VerifyOptions {
  std::string ref = "ref";
  CompileOptions compile;
  Tolerances tol;
  const Graph* aba = nullptr;  // B of A-B-A; null: a prefix cut of the model at its middle node
  TensorMap aba_inputs;
  FreshProcess process;  // binary empty: no fresh processes (A-B-A's B is compiled here, cache off)
};

struct CheckOptions : VerifyOptions {
  std::vector<std::string> targets{default_target()};
  int fresh = 2;    // fresh processes
  int repeat = 2;   // in-process compiles (the first included)
  bool trace = true;     // capture fusion-group values for the error-along-the-graph plot
};

// Everything agrees -> report.agree. Target failures are rows, not exceptions.
Report run_check(const Graph& g, const TensorMap& inputs, const CheckOptions& o);

// The prefix cut `check` and `bisect` use as B of A-B-A when none is given.
Graph default_aba_model(const Graph& g);

}  // namespace lockstep
