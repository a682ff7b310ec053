// The staging pool every target uploads through: a tiny pool gives the same bytes and waits
// before every reuse, constants read back match the host, and the planted reuse race corrupts
// an upload that --verify-constants then names. On every registered target.
#include <gtest/gtest.h>

#include "backend/registry.h"
#include "core/error.h"
#include "runtime/staging_pool.h"
#include "test_util.h"
#include "verify/parity.h"
#include "verify/planted_fault.h"
#include "vits.h"

namespace lockstep {
namespace {

// The decoder at a short T: more than 200 weight tensors, quick to compile and run.
struct SmallDecoder {
  Graph g = vits::build([] {
    vits::Config c;
    c.part = vits::Part::decoder;
    c.dec.upsample_initial = 128;
    c.T = 64;
    return c;
  }());
  TensorMap in = vits::seed_inputs(g, 64);
};

const SmallDecoder& decoder() {
  static const SmallDecoder d;
  return d;
}

std::string sha_of_run(const std::string& target, const CompileOptions& o) {
  return tensor_sha256(compile(decoder().g, target, o)->run(decoder().in)[0]);
}

// The pool a program of `target` uploads through for this geometry.
StagingPool& pool_of(const std::string& target, int slots, size_t bytes) {
  std::string why;
  std::unique_ptr<Device> dev = find_target(target)->make_device(CompileOptions{}, &why);
  return staging_pool(dev->key(), slots, bytes);
}

LOCKSTEP_ON_EACH_TARGET(Staging);

TEST_P(Staging, TinyPoolGivesTheSameBytesAndWaitsBeforeEveryReuse) {
  size_t weights = 0;
  for (const Value& v : decoder().g.values) weights += v.initializer && v.initializer->numel() > 1;
  EXPECT_GT(weights, 200u);
  std::string want = sha_of_run(GetParam(), CompileOptions{});
  CompileOptions tiny;
  tiny.staging_slots = 2;
  tiny.staging_slot_bytes = 4096;  // most weights are larger: chunked through two slots
  StagingPool& pool = pool_of(GetParam(), 2, 4096);
  StagingPool::Stats before = pool.stats();
  EXPECT_EQ(sha_of_run(GetParam(), tiny), want);
  StagingPool::Stats after = pool.stats();
  EXPECT_GT(after.reuses - before.reuses, 200);
  EXPECT_EQ(after.waits - before.waits, after.reuses - before.reuses);
  EXPECT_EQ(after.allocated, 2);
  // A second compile in the same process, with the ring mid-way, is still exact.
  EXPECT_EQ(sha_of_run(GetParam(), tiny), want);
}

// A slot's host block fits what it staged: pinning a full slot for each small bias made a
// decoder's load pin 256 MiB.
TEST_P(Staging, SlotsHoldOnlyWhatTheyStaged) {
  size_t staged = 0;
  for (const Value& v : decoder().g.values)
    if (v.initializer) staged += v.initializer->bytes.size();
  for (const auto& [name, t] : decoder().in) staged += t.bytes.size();
  CompileOptions o;
  o.staging_slot_bytes = (size_t{4} << 20) + 1;  // a pool of its own, the default's size
  StagingPool& pool = pool_of(GetParam(), o.staging_slots, o.staging_slot_bytes);
  EXPECT_EQ(sha_of_run(GetParam(), o), sha_of_run(GetParam(), CompileOptions{}));
  StagingPool::Stats s = pool.stats();
  EXPECT_EQ(s.allocated, o.staging_slots);  // more than 200 tensors went round the ring
  // Each block is at most twice its largest chunk, or the smallest block.
  EXPECT_LE(s.host_bytes, static_cast<int64_t>(2 * staged) + o.staging_slots * (int64_t{64} << 10));
  EXPECT_LT(s.host_bytes, static_cast<int64_t>(o.staging_slots) * (int64_t{4} << 20) / 4);
}

TEST_P(Staging, ConstantsReadBackMatchTheHostBytes) {
  CompileOptions o;
  o.staging_slots = 3;
  o.staging_slot_bytes = 1000;  // chunks that do not divide any tensor evenly
  o.verify_constants = true;    // throws on a mismatch
  auto p = compile(decoder().g, GetParam(), o);
  p->prepare(decoder().in);
  std::vector<Program::ConstantCheck> checks = p->check_constants();
  EXPECT_GT(checks.size(), 200u);
  for (const auto& c : checks) EXPECT_EQ(c.resident_sha256, c.host_sha256) << c.value;
}

// The fault docs/why.md describes: slots rewritten before their copies ran. The output goes
// wrong and --verify-constants names a corrupted constant.
TEST_P(Staging, ReuseFaultCorruptsAndVerifyConstantsCatchesIt) {
  std::string want = sha_of_run(GetParam(), CompileOptions{});
  CompileOptions o;
  o.staging_slots = 2;
  o.staging_slot_bytes = 4096;
  o.fault = plant_fault("staging-reuse");
  EXPECT_NE(sha_of_run(GetParam(), o), want);
  o.verify_constants = true;
  try {
    compile(decoder().g, GetParam(), o)->prepare(decoder().in);
    FAIL() << "expected the corrupted upload to be reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("differs from the host bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// One-byte slots: every byte of the weights is a copy of its own. metal-sim aborted in 5 runs
// of 6 (an exception from its queue's thread: mappings exhausted by the byte copies waiting
// in uncounted command buffers); now at most 64 are in flight, and the bytes are the default's.
TEST_P(Staging, OneByteSlotsGiveTheDefaultBytesEveryRun) {
  vits::Config c;
  c.T = 16;
  c.flow.channels = 8;
  c.flow.hidden = 8;
  c.flow.layers = 2;
  c.flow.flows = 1;
  Graph g = vits::build(c);
  TensorMap in = vits::seed_inputs(g, 16);
  std::string want = tensor_sha256(compile(g, GetParam())->run(in)[0]);
  CompileOptions o;
  o.staging_slots = 1;
  o.staging_slot_bytes = 1;
  for (int k = 0; k < 2; ++k) EXPECT_EQ(tensor_sha256(compile(g, GetParam(), o)->run(in)[0]), want) << k;
}

// A tensor that would go up in more than kMaxChunks copies is refused, naming the option.
TEST(StagingPool, SlotsTooSmallForATensorAreAnErrorNamingTheOption) {
  Graph g = decoder().g;
  CompileOptions o;
  o.staging_slot_bytes = 2;
  std::string e = testing::error_of([&] { compile(g, "cpu", o)->run(decoder().in); });
  EXPECT_NE(e.find("--staging-slot-bytes 2"), std::string::npos) << e;
}

}  // namespace
}  // namespace lockstep
