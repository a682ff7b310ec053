// The public header alone is enough to load a model, compile it, run it and judge the result:
// this file includes nothing of lockstep but <lockstep/lockstep.h>.
#include <gtest/gtest.h>
#include <lockstep/lockstep.h>

#include <string>

TEST(PublicApi, APyTorchExportRunsOnCpuAndAgreesWithPyTorchFloat64) {
  const std::string dir = std::string(LOCKSTEP_TEST_DATA) + "/torch/";
  lockstep::Graph g = lockstep::load_onnx(dir + "vits_small_ts.onnx");
  lockstep::TensorMap feeds;
  for (const char* name : {"z_p", "y_mask"}) feeds[name] = lockstep::read_npy(dir + "sine64_" + name + ".npy");
  auto program = lockstep::compile(g, "cpu");
  std::vector<lockstep::Tensor> outs = program->run(feeds);
  ASSERT_EQ(outs.size(), g.outputs.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string& name = g.values[g.outputs[k]].name;
    lockstep::RefTensor torch64 = lockstep::to_ref(lockstep::read_npy(dir + "sine64_torch_f64_" + name + ".npy"));
    lockstep::Agreement a = lockstep::compare(lockstep::to_ref(outs[k]), torch64);
    EXPECT_TRUE(lockstep::agrees(a)) << name;
  }
  EXPECT_THROW(lockstep::compile(g, "no-such-target"), lockstep::Error);
}

TEST(PublicApi, TheRegistryListsTheBuiltInTargets) {
  std::vector<std::string> names;
  for (const lockstep::TargetInfo* t : lockstep::targets()) names.push_back(t->name);
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0], "ref");
  EXPECT_EQ(names[1], "cpu");
  EXPECT_EQ(names[2], "cuda");
  EXPECT_EQ(lockstep::unavailable_reason(*lockstep::find_target("cpu")), "");
  EXPECT_EQ(lockstep::default_target(), "cpu");
}
