#include "backend/metal/sim/sim_driver.h"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "backend/metal/sim/sim_compiler.h"
#include "backend/metal/sim/sim_dispatch.h"
#include "core/dirs.h"
#include "core/error.h"
#include "core/files.h"
#include "core/memory.h"
#include "core/sha256.h"
#include "frontend/npy.h"

namespace lockstep::metal::sim {

namespace {

using Clock = std::chrono::steady_clock;
// A committed command buffer runs this long after its commit unless someone waits for it:
// copies read their staging buffers late, as on a GPU.
constexpr auto kLate = std::chrono::milliseconds(1);

std::atomic<int64_t> poisoned{0}, dispatches{0}, guarded{0};

// The launcher's table row (sim_headers.cpp).
struct KernelRow {
  const char* name;
  RunFn run;
  void (*access)(char*);
  int barriers;
};

// A library is the shared object build() made, loaded once and never unloaded (as the cpu's).
class SimLibrary : public MetalLibrary {
 public:
  explicit SimLibrary(const std::string& code) {
    PrivateTempDir dir("lockstep-metal-sim");
    std::string so = (dir.path() / "program.so").string();
    write_file_atomic(so, code);
    void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) throw InternalError("internal: metal-sim: cannot load a library: " + std::string(dlerror() ? dlerror() : "?"));
    rows_ = static_cast<const KernelRow*>(dlsym(h, "ls_sim_kernels"));
    auto count = static_cast<const int*>(dlsym(h, "ls_sim_kernel_count"));
    if (!rows_ || !count) throw InternalError("internal: metal-sim: a library lacks the launcher's kernel table");
    count_ = *count;
  }
  std::shared_ptr<MetalPipeline> pipeline(const std::string& name) override {
    for (int k = 0; k < count_; ++k) {
      if (name != rows_[k].name) continue;
      std::string access(32, '-');
      rows_[k].access(access.data());
      return std::make_shared<SimPipeline>(name, rows_[k].run, access, rows_[k].barriers != 0);
    }
    throw Error("metal-sim: the library has no kernel function '" + name + "'");
  }

 private:
  const KernelRow* rows_ = nullptr;
  int count_ = 0;
};

class SimCommandBuffer;

struct QueueState {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<SimCommandBuffer>> work;
  uint64_t committed = 0, wanted = 0;  // sequence numbers: last committed, last waited for
  bool stop = false;
};

struct Command {
  enum Kind { Copy, Fill, Dispatch } kind = Copy;
  std::shared_ptr<MetalBuffer> from, to;
  size_t from_at = 0, to_at = 0, bytes = 0;
  unsigned char value = 0;
  std::shared_ptr<SimPipeline> pipeline;
  std::vector<Binding> bindings;
  size_t groups = 0, threads = 0;
};

SimBuffer& sim(const std::shared_ptr<MetalBuffer>& b) {
  auto* s = dynamic_cast<SimBuffer*>(b.get());
  if (!s) throw InternalError("internal: metal-sim: a buffer of another device");
  return *s;
}

// macOS's blit rules: offsets and sizes multiples of 4, inside the buffer.
void check_blit(const char* what, const std::shared_ptr<MetalBuffer>& b, size_t at, size_t bytes) {
  if (at % 4 || bytes % 4 || bytes == 0)
    throw InternalError(std::string("internal: metal-sim: a blit ") + what + " at offset " + std::to_string(at) + " of " +
                        std::to_string(bytes) + " bytes: macOS needs a non-zero size and offsets that are multiples of 4");
  if (at > sim(b).length() || bytes > sim(b).length() - at)
    throw InternalError(std::string("internal: metal-sim: a blit ") + what + " of " + std::to_string(bytes) +
                        " bytes at " + std::to_string(at) + " overruns its buffer of " + std::to_string(sim(b).length()));
}

class SimCommandBuffer : public MetalCommandBuffer, public std::enable_shared_from_this<SimCommandBuffer> {
 public:
  explicit SimCommandBuffer(std::shared_ptr<QueueState> q) : q_(std::move(q)) {}
  ~SimCommandBuffer() override {
    if (!ran_) release_readers();
  }
  void dispatch(const std::shared_ptr<MetalPipeline>& p, const std::vector<Binding>& buffers, size_t groups,
                size_t threads) override {
    encoding();
    auto sp = std::dynamic_pointer_cast<SimPipeline>(p);
    if (!sp) throw InternalError("internal: metal-sim: a pipeline of another device");
    check_dispatch(*sp, buffers, groups, threads);
    Command c;
    c.kind = Command::Dispatch;
    c.pipeline = sp, c.bindings = buffers, c.groups = groups, c.threads = threads;
    commands_.push_back(std::move(c));
  }
  void copy(const std::shared_ptr<MetalBuffer>& from, size_t from_at, const std::shared_ptr<MetalBuffer>& to,
            size_t to_at, size_t bytes) override {
    encoding();
    check_blit("copy from", from, from_at, bytes);
    check_blit("copy to", to, to_at, bytes);
    Command c;
    c.from = from, c.to = to, c.from_at = from_at, c.to_at = to_at, c.bytes = bytes;
    ++sim(from).readers;
    commands_.push_back(std::move(c));
  }
  void fill(const std::shared_ptr<MetalBuffer>& b, size_t at, size_t bytes, unsigned char value) override {
    encoding();
    check_blit("fill", b, at, bytes);
    Command c;
    c.kind = Command::Fill;
    c.to = b, c.to_at = at, c.bytes = bytes, c.value = value;
    commands_.push_back(std::move(c));
  }
  void commit() override {
    encoding();
    std::lock_guard<std::mutex> lock(q_->mu);
    seq_ = ++q_->committed;
    at_ = Clock::now();
    status_ = Status::Committed;
    q_->work.push_back(shared_from_this());
    q_->cv.notify_all();
  }
  void wait_until_completed() override {
    if (status_ == Status::Encoding) throw InternalError("internal: metal-sim: waiting on an uncommitted command buffer");
    std::unique_lock<std::mutex> lock(q_->mu);
    q_->wanted = std::max(q_->wanted, seq_);
    q_->cv.notify_all();
    q_->cv.wait(lock, [&] { return ran_; });
  }
  Status status() const override { return status_; }
  std::string error() const override { return error_; }

  uint64_t seq() const { return seq_; }
  Clock::time_point committed_at() const { return at_; }
  // On the queue's thread: every command in order, the rest skipped after one fails.
  void execute() {
    std::string failed;
    try {  // nothing escapes the queue's thread: an error fails the command buffer, as on Metal
      for (const Command& c : commands_) {
        if (!failed.empty()) break;
        if (c.kind == Command::Copy) std::memmove(c.to->contents() + c.to_at, c.from->contents() + c.from_at, c.bytes);
        if (c.kind == Command::Fill) std::memset(c.to->contents() + c.to_at, c.value, c.bytes);
        if (c.kind == Command::Dispatch) failed = run_dispatch(*c.pipeline, c.bindings, c.groups, c.threads);
      }
    } catch (const std::exception& e) {
      failed = e.what();
    }
    release_readers();
    error_ = failed;
    status_ = failed.empty() ? Status::Completed : Status::Error;
  }
  void finished() { ran_ = true; }  // under the queue's lock

 private:
  void encoding() const {
    if (status_ != Status::Encoding) throw InternalError("internal: metal-sim: encoding into a committed command buffer");
  }
  void release_readers() {
    for (Command& c : commands_)
      if (c.kind == Command::Copy && c.from) --sim(c.from).readers, c.from.reset();
  }

  std::shared_ptr<QueueState> q_;
  std::vector<Command> commands_;
  std::atomic<Status> status_{Status::Encoding};
  std::string error_;
  uint64_t seq_ = 0;
  Clock::time_point at_;
  bool ran_ = false;
};

class SimQueue : public MetalQueue {
 public:
  SimQueue() : q_(std::make_shared<QueueState>()) {
    worker_ = std::thread([q = q_] { work(*q); });
  }
  ~SimQueue() override {
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->stop = true;
    }
    q_->cv.notify_all();
    worker_.join();
  }
  std::shared_ptr<MetalCommandBuffer> command_buffer() override { return std::make_shared<SimCommandBuffer>(q_); }

 private:
  // Runs committed command buffers in order, each once it is kLate old or waited for; drains
  // what is left before it stops.
  static void work(QueueState& q) {
    std::unique_lock<std::mutex> lock(q.mu);
    for (;;) {
      q.cv.wait(lock, [&] { return q.stop || !q.work.empty(); });
      if (q.work.empty()) return;
      std::shared_ptr<SimCommandBuffer> cb = q.work.front();
      q.cv.wait_until(lock, cb->committed_at() + kLate, [&] { return q.stop || q.wanted >= cb->seq(); });
      q.work.pop_front();
      lock.unlock();
      cb->execute();
      lock.lock();
      cb->finished();
      q.cv.notify_all();
    }
  }

  std::shared_ptr<QueueState> q_;
  std::thread worker_;
};

class SimDriver : public MetalDriver {
 public:
  std::string device_name() const override { return "metal-sim (the MSL run on this CPU)"; }
  std::string key() const override { return "metal-sim"; }
  size_t max_threads_per_threadgroup() const override { return kMaxThreadsPerThreadgroup; }
  size_t max_threadgroup_memory_length() const override { return kMaxThreadgroupMemory; }
  std::shared_ptr<MetalBuffer> new_buffer(size_t bytes) override {
    require_memory(static_cast<int64_t>(std::min<size_t>(bytes, INT64_MAX)),
                   "metal-sim: a buffer of the program's memory");
    return std::make_shared<SimBuffer>(bytes);
  }
  std::unique_ptr<MetalQueue> new_queue() override { return std::make_unique<SimQueue>(); }
  std::string compiler_identity() override { return sim::compiler_identity(); }
  std::string build(const std::string& source) override { return sim::build(source); }
  // One load per distinct code in the process (never unloaded: dlopen would map it again).
  std::shared_ptr<MetalLibrary> library(const std::string& code) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& lib = loaded_[sha256_hex(code.data(), code.size())];
    if (!lib) lib = std::make_shared<SimLibrary>(code);
    return lib;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<MetalLibrary>> loaded_;
};

}  // namespace

Stats stats() { return {poisoned.load(), dispatches.load(), guarded.load()}; }
void count_poisoned_write() { ++poisoned; }
void count_dispatch(int64_t g) {
  ++dispatches;
  guarded += g;
}

}  // namespace lockstep::metal::sim

namespace lockstep::metal {

MetalDriver& sim_driver() {
  static auto* d = new sim::SimDriver;  // never destroyed: buffers and libraries outlive statics
  return *d;
}

}  // namespace lockstep::metal
