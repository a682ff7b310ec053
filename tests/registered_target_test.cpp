// A target registered from this file alone, as a new backend would register itself: a
// cpu-backed device that opens on a thread alongside the compile (as cuda's does), whose queue
// runs on another thread, whose uploads complete late, and which poisons a staging block when
// it is written again. The shared runtime must stay exact on it
// (the per-target suites run on it too), and the planted staging race must be localised on it
// to stage `constants`. Nothing outside this file names it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "backend/registry.h"
#include "graph/builder.h"
#include "runtime/staging_pool.h"
#include "runtime/target.h"
#include "test_util.h"
#include "verify/bisect.h"
#include "verify/check.h"
#include "verify/parity.h"
#include "verify/planted_fault.h"
#include "vits.h"

namespace lockstep {
namespace {

const char* kLate = "late-cpu";

// The queue's state, shared with the fences it hands out (they may outlive the device).
struct Queue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> work;
  uint64_t queued = 0, done = 0;
  bool stop = false;
  void wait_for(uint64_t n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done >= n; });
  }
};

class QueueFence : public Fence {
 public:
  QueueFence(std::shared_ptr<Queue> q, uint64_t n) : q_(std::move(q)), n_(n) {}
  void wait() override { q_->wait_for(n_); }

 private:
  std::shared_ptr<Queue> q_;
  uint64_t n_;
};

// Every call is queued in order and run by a worker thread; an upload sleeps before it copies,
// so it reads its host memory long after upload() returned.
class LateDevice : public Device {
 public:
  explicit LateDevice(std::unique_ptr<Device> inner) : inner_(std::move(inner)), q_(std::make_shared<Queue>()) {
    worker_ = std::thread([q = q_] {
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock<std::mutex> lock(q->mu);
          q->cv.wait(lock, [&] { return q->stop || !q->work.empty(); });
          if (q->work.empty()) return;
          job = std::move(q->work.front());
          q->work.pop_front();
        }
        job();
        std::lock_guard<std::mutex> lock(q->mu);
        ++q->done;
        q->cv.notify_all();
      }
    });
  }
  ~LateDevice() override {
    synchronize();
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->stop = true;
    }
    q_->cv.notify_all();
    worker_.join();
  }
  std::string key() const override { return kLate; }
  void load(const std::string& code, const kir::Plan& plan, const std::vector<std::string>& entries) override {
    synchronize();
    inner_->load(code, plan, entries);
  }
  void bind(const std::vector<DevicePtr>& address) override {
    synchronize();
    inner_->bind(address);
  }
  DevicePtr allocate(size_t bytes) override { return inner_->allocate(bytes); }
  void free(DevicePtr p) override {
    synchronize();
    inner_->free(p);
  }
  // A block written again is poisoned first: a copy that reads it early sees NaN, not stale data.
  void host_write(HostBlock& block, const void* src, size_t bytes) override {
    if (!written_.insert(block.data).second) std::memset(block.data, 0xFF, block.bytes);
    Device::host_write(block, src, bytes);
  }
  void upload(DevicePtr dst, const void* src, size_t bytes) override {
    enqueue([this, dst, src, bytes] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      inner_->upload(dst, src, bytes);
    });
  }
  void download(void* dst, DevicePtr src, size_t bytes) override {
    enqueue([this, dst, src, bytes] { inner_->download(dst, src, bytes); });
  }
  void copy(DevicePtr dst, DevicePtr src, size_t bytes) override {
    enqueue([this, dst, src, bytes] { inner_->copy(dst, src, bytes); });
  }
  void fill(DevicePtr dst, unsigned char byte, size_t bytes) override {
    enqueue([this, dst, byte, bytes] { inner_->fill(dst, byte, bytes); });
  }
  void launch(int kernel) override {
    enqueue([this, kernel] { inner_->launch(kernel); });
  }
  std::shared_ptr<Fence> fence() override {
    std::lock_guard<std::mutex> lock(q_->mu);
    return std::make_shared<QueueFence>(q_, q_->queued);
  }
  void synchronize() override {
    uint64_t n;
    {
      std::lock_guard<std::mutex> lock(q_->mu);
      n = q_->queued;
    }
    q_->wait_for(n);
  }

 private:
  void enqueue(std::function<void()> job) {
    std::lock_guard<std::mutex> lock(q_->mu);
    q_->work.push_back(std::move(job));
    ++q_->queued;
    q_->cv.notify_all();
  }

  std::unique_ptr<Device> inner_;
  std::shared_ptr<Queue> q_;
  std::thread worker_;
  std::set<unsigned char*> written_;
};

// The cpu's compiler, counting its native compiles.
std::atomic<int> native_compiles{0};

class CountingCompiler : public CodeCompiler {
 public:
  explicit CountingCompiler(std::unique_ptr<CodeCompiler> inner) : inner_(std::move(inner)) {}
  std::string identity() override { return inner_->identity(); }
  std::string compile(const std::string& source) override {
    ++native_compiles;
    return inner_->compile(source);
  }

 private:
  std::unique_ptr<CodeCompiler> inner_;
};

// The registration: cpu's code generation and compiler, this file's device.
const bool registered = [] {
  TargetInfo t = *find_target("cpu");
  t.make_compiler = [cpu = t.make_compiler](const CompileOptions& o, const Device* d) -> std::unique_ptr<CodeCompiler> {
    return std::make_unique<CountingCompiler>(cpu(o, d));
  };
  t.name = kLate;
  t.summary = "test only: the cpu's kernels behind a late, asynchronous queue";
  t.make_device = [](const CompileOptions& o, std::string* why) -> std::unique_ptr<Device> {
    return std::make_unique<LateDevice>(find_target("cpu")->make_device(o, why));
  };
  t.opens_alongside = true;
  const char* cli = "runs the lockstep binary, which has only the built-in targets";
  const char* same_code = "the cpu's kernels: cpu runs the whole suite on them";
  t.skips = {{"CheckFaults", cli}, {"DecoderFaults", cli}, {"Conformance", same_code}, {"Harness", same_code}};
  register_target(std::move(t));
  return true;
}();

Graph cut174() { return vits::build_cut(vits::Config{}, {"/flow/flows.0/enc/in_layers.1/Conv"}); }

TEST(RegisteredTarget, IsListedAndCompilesLikeAnyTarget) {
  ASSERT_TRUE(registered);
  EXPECT_NE(target_names().find(kLate), std::string::npos);
  EXPECT_EQ(unavailable_reason(*find_target(kLate)), "");
  EXPECT_NE(testing::error_of([] { register_target(*find_target(kLate)); }).find("already registered"),
            std::string::npos);
  // A name becomes a cache folder: no path separators, dots or capitals.
  for (const char* bad : {"", "../x", "a/b", "GPU", "x."}) {
    TargetInfo t = *find_target("cpu");
    t.name = bad;
    EXPECT_NE(testing::error_of([&] { register_target(t); }).find("must be 1 to 32 of"), std::string::npos) << bad;
  }
  TargetInfo half = *find_target("cpu");
  half.name = "half-a-target";
  half.make_device = nullptr;
  EXPECT_NE(testing::error_of([&] { register_target(half); }).find("has no make_device"), std::string::npos);
  EXPECT_EQ(find_target("half-a-target"), nullptr);
}

// A program too large for this machine is refused before its native compile, also where the
// device opens alongside the compile, as cuda's does: on an H100 a doubling Concat to 16 GiB
// ran NVRTC for 100 s before the refusal. Here the chain doubles to a TiB.
TEST(RegisteredTarget, AProgramTooLargeIsRefusedBeforeItsNativeCompile) {
  GraphBuilder b;
  int v = b.input("x", DType::f32, {dim(1 << 24)});
  for (int k = 0; k < 14; ++k) v = b.op("Concat", "/cat" + std::to_string(k), {v, v}, {{"axis", attr_int(0)}});
  b.output(v);
  Graph g = b.finish();
  TensorMap in;
  in["x"] = Tensor(DType::f32, {1 << 24});
  CompileOptions o;
  o.use_cache = false;
  int before = native_compiles;
  std::string err = testing::error_of([&] { compile(g, kLate, o)->run(in); });
  EXPECT_NE(err.find("/cat"), std::string::npos) << err;
  EXPECT_NE(err.find("bytes"), std::string::npos) << err;
  EXPECT_EQ(native_compiles, before) << err;
}

// Parity with ref, the cpu's exact bytes (the same kernels), and determinism across compiles,
// the cache, and A-B-A, through check.
TEST(RegisteredTarget, AgreesWithRefAndCpuAndRepeatsBitForBit) {
  Graph g = cut174();
  TensorMap in = vits::seed_inputs(g, 1024);
  std::unique_ptr<Program> p = compile(g, kLate);
  std::vector<Tensor> late = p->run(in);
  // The device opened on its own thread and the compile waited for it once, before the native step.
  Program::CompileStats st = p->stats();
  EXPECT_TRUE(st.device_alongside);
  std::vector<std::string> phases;
  for (const auto& [name, ms] : st.phases_ms) phases.push_back(name);
  EXPECT_EQ(std::count(phases.begin(), phases.end(), "device"), 1) << ::testing::PrintToString(phases);
  std::vector<Tensor> cpu = compile(g, "cpu")->run(in);
  ASSERT_EQ(late.size(), cpu.size());
  for (size_t k = 0; k < late.size(); ++k) EXPECT_EQ(tensor_sha256(late[k]), tensor_sha256(cpu[k])) << k;
  CheckOptions o;
  o.targets = {kLate};
  o.fresh = 0;  // fresh processes run the lockstep binary, which lacks this target
  o.repeat = 3;
  Report r = run_check(g, in, o);
  EXPECT_TRUE(r.agree) << r.verdict;
  for (const StageRow& s : r.stages) EXPECT_NE(s.status, StageRow::Differ) << s.stage << ": " << s.detail;
}

// Uploads that complete late are safe because the pool waits for each slot's fence: a tiny
// pool reuses every slot many times and the bytes stay exact.
TEST(RegisteredTarget, LateUploadsThroughATinyPoolWaitAndStayExact) {
  Graph g = cut174();
  TensorMap in = vits::seed_inputs(g, 1024);
  std::string want = tensor_sha256(compile(g, "cpu")->run(in)[0]);
  CompileOptions tiny;
  tiny.staging_slots = 2;
  tiny.staging_slot_bytes = 512;
  StagingPool::Stats before = staging_pool(kLate, 2, 512).stats();
  EXPECT_EQ(tensor_sha256(compile(g, kLate, tiny)->run(in)[0]), want);
  StagingPool::Stats after = staging_pool(kLate, 2, 512).stats();
  EXPECT_GT(after.reuses - before.reuses, 20);
  EXPECT_EQ(after.waits - before.waits, after.reuses - before.reuses);
}

// The seed's bug on this device: bisect names stage constants and a constant of the model.
TEST(RegisteredTarget, StagingReuseIsLocalisedToTheConstantsStage) {
  Graph g = cut174();
  TensorMap in = vits::seed_inputs(g, 1024);
  BisectOptions o;
  o.target = kLate;
  o.by = BisectOptions::Stage;
  o.compile.fault = plant_fault("staging-reuse");
  o.compile.staging_slots = 4;  // the cut's uploads wrap a ring of 4
  Report r = run_bisect(g, in, o);
  EXPECT_FALSE(r.agree);
  const std::string head = "stage constants: resident bytes differ from the host after upload: '";
  ASSERT_EQ(r.verdict.rfind(head, 0), 0u) << r.verdict;
  std::string constant = r.verdict.substr(head.size(), r.verdict.find('\'', head.size()) - head.size());
  int v = g.find_value(constant);
  ASSERT_GE(v, 0) << constant;
  EXPECT_TRUE(g.values[v].initializer) << constant;
}

}  // namespace
}  // namespace lockstep
