#include "backend/ref/ref_target.h"

#include "ref/interpreter.h"

namespace lockstep {

namespace {

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

TargetInfo ref_target_info() {
  TargetInfo t;
  t.name = "ref";
  t.summary = "the float64 reference interpreter over the unoptimised graph (the oracle)";
  t.make_program = [](const Graph& g, const CompileOptions&) -> std::unique_ptr<Program> {
    return std::make_unique<RefProgram>(g);
  };
  return t;
}

}  // namespace lockstep
