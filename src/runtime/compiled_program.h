// The one compiled program of every target: plan -> code -> loaded program. It opens the
// target's device, runs the shared pipeline (or binds a new length to the symbolic program),
// prints with the target's printer, compiles through the kernel cache and loads the code; an
// Executor (runtime/executor.h) then places and runs it. A backend supplies a TargetInfo and a
// Device; nothing here knows one.
#pragma once
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "passes/generalise.h"
#include "passes/pipeline.h"
#include "runtime/device_layout.h"
#include "runtime/executor.h"
#include "runtime/kernel_cache.h"
#include "runtime/memory_plan.h"
#include "runtime/program.h"
#include "runtime/target.h"

namespace lockstep {

class CompiledProgram : public Program {
 public:
  // Throws Error when the target cannot compile here; without a device the program still
  // compiles (prepare(), sources()) and run() says why it cannot run.
  CompiledProgram(const TargetInfo& t, const Graph& g, const CompileOptions& o);
  ~CompiledProgram() override;
  const std::string& target() const override { return target_.name; }
  void prepare(const TensorMap& inputs) override;
  std::vector<Tensor> run(const TensorMap& inputs) override;
  std::vector<GroupValue> run_capture(const TensorMap& inputs) override;
  std::vector<KernelTime> profile(const TensorMap& inputs) override;
  std::vector<ConstantCheck> check_constants() override;
  std::vector<std::string> pass_log() const override;
  std::string identity() const override;
  CompileStats stats() const override { return stats_; }
  std::vector<std::pair<std::string, std::string>> sources() const override;

 private:
  void specialise(const Specialisation& s);
  bool make_symbolic(const Specialisation& s);
  bool bind_symbolic(const std::vector<TypeInfo>& types);
  bool fits_symbolic(const std::vector<TypeInfo>& types) const;
  std::string length_of(const std::vector<TypeInfo>& types) const;
  void load();
  void lap(const char* phase, std::chrono::steady_clock::time_point& t);
  int64_t reserved_bytes() const;  // the block's size at --reserve's lengths (0: none)
  void need_device();
  bool await_device();
  void before_native(std::chrono::steady_clock::time_point& t);
  CodeCompiler& compiler();
  void start(const TensorMap& inputs);
  void release();

  const TargetInfo& target_;
  const Graph graph_;  // a copy: the program outlives whatever graph it was made from
  CompileOptions opts_;
  kir::TargetDesc desc_;  // the target's, narrowed to the device's types
  std::unique_ptr<Device> dev_;
  std::string why_no_device_;
  struct Opened {
    std::unique_ptr<Device> dev;
    std::string why;
    double ms = 0;
  };
  std::future<Opened> opening_;  // a device opening alongside the first compile
  std::unique_ptr<CodeCompiler> compiler_;  // null until compiler() makes it, where the device opens alongside
  bool running_ = false;  // the compile is run()'s: with no device it stops before the native step
  Specialisation spec_;
  std::string signature_;  // input_signature of the inputs spec_ was made for
  kir::Plan plan_;
  std::vector<PassRecord> log_;
  MemoryPlan mem_;
  std::shared_ptr<const CompiledCode> code_;
  std::vector<std::string> entries_;  // the function in code_ that runs each kernel
  std::unique_ptr<Executor> exec_;    // made at the first load, on dev_
  // The symbolic program, once made: one compile for every length it covers.
  std::optional<SymbolicPlan> sym_;
  std::shared_ptr<const CompiledCode> sym_code_;
  std::vector<std::string> sym_entries_;
  Specialisation sym_like_;        // the inputs it was made for (dtypes, fixed dims)
  bool sym_tried_ = false;
  bool sym_bound_ = false;
  std::vector<int64_t> sym_values_;  // the symbol values plan_ is instantiated at
  std::vector<int64_t> sym_words_;   // its Symbols buffer: the values, then the divisors' multipliers
  std::set<std::vector<int64_t>> sym_covered_;  // symbol values whose shapes were checked
  GraphTypes bind_types_;  // the short shape parameters' inference, run again at each new length
  CompileStats stats_;
};

}  // namespace lockstep
