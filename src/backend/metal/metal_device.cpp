#include "backend/metal/metal_device.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>

#include "backend/metal/metal_shared.h"
#include "codegen/gpu_printer.h"
#include "core/error.h"
#include "runtime/device_toolkit.h"

namespace lockstep::metal {

namespace {

constexpr size_t kMaxGroups = size_t{1} << 20;           // a grid-stride loop covers the rest
constexpr size_t kByteGroup = 256;
constexpr size_t kInFlight = 64;

using BufferP = std::shared_ptr<MetalBuffer>;

class BufferFence : public Fence {
 public:
  explicit BufferFence(std::shared_ptr<MetalCommandBuffer> cb) : cb_(std::move(cb)) {}
  void wait() override {
    if (cb_) cb_->wait_until_completed();
  }

 private:
  std::shared_ptr<MetalCommandBuffer> cb_;
};

struct Launch {
  std::shared_ptr<MetalPipeline> pipeline;
  std::vector<Binding> bindings;
  size_t groups = 0, threads = 0;  // 0 groups: nothing to launch
};

class MtlDevice : public Device {
 public:
  MtlDevice(MetalDriver& d, std::string target)
      : d_(d), target_(std::move(target)), q_(d.new_queue()), allocs_(target_) {
    dummy_ = d_.new_buffer(16);
  }
  ~MtlDevice() override {
    try {
      synchronize();
    } catch (...) {  // the error was the last run's to report
    }
  }
  std::string key() const override { return d_.key(); }
  bool host_memory() const override { return true; }  // unified memory, or the simulator's

  void load(const std::string& code, const kir::Plan& plan, const std::vector<std::string>& entries) override;
  void bind(const std::vector<DevicePtr>& address) override;

  DevicePtr allocate(size_t bytes) override { return allocs_.add(d_.new_buffer(std::max<size_t>(bytes, 1)), bytes); }
  void free(DevicePtr p) override {  // queued work keeps its buffers alive
    BufferP b;
    allocs_.take(p, b);
  }

  HostBlock host_alloc(size_t bytes) override {
    BufferP b = d_.new_buffer(std::max<size_t>(bytes, 1));
    add_staging(b);
    return {b->contents(), bytes, drop_staging};
  }
  void host_write(HostBlock& block, const void* src, size_t bytes) override {
    auto [b, at] = staged(block.data, bytes);
    if (b) b->write(at, src, bytes);
    else Device::host_write(block, src, bytes);
  }

  void upload(DevicePtr dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    auto [to, to_at] = allocs_.resolve(dst, bytes);
    auto [from, from_at] = staged(src, bytes);
    if (!from) {  // not a staging block: its bytes are copied now
      from = d_.new_buffer(bytes);
      from->write(0, src, bytes);
      from_at = 0;
    }
    blit(from, from_at, to, to_at, bytes);
  }
  void download(void* dst, DevicePtr src, size_t bytes) override {
    if (!bytes) return;
    auto [from, at] = allocs_.resolve(src, bytes);
    BufferP back = d_.new_buffer(bytes);
    blit(from, at, back, 0, bytes);
    reads_.push_back({dst, back, bytes});
  }
  void copy(DevicePtr dst, DevicePtr src, size_t bytes) override {
    if (!bytes) return;
    auto [to, to_at] = allocs_.resolve(dst, bytes);
    auto [from, from_at] = allocs_.resolve(src, bytes);
    blit(from, from_at, to, to_at, bytes);
  }
  void fill(DevicePtr dst, unsigned char byte, size_t bytes) override;
  void launch(int k) override {
    const Launch& l = launches_[static_cast<size_t>(k)];
    if (l.groups) open().dispatch(l.pipeline, l.bindings, l.groups, l.threads);
  }
  std::shared_ptr<Fence> fence() override {
    commit();
    return std::make_shared<BufferFence>(last_);
  }
  void synchronize() override;

 private:
  struct Read {
    void* dst;
    BufferP from;
    size_t bytes;
  };

  MetalCommandBuffer& open() {
    if (!open_) open_ = q_->command_buffer();
    return *open_;
  }
  // Metal keeps at most 64 command buffers of a queue in flight; so does this device, which
  // also bounds the buffers waiting ones hold (a 1-byte staging slot's millions of byte copies
  // exhausted metal-sim's mappings).
  void commit() {
    if (!open_) return;
    open_->commit();
    committed_.push_back(open_);
    last_ = std::move(open_);
    open_.reset();
    while (committed_.size() > kInFlight) retire(committed_.front());
  }
  void retire(std::shared_ptr<MetalCommandBuffer> cb) {
    committed_.pop_front();
    cb->wait_until_completed();
    if (failed_.empty() && cb->status() == MetalCommandBuffer::Status::Error) failed_ = cb->error();
  }
  void blit(const BufferP& from, size_t from_at, const BufferP& to, size_t to_at, size_t bytes);
  void bytes_kernel(const char* name, std::vector<Binding> b, size_t n, uint64_t value);
  void check_plan_info(const kir::Plan& plan);
  void validate(const kir::Kernel& k, const Launch& l) const;
  std::string nodes_of(const std::string& error) const;
  std::vector<std::string> entries_;  // the function that runs each kernel of plan_

  MetalDriver& d_;
  std::string target_;
  std::unique_ptr<MetalQueue> q_;
  BufferP dummy_;  // bound where the plan has a buffer nowhere (0 bytes)
  AddressMap<BufferP> allocs_;
  std::shared_ptr<MetalCommandBuffer> open_, last_;
  std::deque<std::shared_ptr<MetalCommandBuffer>> committed_;  // not yet checked for errors
  std::string failed_;  // the first error of one retired early, reported at the next synchronize
  std::vector<Read> reads_;
  std::shared_ptr<MetalLibrary> library_, bytes_;
  std::string code_sha_;
  const kir::Plan* plan_ = nullptr;
  std::vector<Launch> launches_;
};

void MtlDevice::blit(const BufferP& from, size_t from_at, const BufferP& to, size_t to_at, size_t bytes) {
  if (from_at % 4 == 0 && to_at % 4 == 0 && bytes % 4 == 0) return open().copy(from, from_at, to, to_at, bytes);
  bytes_kernel("ls_copy_bytes", {{to, to_at, bytes}, {from, from_at, bytes}}, bytes, 0);
}

void MtlDevice::fill(DevicePtr dst, unsigned char byte, size_t bytes) {
  if (!bytes) return;
  auto [to, at] = allocs_.resolve(dst, bytes);
  if (at % 4 == 0 && bytes % 4 == 0) return open().fill(to, at, bytes, byte);
  bytes_kernel("ls_fill_bytes", {{to, at, bytes}}, bytes, byte);
}

// One of kByteKernels over `n` bytes; its last binding holds n and `value`.
void MtlDevice::bytes_kernel(const char* name, std::vector<Binding> b, size_t n, uint64_t value) {
  if (!bytes_) bytes_ = byte_kernels(d_, target_);
  BufferP args = d_.new_buffer(2 * sizeof(uint64_t));
  uint64_t words[2] = {n, value};
  args->write(0, words, sizeof words);
  b.push_back({args, 0, sizeof words});
  size_t groups = std::min((n + kByteGroup - 1) / kByteGroup, kMaxGroups);
  open().dispatch(pipeline_of(d_, *bytes_, "bytes", name), b, groups, kByteGroup);
}

void MtlDevice::load(const std::string& code, const kir::Plan& plan, const std::vector<std::string>& entries) {
  synchronize();
  launches_.clear();
  library_ = library_of(d_, code);
  code_sha_ = content_key(code);
  plan_ = &plan;
  check_plan_info(plan);
  entries_ = entries;
  for (const std::string& entry : entries_) launches_.push_back({pipeline_of(d_, *library_, code_sha_, entry), {}, 0, 0});
}

// The library must be the one built for this plan: a wrong one would index past buffers.
void MtlDevice::check_plan_info(const kir::Plan& plan) {
  size_t n = plan.buffers.size() + 1;
  BufferP out = d_.new_buffer(n * sizeof(int64_t)), room = d_.new_buffer(sizeof(int64_t));
  auto count = static_cast<int64_t>(n);
  room->write(0, &count, sizeof count);
  open().dispatch(pipeline_of(d_, *library_, code_sha_, "ls_plan_info"),
                  {{out, 0, n * sizeof(int64_t)}, {room, 0, sizeof count}}, 1, 1);
  synchronize();
  std::vector<int64_t> got(n);
  std::memcpy(got.data(), out->contents(), n * sizeof(int64_t));
  check_loaded_plan(target_, got, plan);
}

void MtlDevice::bind(const std::vector<DevicePtr>& address) {
  for (size_t k = 0; k < plan_->kernels.size(); ++k) {
    const kir::Kernel& kern = plan_->kernels[k];
    Launch& l = launches_[k];
    l.bindings.clear();
    for (int b : codegen::kernel_params(kern)) {
      size_t bytes = plan_->buffers[static_cast<size_t>(b)].bytes();
      if (!address[static_cast<size_t>(b)]) {
        l.bindings.push_back({dummy_, 0, 0});
        continue;
      }
      auto [buf, at] = allocs_.resolve(address[static_cast<size_t>(b)], bytes);
      l.bindings.push_back({buf, at, bytes});
    }
    l.threads = static_cast<size_t>(kern.schedule.group);
    l.groups = launch_groups(kern.schedule.threads, kern.schedule.group, kMaxGroups);
    validate(kern, l);
  }
}

void MtlDevice::validate(const kir::Kernel& k, const Launch& l) const {
  std::string why;
  size_t pipeline_max = l.pipeline->max_total_threads_per_threadgroup();
  size_t memory = l.pipeline->static_threadgroup_memory_length();
  if (l.threads < 1) why = "an empty threadgroup";
  else if (l.threads > d_.max_threads_per_threadgroup())
    why = std::to_string(l.threads) + " threads per threadgroup, the device allows " + std::to_string(d_.max_threads_per_threadgroup());
  else if (l.threads > pipeline_max)
    why = std::to_string(l.threads) + " threads per threadgroup, the pipeline allows " + std::to_string(pipeline_max);
  else if (memory > d_.max_threadgroup_memory_length())
    why = std::to_string(memory) + " bytes of threadgroup memory, the device has " + std::to_string(d_.max_threadgroup_memory_length());
  refuse_launch(target_, k, why);
}

// The ONNX nodes of the kernel an error names ("kernel k3: ..."), for the message; where
// other kernels run the same function (same code), theirs too, each after its kernel's name.
std::string MtlDevice::nodes_of(const std::string& error) const {
  if (!plan_ || entries_.size() != plan_->kernels.size()) return "";
  std::string found;
  int sharing = 0;
  for (size_t k = 0; k < entries_.size(); ++k) {
    if (error.rfind("kernel " + entries_[k] + ":", 0) != 0) continue;
    const kir::Kernel& kern = plan_->kernels[k];
    found += (sharing++ ? "; " : "") + (kern.name == entries_[k] ? "" : kern.name + ", same code: ") +
             (kern.nodes.empty() ? "none" : kir::node_list(kern));
  }
  return found.empty() ? "" : " (ONNX nodes: " + found + ")";
}

// Commits what is open, waits for every committed command buffer, reports the first that
// failed, then hands the downloads their bytes.
void MtlDevice::synchronize() {
  commit();
  while (!committed_.empty()) retire(committed_.front());
  std::string failed = std::move(failed_);
  failed_.clear();
  std::vector<Read> reads = std::move(reads_);
  reads_.clear();
  if (!failed.empty()) throw Error(target_ + ": " + failed + nodes_of(failed));
  for (const Read& r : reads) std::memcpy(r.dst, r.from->contents(), r.bytes);
}

}  // namespace

std::unique_ptr<Device> make_device(MetalDriver& d, const std::string& target) {
  return std::make_unique<MtlDevice>(d, target);
}

}  // namespace lockstep::metal
