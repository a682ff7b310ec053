// Execution of a loaded plan on a device: its memory laid out (device_layout: constants in one
// block, everything else in another), kernel arguments bound, uploads through the shared
// staging pool, the plan launched or replayed, outputs and run-time checks read back. Checked
// mode's guards and poison, capture, per-kernel timing and constants read back serve the
// verification tools. CompiledProgram makes the code; this runs it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "runtime/device.h"
#include "runtime/device_layout.h"
#include "runtime/memory_plan.h"
#include "runtime/program.h"
#include "runtime/staging_pool.h"

namespace lockstep {

// On a device whose memory is the host's, `bytes` of a program are refused (an Error naming the
// plan's largest buffer and the nodes that write it) when the process may not take them.
void require_program_room(const Device& dev, const std::string& target, const kir::Plan& plan, int64_t bytes);
// The bytes of both blocks of a layout (the length-dependent one at least `reserve`); -1 on overflow.
int64_t program_bytes(const DeviceLayout& l, int64_t reserve);

class Executor {
 public:
  // `align`: the target's buffer alignment (TargetDesc::buffer_align); `target` names it in errors.
  Executor(Device& dev, const CompileOptions& o, int64_t align, std::string target)
      : dev_(dev), opts_(o), align_(align), target_(std::move(target)) {}
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Memory for `plan` (loaded on the device), whose temporaries `mem` places: the
  // length-dependent block at least `reserve` bytes, and arguments bound. `plan` and `mem`
  // must outlive the placement.
  void place(const kir::Plan& plan, const MemoryPlan& mem, int64_t reserve);
  void upload_constants();
  // The placed plan at another length (the same kernels and constants): laid out again, the
  // block grown when the length needs more. True when it grew.
  bool rebind();
  // Frees the placement, even when the device reports an error while draining its queue (that
  // error is rethrown afterwards).
  void release();
  bool placed() const { return block_ != 0; }

  // Inputs (by the plan's input buffers, from `inputs` of graph `g`) and the symbol words.
  void upload_inputs(const Graph& g, const TensorMap& inputs, const std::vector<int64_t>& symbol_words);
  void run();  // every kernel, or the captured plan replayed where the device can
  std::vector<Program::GroupValue> run_capture();
  std::vector<Program::KernelTime> profile();
  std::vector<Tensor> read_outputs();  // waits; checks guards and run-time checks
  std::vector<Program::ConstantCheck> check_constants();
  void verify_constants();  // throws Error naming the first constant whose upload was corrupted

 private:
  void bind_addresses();
  void enqueue_plan(bool capture, Timer* timer);
  void replay();
  void unwritten_half(int k, bool before);
  void capture_group(int k);
  void guard_regions();
  void poison_dead(int k);
  void check_guards();
  std::vector<unsigned char> read_back(DevicePtr from, size_t bytes);
  void fill(DevicePtr at, unsigned char byte, size_t bytes);
  bool has_launches() const;
  StagingPool& staging();
  bool skip_staging_wait() const;  // the planted staging-reuse fault
  DevicePtr base(bool constant) const { return constant ? constant_block_ : block_; }
  DevicePtr address(int b) const {
    return layout_.offset[b] < 0 ? 0 : base(plan_->buffers[b].kind == kir::Buffer::Constant) + layout_.offset[b];
  }

  Device& dev_;
  const CompileOptions& opts_;
  int64_t align_;
  std::string target_;
  const kir::Plan* plan_ = nullptr;
  const MemoryPlan* mem_ = nullptr;
  DeviceLayout layout_;
  DevicePtr block_ = 0;  // everything but constants
  int64_t block_bytes_ = 0;
  DevicePtr constant_block_ = 0;
  int uninit_kernel_ = -1;  // uninit:NODE: the kernel that leaves half its output unwritten
  DevicePtr kept_ = 0;      // ... and where that half's old bytes wait during its launch
  bool captured_ = false;   // the plan is recorded on the device for replay
  std::vector<Program::GroupValue> captured_values_;
};

}  // namespace lockstep
