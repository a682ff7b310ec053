#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "core/error.h"
#include "core/memory.h"
#include "core/sha256.h"
#include "runtime/checked.h"

namespace lockstep {

namespace {

// The host's clock where the device has none of its own: each mark waits for the queue.
class HostTimer : public Timer {
 public:
  explicit HostTimer(Device& d) : dev_(d) {}
  void mark() override {
    dev_.synchronize();
    at_.push_back(std::chrono::steady_clock::now());
  }
  std::vector<double> intervals_ms() override {
    std::vector<double> ms;
    for (size_t k = 1; k < at_.size(); ++k)
      ms.push_back(std::chrono::duration<double, std::milli>(at_[k] - at_[k - 1]).count());
    return ms;
  }

 private:
  Device& dev_;
  std::vector<std::chrono::steady_clock::time_point> at_;
};

}  // namespace

Executor::~Executor() {
  try {
    release();
  } catch (...) {  // a device that fails while tearing down has nothing left to report to
  }
}

// A host device holds the whole program in host memory; a GPU's host side holds the outputs it
// reads back (a 12 GiB ConvTranspose output was refused only as "a tensor", naming no node).
void require_program_room(const Device& dev, const std::string& target, const kir::Plan& plan, int64_t bytes) {
  std::vector<int> held;
  if (dev.host_memory()) {
    for (size_t b = 0; b < plan.buffers.size(); ++b) held.push_back(static_cast<int>(b));
  } else {
    held = plan.outputs;
    bytes = 0;
    for (int b : held)
      if (__builtin_add_overflow(bytes, plan.buffers[b].bytes(), &bytes)) bytes = -1;
  }
  int largest = -1;
  for (int b : held)
    if (largest < 0 || plan.buffers[b].bytes() > plan.buffers[largest].bytes()) largest = b;
  std::string what = target + (dev.host_memory() ? ": the program's memory" : ": the outputs read back to the host");
  if (largest >= 0) {
    const kir::Buffer& b = plan.buffers[largest];
    what += " (its largest buffer '" + b.name + "' " + dtype_name(b.dtype) + shape_str(b.shape);
    for (const kir::Kernel& k : plan.kernels)
      if (k.out == largest) what += ", written by node " + kir::node_list(k);
    what += ")";
  }
  require_memory(bytes, what);
}

int64_t program_bytes(const DeviceLayout& l, int64_t reserve) {
  int64_t total = 0;
  return __builtin_add_overflow(std::max(l.total, reserve), l.constant_total, &total) ? -1 : total;
}

void Executor::place(const kir::Plan& plan, const MemoryPlan& mem, int64_t reserve) {
  plan_ = &plan;
  mem_ = &mem;
  layout_ = layout_device_memory(plan, mem, opts_.checked, align_);
  require_program_room(dev_, target_, plan, program_bytes(layout_, reserve));
  constant_block_ = dev_.allocate(static_cast<size_t>(layout_.constant_total));
  block_bytes_ = std::max(layout_.total, reserve);
  block_ = dev_.allocate(static_cast<size_t>(block_bytes_));
  bind_addresses();
}

bool Executor::rebind() {
  dev_.synchronize();  // nothing queued still uses the old layout
  layout_ = layout_device_memory(*plan_, *mem_, opts_.checked, align_);
  bool grew = layout_.total > block_bytes_;
  if (grew) {
    require_program_room(dev_, target_, *plan_, layout_.total);
    DevicePtr old = block_;
    block_ = 0;
    block_bytes_ = 0;
    block_ = dev_.reallocate(old, static_cast<size_t>(layout_.total));
    block_bytes_ = layout_.total;
  }
  captured_ = false;  // the launches change with the length
  bind_addresses();
  return grew;
}

// Kernel arguments at the current layout (and the planted fault's spare buffer).
void Executor::bind_addresses() {
  if (kept_) {
    DevicePtr old = kept_;
    kept_ = 0;
    dev_.free(old);
  }
  if ((uninit_kernel_ = opts_.fault ? opts_.fault->unwritten_kernel(*plan_) : -1) >= 0)
    kept_ = dev_.allocate(plan_->buffers[plan_->kernels[uninit_kernel_].out].bytes());
  std::vector<DevicePtr> at(plan_->buffers.size());
  for (size_t b = 0; b < at.size(); ++b) at[b] = address(static_cast<int>(b));
  dev_.bind(at);
  if (opts_.checked) guard_regions();
}

void Executor::release() {
  std::exception_ptr failed;
  try {
    dev_.synchronize();
  } catch (...) {
    failed = std::current_exception();
  }
  DevicePtr blocks[] = {block_, constant_block_, kept_};
  block_ = constant_block_ = kept_ = 0;
  block_bytes_ = 0;
  captured_ = false;
  for (DevicePtr b : blocks)
    if (b) dev_.free(b);
  if (failed) std::rethrow_exception(failed);
}

void Executor::upload_inputs(const Graph& g, const TensorMap& inputs, const std::vector<int64_t>& symbol_words) {
  UploadBatch batch(staging(), dev_, skip_staging_wait());
  for (size_t b = 0; b < plan_->buffers.size(); ++b) {
    const kir::Buffer& buf = plan_->buffers[b];
    if (buf.kind == kir::Buffer::Symbols) batch.upload(address(static_cast<int>(b)), symbol_words.data(), buf.bytes());
    if (buf.kind != kir::Buffer::Input) continue;
    const Tensor& t = inputs.at(g.values[g.inputs[buf.io_index]].name);
    batch.upload(address(static_cast<int>(b)), t.bytes.data(), buf.bytes());
  }
}

void Executor::run() {
  if (opts_.replay && (opts_.checked || has_launches())) replay();  // an empty plan is not worth capturing
  else enqueue_plan(false, nullptr);
}

std::vector<Program::GroupValue> Executor::run_capture() {
  captured_values_.clear();  // nothing left over from a capture that threw
  enqueue_plan(true, nullptr);
  std::vector<Program::GroupValue> values = std::move(captured_values_);
  captured_values_.clear();
  read_outputs();
  return values;
}

// Plain launches with a mark before the first kernel and after each: the device's own clock
// where it has one.
std::vector<Program::KernelTime> Executor::profile() {
  std::unique_ptr<Timer> timer = dev_.timer();
  if (!timer) timer = std::make_unique<HostTimer>(dev_);
  enqueue_plan(false, timer.get());
  read_outputs();
  std::vector<double> ms = timer->intervals_ms();
  std::vector<Program::KernelTime> times;
  for (size_t k = 0; k < plan_->kernels.size() && k < ms.size(); ++k) {
    const kir::Kernel& kern = plan_->kernels[k];
    const kir::Expr* red = kir::find_reduce(kern.body);
    Program::KernelTime t{kern.name, kern.nodes, ms[k], red ? "reduction" : "elementwise"};
    double terms = red ? static_cast<double>(shape_numel(red->shape)) : 0;
    t.flops = static_cast<double>(plan_->buffers[kern.out].numel()) * terms * (red && red->fn == kir::Fn::Dot ? 2 : 1);
    t.bytes = static_cast<double>(plan_->buffers[kern.out].bytes());
    for (int b : kir::kernel_inputs(kern)) t.bytes += static_cast<double>(plan_->buffers[b].bytes());
    times.push_back(std::move(t));
  }
  return times;
}

std::vector<Program::ConstantCheck> Executor::check_constants() {
  std::vector<Program::ConstantCheck> checks;
  for (size_t b = 0; b < plan_->buffers.size(); ++b) {
    const kir::Buffer& buf = plan_->buffers[b];
    if (buf.kind != kir::Buffer::Constant) continue;
    std::vector<unsigned char> resident = read_back(address(static_cast<int>(b)), buf.bytes());
    checks.push_back({buf.name, sha256_hex(buf.data->bytes.data(), buf.data->bytes.size()),
                      sha256_hex(resident.data(), resident.size())});
  }
  return checks;
}

void Executor::verify_constants() {
  for (const Program::ConstantCheck& c : check_constants())
    if (c.host_sha256 != c.resident_sha256)
      throw Error(target_ + ": constant '" + c.value + "' on the device differs from the host bytes (sha256 " +
                  c.resident_sha256.substr(0, 16) + " on the device, " + c.host_sha256.substr(0, 16) +
                  " on the host): its upload was corrupted");
}

// Every kernel in order (checked: poison first, and dead temporaries after their last
// reader). With `capture`, each group's output is read back after its kernel.
void Executor::enqueue_plan(bool capture, Timer* timer) {
  if (opts_.checked) {
    fill(block_ + layout_.arena_at, kPoisonByte, static_cast<size_t>(layout_.arena_bytes));
    for (int b : plan_->outputs) fill(address(b), kPoisonByte, plan_->buffers[b].bytes());
  }
  if (timer) timer->mark();
  for (int k = 0; k < static_cast<int>(plan_->kernels.size()); ++k) {
    unwritten_half(k, true);
    dev_.launch(k);
    unwritten_half(k, false);
    if (timer) timer->mark();
    if (capture) capture_group(k);
    if (opts_.checked) poison_dead(k);
  }
}

// The whole plan recorded once per placement, then replayed, where the device can.
void Executor::replay() {
  if (!captured_) {
    if (!dev_.begin_capture()) return enqueue_plan(false, nullptr);
    try {
      enqueue_plan(false, nullptr);
    } catch (...) {
      try {
        dev_.end_capture();
      } catch (...) {  // the capture is broken anyway; the first error is the one to report
      }
      throw;
    }
    dev_.end_capture();
    captured_ = true;
  }
  dev_.replay();
}

// The planted uninit:NODE fault: the second half of the kernel's output is saved before the
// launch and put back after it, so it keeps whatever bytes were there (poison when checked).
void Executor::unwritten_half(int k, bool before) {
  if (k != uninit_kernel_) return;
  const kir::Buffer& buf = plan_->buffers[plan_->kernels[k].out];
  size_t half = buf.bytes() / 2, rest = buf.bytes() - half;
  DevicePtr out = address(plan_->kernels[k].out) + half;
  if (!rest) return;
  if (before) dev_.copy(kept_, out, rest);
  else dev_.copy(out, kept_, rest);
}

void Executor::capture_group(int k) {
  const kir::Kernel& kern = plan_->kernels[k];
  const kir::Buffer& buf = plan_->buffers[kern.out];
  Tensor t(buf.dtype, buf.shape);
  if (buf.bytes()) dev_.download(t.bytes.data(), address(kern.out), buf.bytes());
  dev_.synchronize();
  captured_values_.push_back({kern.name, kern.nodes, buf.name, std::move(t)});
}

void Executor::guard_regions() {
  for (const DeviceLayout::Region& r : layout_.regions) {
    fill(base(r.constant) + r.at - layout_.guard, kSentinelByte, static_cast<size_t>(layout_.guard));
    fill(base(r.constant) + r.at + r.bytes, kSentinelByte, static_cast<size_t>(layout_.guard));
  }
}

// Fills temporaries whose last reader just ran with NaN, so a stale read shows.
void Executor::poison_dead(int k) {
  for (size_t b = 0; b < plan_->buffers.size(); ++b)
    if (plan_->buffers[b].kind == kir::Buffer::Temp && mem_->offset[b] >= 0 && mem_->last[b] == k)
      fill(address(static_cast<int>(b)), kPoisonByte, plan_->buffers[b].bytes());
}

void Executor::upload_constants() {
  UploadBatch batch(staging(), dev_, skip_staging_wait(), true);
  for (size_t b = 0; b < plan_->buffers.size(); ++b)
    if (plan_->buffers[b].kind == kir::Buffer::Constant)
      batch.upload(address(static_cast<int>(b)), plan_->buffers[b].data->bytes.data(), plan_->buffers[b].bytes());
}

std::vector<Tensor> Executor::read_outputs() {
  std::vector<Tensor> outs;
  outs.reserve(plan_->outputs.size());  // downloads complete later, into these very tensors
  for (int b : plan_->outputs) {
    const kir::Buffer& buf = plan_->buffers[b];
    outs.emplace_back(buf.dtype, buf.shape);
    if (buf.bytes()) dev_.download(outs.back().bytes.data(), address(b), buf.bytes());
  }
  std::vector<int64_t> counts(plan_->checks.size());  // read with the outputs, one wait for all
  for (size_t k = 0; k < counts.size(); ++k) dev_.download(&counts[k], address(plan_->checks[k].buf), sizeof counts[k]);
  dev_.synchronize();  // before the host reads
  if (opts_.checked) check_guards();
  kir::require_checks_pass(*plan_, counts);
  return outs;
}

void Executor::check_guards() {
  for (const DeviceLayout::Region& r : layout_.regions)
    for (int64_t at : {r.at - layout_.guard, r.at + r.bytes})
      for (unsigned char c : read_back(base(r.constant) + at, static_cast<size_t>(layout_.guard)))
        if (c != kSentinelByte) throw Error(target_ + ": a kernel wrote out of bounds of the " + r.what);
}

std::vector<unsigned char> Executor::read_back(DevicePtr from, size_t bytes) {
  std::vector<unsigned char> host(bytes);
  if (bytes) dev_.download(host.data(), from, bytes);
  dev_.synchronize();
  return host;
}

void Executor::fill(DevicePtr at, unsigned char byte, size_t bytes) {
  if (bytes) dev_.fill(at, byte, bytes);
}

bool Executor::has_launches() const {
  for (const kir::Kernel& k : plan_->kernels)
    if (plan_->buffers[k.out].numel() > 0) return true;
  return false;
}

bool Executor::skip_staging_wait() const { return opts_.fault && opts_.fault->skip_staging_wait(); }

StagingPool& Executor::staging() { return staging_pool(dev_.key(), opts_.staging_slots, opts_.staging_slot_bytes); }

}  // namespace lockstep
