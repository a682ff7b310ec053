#include "verify/planted_fault.h"

#include "verify/faults.h"

namespace lockstep {

namespace {

class PlantedFault : public FaultHooks {
 public:
  PlantedFault(std::string spec, Fault f) : spec_(std::move(spec)), f_(std::move(f)) {}
  const std::string& spec() const override { return spec_; }
  bool corrupts_pass(int number) const override { return f_.kind == Fault::Pass && number == f_.pass; }
  kir::ExprP corrupt_load(const kir::Expr& load) const override { return off_by_one(load); }
  void plan_ready(kir::Plan& plan) const override { plant_kernel_fault(plan, f_); }
  // Every program shares one slot: the first code cached is handed to every later compile.
  std::string cache_key(const std::string& key) const override {
    return f_.kind == Fault::CacheByName ? "planted-fault-cache-by-name" : key;
  }
  bool skip_staging_wait() const override { return f_.kind == Fault::StagingReuse; }
  int unwritten_kernel(const kir::Plan& plan) const override { return uninit_kernel(plan, f_); }

 private:
  std::string spec_;
  Fault f_;
};

}  // namespace

std::shared_ptr<const FaultHooks> plant_fault(const std::string& spec) {
  Fault f = parse_fault(spec);
  if (!f) return nullptr;
  return std::make_shared<const PlantedFault>(spec, f);
}

}  // namespace lockstep
