// The reference interpreter against independent computations of a small VITS decoder side
// (tools/torch/vits_reference.py, run on the GPU machine): PyTorch in float64 and ONNX Runtime
// in float32, on graphs written by both PyTorch exporters (TorchScript opset 17, dynamo IR 10).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <ostream>
#include <string>

#include "core/tensor.h"
#include "frontend/npy.h"
#include "frontend/onnx_import.h"
#include "ref/interpreter.h"

namespace lockstep {
namespace {

const std::string kDir = std::string(LOCKSTEP_TEST_DATA) + "/torch/";

// float64 vs float64 with a different summation order: differences are ~1e-15.
constexpr double kTorchF64Tol = 1e-9;
// ONNX Runtime's float32 result lands ~4e-7 from float64 on this graph.
constexpr double kOrtF32Tol = 1e-5;

// ||a - r|| / ||r||, written out here so the check does not rest on the code under test.
double rel_l2(const RefTensor& a, const RefTensor& r) {
  double num = 0, den = 0;
  for (int64_t k = 0; k < r.numel(); ++k) {
    double d = a.get(k) - r.get(k);
    num += d * d;
    den += r.get(k) * r.get(k);
  }
  return std::sqrt(num / den);
}

const Graph& graph_for(const std::string& exporter) {
  static std::map<std::string, Graph> cache;
  auto it = cache.find(exporter);
  if (it == cache.end())
    it = cache.emplace(exporter, load_onnx(kDir + "vits_small_" + exporter + ".onnx")).first;
  return it->second;
}

struct Case {
  std::string exporter;  // "ts" or "dynamo"
  std::string inputs;    // "sine64" or "halfmask37"
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.exporter << "/" << c.inputs; }

class TorchReference : public ::testing::TestWithParam<Case> {};

TEST_P(TorchReference, MatchesPyTorchFloat64AndOrtFloat32) {
  const Case& c = GetParam();
  const Graph& g = graph_for(c.exporter);
  TensorMap feeds;
  for (const char* name : {"z_p", "y_mask"})
    feeds[name] = read_npy(kDir + c.inputs + "_" + name + ".npy");
  ASSERT_EQ(feeds["z_p"].dtype, DType::f32);

  std::vector<RefTensor> outs = run_reference(g, feeds);
  ASSERT_EQ(outs.size(), g.outputs.size());
  ASSERT_EQ(outs.size(), 2u);
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string& name = g.values[g.outputs[k]].name;
    SCOPED_TRACE(c.exporter + " " + c.inputs + " output " + name);
    RefTensor torch64 = to_ref(read_npy(kDir + c.inputs + "_torch_f64_" + name + ".npy"));
    RefTensor ort32 = to_ref(read_npy(kDir + c.inputs + "_ort_" + c.exporter + "_" + name + ".npy"));
    ASSERT_EQ(torch64.dtype, DType::f64);
    ASSERT_EQ(ort32.dtype, DType::f32);
    ASSERT_EQ(outs[k].shape, torch64.shape);
    ASSERT_EQ(outs[k].shape, ort32.shape);
    EXPECT_LE(rel_l2(outs[k], torch64), kTorchF64Tol);
    EXPECT_LE(rel_l2(outs[k], ort32), kOrtF32Tol);
    // The two independent results agree with each other too (guards the committed data).
    EXPECT_LE(rel_l2(ort32, torch64), kOrtF32Tol);
  }
}

INSTANTIATE_TEST_SUITE_P(Vits, TorchReference,
                         ::testing::Values(Case{"ts", "sine64"}, Case{"ts", "halfmask37"},
                                           Case{"dynamo", "sine64"}, Case{"dynamo", "halfmask37"}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.exporter + "_" + info.param.inputs;
                         });

// The halfmask set zeroes the mask after frame 19: the audio must be exactly 0 past 19*16.
TEST(TorchReference, MaskedAudioIsZero) {
  const Graph& g = graph_for("ts");
  TensorMap feeds;
  for (const char* name : {"z_p", "y_mask"})
    feeds[name] = read_npy(kDir + "halfmask37_" + name + ".npy");
  std::vector<RefTensor> outs = run_reference(g, feeds);
  int audio = g.values[g.outputs[0]].name == "audio" ? 0 : 1;
  const RefTensor& a = outs[audio];
  ASSERT_EQ(a.numel(), 37 * 16);
  for (int64_t k = 19 * 16; k < a.numel(); ++k) ASSERT_EQ(a.f[k], 0.0) << "sample " << k;
}

}  // namespace
}  // namespace lockstep
