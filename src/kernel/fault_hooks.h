// The points where a planted test fault (--inject-fault) may act. The compiler and every
// device call these hooks and never see the fault catalogue (verify/faults.h), which
// implements them; a compile without a fault has no hooks at all.
#pragma once
#include <string>

#include "kernel/kernel.h"

namespace lockstep {

class FaultHooks {
 public:
  virtual ~FaultHooks() = default;
  // The spec it was planted from ("kernel:Relu#1"), for tools that pass it on.
  virtual const std::string& spec() const = 0;
  // Pass application `number` (1-based) carries the bug: it rewrites loads with corrupt_load.
  virtual bool corrupts_pass(int number) const { return false; }
  // The bug a corrupt pass application puts into a load it moves; null when it cannot.
  virtual kir::ExprP corrupt_load(const kir::Expr& load) const { return nullptr; }
  // The final plan, before any target prints it.
  virtual void plan_ready(kir::Plan& plan) const {}
  // The kernel cache's key for code whose content key is `key`. A changed key never
  // reaches the disk: the bug stays in the process that planted it.
  virtual std::string cache_key(const std::string& key) const { return key; }
  // Uploads rewrite a staging buffer without waiting for the copy that reads it.
  virtual bool skip_staging_wait() const { return false; }
  // The kernel that leaves the second half of its output unwritten, or -1.
  virtual int unwritten_kernel(const kir::Plan& plan) const { return -1; }
};

}  // namespace lockstep
