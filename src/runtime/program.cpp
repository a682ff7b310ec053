#include "runtime/program.h"

#include <algorithm>

#include "backend/cpu/cpu_program.h"
#include "backend/cuda/cuda_program.h"
#include "core/error.h"
#include "ref/interpreter.h"

namespace lockstep {

namespace {

// `ref`: the float64 interpreter over the unoptimised graph, rounded to the model's dtypes.
class RefProgram : public Program {
 public:
  explicit RefProgram(const Graph& g) : graph_(g) {}
  const std::string& target() const override { return name_; }
  std::vector<Tensor> run(const TensorMap& inputs) override {
    std::vector<Tensor> outs;
    for (const RefTensor& r : run_reference(graph_, inputs)) outs.push_back(from_ref(r));
    return outs;
  }

 private:
  const Graph graph_;  // a copy: the program outlives whatever graph it was made from
  std::string name_ = "ref";
};

}  // namespace

std::vector<Program::GroupValue> Program::run_capture(const TensorMap&) {
  throw Unsupported("target '" + target() + "' cannot capture intermediate values");
}

std::vector<Program::ConstantCheck> Program::check_constants() {
  throw Unsupported("target '" + target() + "' cannot read its constants back");
}

std::vector<Program::KernelTime> Program::profile(const TensorMap&) {
  throw Unsupported("target '" + target() + "' cannot time its kernels");
}

std::vector<std::string> known_targets() { return {"ref", "cpu", "cuda", "opencl", "metal"}; }

void validate_options(const CompileOptions& o) {
  if (o.threads < 0 || o.threads > kMaxThreads)
    throw Error("--threads " + std::to_string(o.threads) + " is out of range (0 for all cores, or 1 to " +
                std::to_string(kMaxThreads) + ")");
  if (o.pass_limit < -1) throw Error("--pass-limit " + std::to_string(o.pass_limit) + " is negative");
}

std::unique_ptr<Program> compile(const Graph& g, const std::string& target, const CompileOptions& opts) {
  validate_options(opts);
  if (target == "ref") return std::make_unique<RefProgram>(g);
  if (target == "cpu") return cpu::compile_cpu(g, opts);
  if (target == "cuda") return cuda::compile_cuda(g, opts);
  auto known = known_targets();
  if (std::find(known.begin(), known.end(), target) == known.end())
    throw Error("unknown target '" + target + "' (known: ref, cpu, cuda, opencl, metal)");
  throw Error("target '" + target + "' is not implemented in this version of lockstep yet");
}

}  // namespace lockstep
