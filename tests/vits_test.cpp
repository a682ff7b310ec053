// The VITS generator: the issue's 174/170-node cuts, structure for other sizes, and the flow's
// numbers against an independent loop implementation of VITS's ResidualCouplingBlock.reverse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>

#include "core/error.h"
#include "emitter.h"
#include "frontend/npy.h"
#include "frontend/onnx_import.h"
#include "graph/cut.h"
#include "ops/infer.h"
#include "ref/interpreter.h"
#include "vits.h"

using namespace lockstep;

namespace {

vits::Config seed_config() {
  vits::Config c;  // hidden 72, channels 128, kernel 5, 4 layers, 4 flows, T 1024
  c.part = vits::Part::flow;
  return c;
}

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> n;
  for (const Node& node : g.nodes) ++n[node.op_type];
  return n;
}

const Node* node_named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::vector<int64_t> int_values(const Graph& g, int v) {
  const Tensor& t = *g.values[v].initializer;
  EXPECT_EQ(t.dtype, DType::i64);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

Shape inferred_output(const Graph& g, int k = 0) {
  GraphTypes gt = infer_graph(g);
  return gt.type[g.outputs[k]].dims;
}

}  // namespace

// The graph of the issue: numbers from the user's report, not from this generator.
TEST(Vits, SeedCutAtInLayer1Has174Nodes) {
  Graph g = vits::build_cut(seed_config(), {"/flow/flows.0/enc/in_layers.1/Conv"});
  EXPECT_EQ(g.nodes.size(), 174u);
  std::map<std::string, int> want{{"Conv", 34}, {"Slice", 49}, {"Mul", 36}, {"Add", 19}, {"Tanh", 13},
                                  {"Sigmoid", 13}, {"Split", 4}, {"Sub", 3}, {"Concat", 3}};
  EXPECT_EQ(op_counts(g), want);
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.values[g.inputs[0]].name, "z_p");
  EXPECT_EQ(g.values[g.inputs[0]].type.dims, (Shape{1, 128, 1024}));
  EXPECT_EQ(g.values[g.inputs[1]].name, "y_mask");
  EXPECT_EQ(g.values[g.inputs[1]].type.dims, (Shape{1, 1, 1024}));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.values[g.outputs[0]].producer, static_cast<int>(g.nodes.size()) - 1);
  EXPECT_EQ(g.nodes.back().name, "/flow/flows.0/enc/in_layers.1/Conv");
  EXPECT_EQ(inferred_output(g), (Shape{1, 144, 1024}));
}

TEST(Vits, SeedCutAtResSkip0Has170Nodes) {
  Graph g = vits::build_cut(seed_config(), {"/flow/flows.0/enc/res_skip_layers.0/Conv"});
  EXPECT_EQ(g.nodes.size(), 170u);
  // 174 minus in_layers.1's Conv and the residual Slice, Add and mask Mul feeding it.
  std::map<std::string, int> want{{"Conv", 33}, {"Slice", 48}, {"Mul", 35}, {"Add", 18}, {"Tanh", 13},
                                  {"Sigmoid", 13}, {"Split", 4}, {"Sub", 3}, {"Concat", 3}};
  EXPECT_EQ(op_counts(g), want);
  EXPECT_EQ(inferred_output(g), (Shape{1, 144, 1024}));
}

TEST(Vits, FlowsRunInReverseOrderStartingWithAFlip) {
  Graph g = vits::build(seed_config());
  EXPECT_EQ(g.nodes.front().name, "/flow/flows.7/Slice");
  EXPECT_EQ(g.nodes[1].name, "/flow/flows.6/Split");
  EXPECT_EQ(g.nodes.back().name, "/flow/flows.0/Concat");
  EXPECT_EQ(g.values[g.outputs[0]].name, "z");
  for (const char* name : {"/flow/flows.6/pre/Conv", "/flow/flows.6/Mul", "/flow/flows.4/enc/in_layers.3/Conv",
                           "/flow/flows.2/enc/res_skip_layers.3/Conv", "/flow/flows.2/enc/Slice_5",
                           "/flow/flows.0/post/Conv", "/flow/flows.0/Sub", "/flow/flows.1/Slice"})
    EXPECT_NE(node_named(g, name), nullptr) << name;
  int w = g.find_value("flow.flows.0.enc.in_layers.1.weight");
  ASSERT_GE(w, 0);
  EXPECT_EQ(g.values[w].initializer->shape, (Shape{144, 72, 5}));
  int last = g.find_value("flow.flows.0.enc.res_skip_layers.3.weight");
  ASSERT_GE(last, 0);
  EXPECT_EQ(g.values[last].initializer->shape, (Shape{72, 72, 1}));  // the last layer has no residual half
  EXPECT_EQ(inferred_output(g), (Shape{1, 128, 1024}));
}

TEST(Vits, FlipIsSliceWithNegativeStepAsTorchOnnxWritesIt) {
  Graph g = vits::build(seed_config());
  const Node* flip = node_named(g, "/flow/flows.3/Slice");
  ASSERT_NE(flip, nullptr);
  ASSERT_EQ(flip->inputs.size(), 5u);
  EXPECT_EQ(int_values(g, flip->inputs[1]), std::vector<int64_t>{-1});
  EXPECT_EQ(int_values(g, flip->inputs[2]), std::vector<int64_t>{-std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(int_values(g, flip->inputs[3]), std::vector<int64_t>{1});
  EXPECT_EQ(int_values(g, flip->inputs[4]), std::vector<int64_t>{-1});
  const Node* split = node_named(g, "/flow/flows.6/Split");
  ASSERT_EQ(split->inputs.size(), 2u);
  EXPECT_EQ(int_values(g, split->inputs[1]), (std::vector<int64_t>{64, 64}));
  const Node* sigmoid_half = node_named(g, "/flow/flows.6/enc/Slice_1");
  EXPECT_EQ(int_values(g, sigmoid_half->inputs[1]), std::vector<int64_t>{72});
  EXPECT_EQ(int_values(g, sigmoid_half->inputs[2]), std::vector<int64_t>{std::numeric_limits<int64_t>::max()});
}

TEST(Vits, DilationRateGrowsPerLayerWithSamePadding) {
  vits::Config c = seed_config();
  c.flow.dilation_rate = 2;
  Graph g = vits::build(c);
  const Node* conv = node_named(g, "/flow/flows.0/enc/in_layers.2/Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attr("dilations")->ints, std::vector<int64_t>{4});
  EXPECT_EQ(conv->attr("pads")->ints, (std::vector<int64_t>{8, 8}));  // (5*4 - 4) / 2
  EXPECT_EQ(conv->attr("kernel_shape")->ints, std::vector<int64_t>{5});
  EXPECT_EQ(inferred_output(g), (Shape{1, 128, 1024}));
}

// Per coupling layer with n WaveNet layers: Conv pre+post+2n, Slice 2n gates + 2(n-1) res/skip,
// Mul pre+post+sub+out + n gates + (n-1) residual masks, Add 2(n-1); one flip Slice per flow.
TEST(Vits, FlowOpCountsFollowTheArchitecture) {
  for (int64_t n : {1, 2, 3}) {
    for (int64_t flows : {1, 2}) {
      vits::Config c = seed_config();
      c.flow = {8, 6, 3, 1, n, flows};
      c.T = 16;
      Graph g = vits::build(c);
      std::map<std::string, int> want{{"Conv", int(flows * (2 + 2 * n))}, {"Slice", int(flows * (1 + 4 * n - 2))},
                                      {"Mul", int(flows * (4 + 2 * n - 1))}, {"Tanh", int(flows * n)},
                                      {"Sigmoid", int(flows * n)}, {"Split", int(flows)}, {"Sub", int(flows)},
                                      {"Concat", int(flows)}};
      if (n > 1) want["Add"] = int(flows * 2 * (n - 1));
      EXPECT_EQ(op_counts(g), want) << "layers " << n << " flows " << flows;
    }
  }
}

TEST(Vits, SymbolicTimeAxis) {
  vits::Config c = seed_config();
  c.T = -1;
  Graph g = vits::build(c);
  EXPECT_EQ(g.values[g.inputs[0]].declared[2].symbol, "T");
  EXPECT_EQ(g.values[g.inputs[1]].declared[2].symbol, "T");
  EXPECT_EQ(inferred_output(g), (Shape{1, 128, -1}));
  std::vector<TypeInfo> bound{{DType::f32, true, {1, 128, 40}}, {DType::f32, true, {1, 1, 40}}};
  EXPECT_EQ(infer_graph(g, &bound).type[g.outputs[0]].dims, (Shape{1, 128, 40}));
}

// conv_pre + per stage 2 * |kernels| * |dilations| convs + conv_post; LeakyRelu per stage:
// its own, one shared by the resblocks' first unit (exporter CSE), 2 * |dilations| - 1 per
// resblock; plus the final one.
TEST(Vits, DecoderStructureAndAudioLength) {
  vits::Config c = seed_config();
  c.part = vits::Part::decoder;
  c.flow = {8, 6, 5, 1, 2, 2};
  c.dec.upsample_initial = 16;
  c.T = 8;
  Graph g = vits::build(c);
  std::map<std::string, int> ops = op_counts(g);
  EXPECT_EQ(ops["ConvTranspose"], 4);
  EXPECT_EQ(ops["Conv"], 2 * 6 + 1 + 4 * 18 + 1);
  EXPECT_EQ(ops["LeakyRelu"], 4 * (2 + 3 * 5) + 1);
  EXPECT_EQ(ops["Div"], 4);
  EXPECT_EQ(ops["Tile"], 1);
  EXPECT_EQ(ops["Tanh"], 2 * 2 + 1);
  const Node* up = node_named(g, "/dec/ups.1/ConvTranspose");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->attr("strides")->ints, std::vector<int64_t>{8});
  EXPECT_EQ(up->attr("pads")->ints, (std::vector<int64_t>{4, 4}));  // (16 - 8) / 2
  EXPECT_EQ(g.values[up->inputs[1]].initializer->shape, (Shape{8, 4, 16}));
  EXPECT_NE(node_named(g, "/dec/resblocks.11/convs1.2/Conv"), nullptr);
  EXPECT_EQ(node_named(g, "/dec/resblocks.11/convs1.2/Conv")->attr("dilations")->ints, std::vector<int64_t>{5});
  EXPECT_EQ(node_named(g, "/dec/LeakyRelu_4")->attr("alpha")->f, static_cast<double>(0.01f));
  int post = g.find_value("dec.conv_post.weight");
  ASSERT_GE(post, 0);
  EXPECT_EQ(g.find_value("dec.conv_post.bias"), -1);
  EXPECT_EQ(g.values[g.outputs[0]].name, "audio");
  EXPECT_EQ(inferred_output(g), (Shape{1, 1, 8 * 256}));

  c.dynamo = true;
  std::map<std::string, int> dyn = op_counts(vits::build(c));
  EXPECT_EQ(dyn["Expand"], 1);
  EXPECT_EQ(dyn.count("Tile"), 0u);
}

TEST(Vits, WeightsDependOnSeedAndNameOnly) {
  Tensor a = vits::normal_tensor(7, "dec.ups.0.weight", {4096}, 0.1);
  Tensor b = vits::normal_tensor(7, "dec.ups.0.weight", {4096}, 0.1);
  Tensor c = vits::normal_tensor(8, "dec.ups.0.weight", {4096}, 0.1);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_NE(a.bytes, c.bytes);
  // The flow's parameters are the same whether the flow is built alone or inside the decoder.
  vits::Config flow = seed_config();
  flow.T = 4;
  vits::Config dec = flow;
  dec.part = vits::Part::decoder;
  dec.dec.upsample_initial = 16;
  Graph gf = vits::build(flow), gd = vits::build(dec);
  const char* w = "flow.flows.2.enc.in_layers.3.weight";
  EXPECT_EQ(gf.values[gf.find_value(w)].initializer->bytes, gd.values[gd.find_value(w)].initializer->bytes);
  // N(0, 0.1): sample moments of 2^16 draws.
  Tensor big = vits::normal_tensor(0, "x", {1 << 16}, 0.1);
  double sum = 0, sq = 0;
  for (int64_t k = 0; k < big.numel(); ++k) {
    double v = big.data<float>()[k];
    sum += v;
    sq += v * v;
  }
  double mean = sum / big.numel(), sd = std::sqrt(sq / big.numel() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.002);  // 5 standard errors
  EXPECT_NEAR(sd, 0.1, 0.0015);
}

TEST(Vits, SeedInputsFollowTheIssueFormula) {
  vits::Config c = seed_config();
  c.T = 200;
  Graph g = vits::build(c);
  auto in = vits::seed_inputs(g, 200);
  const Tensor& z = in.at("z_p");
  EXPECT_EQ(z.shape, (Shape{1, 128, 200}));
  EXPECT_FLOAT_EQ(z.data<float>()[5 * 200 + 17], 0.5 * std::sin(2 * std::numbers::pi * (15 + 17) / 128.0));
  EXPECT_EQ(in.at("y_mask").data<float>()[199], 1.0f);
}

// ---- The flow's values against a plain-loop VITS implementation -------------------------

namespace {

using Mat = std::vector<std::vector<double>>;  // [channel][time]

struct Weights {
  const Graph& g;
  std::vector<double> get(const std::string& name) const {
    const Tensor& t = *g.values.at(g.find_value(name)).initializer;
    return std::vector<double>(t.data<float>(), t.data<float>() + t.numel());
  }
};

// nn.Conv1d, stride 1, zero padding `pad` on both sides.
Mat conv(const Mat& x, const Weights& w, const std::string& prefix, int64_t out, int64_t k, int64_t dil, int64_t pad) {
  std::vector<double> W = w.get(prefix + ".weight"), b = w.get(prefix + ".bias");
  int64_t in = x.size(), T = x[0].size();
  Mat y(out, std::vector<double>(T));
  for (int64_t o = 0; o < out; ++o)
    for (int64_t t = 0; t < T; ++t) {
      double s = b[o];
      for (int64_t i = 0; i < in; ++i)
        for (int64_t j = 0; j < k; ++j) {
          int64_t src = t + j * dil - pad;
          if (src >= 0 && src < T) s += W[(o * in + i) * k + j] * x[i][src];
        }
      y[o][t] = s;
    }
  return y;
}

Mat masked(Mat x, const std::vector<double>& m) {
  for (auto& row : x)
    for (size_t t = 0; t < row.size(); ++t) row[t] *= m[t];
  return x;
}

Mat rows(const Mat& x, size_t begin, size_t end) { return Mat(x.begin() + begin, x.begin() + end); }

// modules.WN.forward with g = None.
Mat wn(Mat x, const std::vector<double>& m, const Weights& w, const std::string& p, const vits::FlowSizes& s) {
  size_t h = s.hidden;
  Mat out;
  int64_t dil = 1;
  for (int64_t i = 0; i < s.layers; ++i, dil *= s.dilation_rate) {
    Mat a = conv(x, w, p + ".in_layers." + std::to_string(i), 2 * h, s.kernel, dil, (s.kernel * dil - dil) / 2);
    Mat acts(h, std::vector<double>(a[0].size()));
    for (size_t c = 0; c < h; ++c)
      for (size_t t = 0; t < a[0].size(); ++t) acts[c][t] = std::tanh(a[c][t]) / (1 + std::exp(-a[c + h][t]));
    bool last = i == s.layers - 1;
    Mat rs = conv(acts, w, p + ".res_skip_layers." + std::to_string(i), last ? h : 2 * h, 1, 1, 0);
    Mat skip = last ? rs : rows(rs, h, 2 * h);
    if (!last) {
      for (size_t c = 0; c < h; ++c)
        for (size_t t = 0; t < x[0].size(); ++t) x[c][t] = (x[c][t] + rs[c][t]) * m[t];
    }
    if (out.empty()) out = skip;
    else
      for (size_t c = 0; c < h; ++c)
        for (size_t t = 0; t < x[0].size(); ++t) out[c][t] += skip[c][t];
  }
  return masked(out, m);
}

// models.ResidualCouplingBlock.forward(reverse=True) with mean_only coupling layers.
Mat flow_reverse(Mat x, const std::vector<double>& m, const Weights& w, const vits::FlowSizes& s) {
  size_t half = s.channels / 2;
  for (int64_t f = s.flows - 1; f >= 0; --f) {
    std::reverse(x.begin(), x.end());  // torch.flip(x, [1])
    std::string p = "flow.flows." + std::to_string(2 * f);
    Mat x0 = rows(x, 0, half), x1 = rows(x, half, 2 * half);
    Mat h = masked(conv(x0, w, p + ".pre", s.hidden, 1, 1, 0), m);
    h = wn(h, m, w, p + ".enc", s);
    Mat mean = masked(conv(h, w, p + ".post", half, 1, 1, 0), m);
    for (size_t c = 0; c < half; ++c)
      for (size_t t = 0; t < m.size(); ++t) x1[c][t] = (x1[c][t] - mean[c][t]) * m[t];
    x = x0;
    x.insert(x.end(), x1.begin(), x1.end());
  }
  return x;
}

}  // namespace

TEST(Vits, FlowMatchesPlainVitsLoops) {
  vits::Config c = seed_config();
  c.flow = {6, 4, 5, 2, 3, 2};  // dilation rate 2 exercises dilated padding too
  c.T = 24;
  c.seed = 11;
  Graph g = vits::build(c);
  auto inputs = vits::seed_inputs(g, c.T);
  // Half the mask off, as padded batches have it.
  float* mask = inputs.at("y_mask").data<float>();
  for (int64_t t = 15; t < c.T; ++t) mask[t] = 0;
  RefTensor got = run_reference(g, inputs).at(0);
  ASSERT_EQ(got.shape, (Shape{1, 6, 24}));

  Mat z(6, std::vector<double>(24));
  std::vector<double> m(24);
  for (int64_t t = 0; t < 24; ++t) m[t] = mask[t];
  for (int64_t ch = 0; ch < 6; ++ch)
    for (int64_t t = 0; t < 24; ++t) z[ch][t] = inputs.at("z_p").data<float>()[ch * 24 + t];
  Mat want = flow_reverse(z, m, Weights{g}, c.flow);
  double err = 0, norm = 0;
  for (int64_t ch = 0; ch < 6; ++ch)
    for (int64_t t = 0; t < 24; ++t) {
      double d = got.f[ch * 24 + t] - want[ch][t];
      err += d * d;
      norm += want[ch][t] * want[ch][t];
    }
  EXPECT_GT(norm, 1.0);  // a real signal, not zeros
  EXPECT_LT(std::sqrt(err / norm), 1e-12);
}

// audio = dec(z * mask) * repeat_interleave(mask, hop): silent exactly where the mask is off.
TEST(Vits, DecoderAudioIsMaskedByTheUpsampledMask) {
  vits::Config c = seed_config();
  c.part = vits::Part::dec;
  c.flow.channels = 4;
  c.dec = {8, {2, 2}, {4, 4}, {3}, {1, 3}};
  c.T = -1;
  Graph g = vits::build(c);
  auto inputs = vits::seed_inputs(g, 6);
  inputs.at("y_mask").data<float>()[4] = 0;
  RefTensor audio = run_reference(g, inputs).at(0);
  ASSERT_EQ(audio.shape, (Shape{1, 1, 24}));
  for (int64_t k = 0; k < 24; ++k) {
    if (k / 4 == 4) EXPECT_EQ(audio.f[k], 0.0) << k;
    else EXPECT_NE(audio.f[k], 0.0) << k;
    EXPECT_LT(std::abs(audio.f[k]), 1.0);
  }
}

TEST(Vits, RejectsSizesTheArchitectureCannotTake) {
  vits::Config c = seed_config();
  c.flow.channels = 7;
  EXPECT_THROW(vits::build(c), Error);
  c = seed_config();
  c.part = vits::Part::dec;
  c.dec.kernels = {16, 15, 4, 4};
  EXPECT_THROW(vits::build(c), Error);
}

// ---- Against the graphs PyTorch itself exported (tests/data/torch, tools/torch) -------------

namespace {

const std::string kTorchDir = std::string(LOCKSTEP_TEST_DATA) + "/torch/";

// tools/torch/vits_reference.py's CONFIG.
vits::Config torch_reference_config(bool dynamo, vits::Part part) {
  vits::Config c;
  c.part = part;
  c.flow = {16, 16, 5, 1, 4, 4};
  c.dec = {16, {4, 4}, {8, 8}, {3, 7, 11}, {1, 3, 5}};
  c.T = -1;
  c.dynamo = dynamo;
  c.constant_nodes = !dynamo;
  return c;
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}

// Node k of `mine` matches node k of `real`: op, attributes, and inputs wired to the matching
// values (parameters by name and shape, other constants by value).
void expect_isomorphic(const Graph& real, const Graph& mine) {
  ASSERT_EQ(real.nodes.size(), mine.nodes.size());
  std::map<int, int> to_mine;
  for (size_t k = 0; k < real.inputs.size(); ++k) to_mine[real.inputs[k]] = mine.find_value(real.values[real.inputs[k]].name);
  for (size_t n = 0; n < real.nodes.size(); ++n) {
    const Node &r = real.nodes[n], &m = mine.nodes[n];
    std::string what = "node " + std::to_string(n) + " " + r.name + " / " + m.name;
    ASSERT_EQ(r.op_type, m.op_type) << what;
    if (r.name.rfind("/dec/", 0) == 0) {  // the flow's scopes differ in the reference script
      EXPECT_EQ(r.name, m.name);
    }
    ASSERT_EQ(r.inputs.size(), m.inputs.size()) << what;
    for (size_t k = 0; k < r.inputs.size(); ++k) {
      const Value &rv = real.values[r.inputs[k]], &mv = mine.values[m.inputs[k]];
      if (!rv.initializer) {
        EXPECT_EQ(to_mine.at(r.inputs[k]), m.inputs[k]) << what << " input " << k;
        continue;
      }
      ASSERT_TRUE(mv.initializer) << what << " input " << k;
      if (rv.name == mv.name) EXPECT_EQ(rv.initializer->shape, mv.initializer->shape) << what;
      else EXPECT_TRUE(same_tensor(*rv.initializer, *mv.initializer)) << what << " input " << k << " " << rv.name;
    }
    ASSERT_EQ(r.outputs.size(), m.outputs.size()) << what;
    for (size_t k = 0; k < r.outputs.size(); ++k) to_mine[r.outputs[k]] = m.outputs[k];
    EXPECT_EQ(r.attrs.size(), m.attrs.size()) << what;
    for (const auto& [key, a] : r.attrs) {
      const Attr* b = m.attr(key);
      ASSERT_NE(b, nullptr) << what << " lacks " << key;
      EXPECT_EQ(a.kind, b->kind) << what << " " << key;
      EXPECT_EQ(a.ints, b->ints) << what << " " << key;
      EXPECT_EQ(a.i, b->i) << what << " " << key;
      EXPECT_EQ(a.s, b->s) << what << " " << key;
      EXPECT_EQ(static_cast<float>(a.f), static_cast<float>(b->f)) << what << " " << key;
      if (a.t) {
        EXPECT_TRUE(b->t && same_tensor(*a.t, *b->t)) << what << " " << key;
      }
    }
  }
}

// Our graph with PyTorch's weights, so the numbers can be compared with its float64 run.
Graph with_weights_of(Graph g, const Graph& real) {
  for (Value& v : g.values) {
    if (!v.initializer) continue;
    int r = real.find_value(v.name);
    if (r >= 0 && real.values[r].initializer && real.values[r].initializer->shape == v.initializer->shape)
      v.initializer = real.values[r].initializer;
  }
  return g;
}

double rel_l2_to(const RefTensor& a, const Tensor& want64) {
  EXPECT_EQ(a.numel(), want64.numel());
  double num = 0, den = 0;
  for (int64_t k = 0; k < a.numel(); ++k) {
    double r = want64.data<double>()[k], d = a.f[k] - r;
    num += d * d;
    den += r * r;
  }
  return std::sqrt(num / den);
}

}  // namespace

TEST(Vits, SameGraphAsTorchScriptExporter) {
  Graph real = load_onnx(kTorchDir + "vits_small_ts.onnx");
  expect_isomorphic(real, vits::build(torch_reference_config(false, vits::Part::decoder)));
}

TEST(Vits, SameGraphAsDynamoExporter) {
  Graph real = load_onnx(kTorchDir + "vits_small_dynamo.onnx");
  expect_isomorphic(real, vits::build(torch_reference_config(true, vits::Part::decoder)));
}

// With PyTorch's weights our flow and decoder compute what PyTorch computed in float64.
TEST(Vits, MatchesPyTorchFloat64WithItsWeights) {
  Graph real = load_onnx(kTorchDir + "vits_small_ts.onnx");
  Graph flow = with_weights_of(vits::build(torch_reference_config(false, vits::Part::flow)), real);
  Graph decoder = with_weights_of(vits::build(torch_reference_config(false, vits::Part::decoder)), real);
  for (std::string set : {"sine64", "halfmask37"}) {
    TensorMap in{{"z_p", read_npy(kTorchDir + set + "_z_p.npy")}, {"y_mask", read_npy(kTorchDir + set + "_y_mask.npy")}};
    EXPECT_LT(rel_l2_to(run_reference(flow, in).at(0), read_npy(kTorchDir + set + "_torch_f64_z.npy")), 1e-9) << set;
    EXPECT_LT(rel_l2_to(run_reference(decoder, in).at(0), read_npy(kTorchDir + set + "_torch_f64_audio.npy")), 1e-9) << set;
  }
}
