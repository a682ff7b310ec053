// The standard op cases: every supported op, with the attribute combinations the VITS family
// (1-D Conv, ConvTranspose, Slice/flip, Split, Concat, the gate) and real exporters use.
#include <cstdint>
#include <limits>
#include <optional>

#include "harness.h"

namespace lockstep {

namespace {

using In = OpCase::Input;
constexpr DType F = DType::f32;

OpCase unary(const std::string& op, double lo = -3, double hi = 3, Attrs attrs = {}) {
  return OpCase{op, op, {In{F, {2, 3, 17}, lo, hi}}, {}, std::move(attrs)};
}

OpCase binary(const std::string& op, Shape a, Shape b, DType t = F, double lo = -2, double hi = 2) {
  return OpCase{op + " " + shape_str(a) + "x" + shape_str(b) + " " + dtype_name(t),
                op,
                {In{t, a, lo, hi}, In{t, b, lo, hi}},
                {},
                {}};
}

OpCase conv1d(const std::string& name, int64_t cin, int64_t cout, int64_t k, int64_t t, Attrs attrs,
              int64_t group = 1) {
  OpCase c{name, "Conv", {In{F, {1, cin, t}}, In{F, {cout, cin / group, k}}, In{F, {cout}}}, {}, std::move(attrs)};
  if (group > 1) c.attrs["group"] = attr_int(group);
  return c;
}

OpCase slice(const std::string& name, Shape x, std::vector<int64_t> starts, std::vector<int64_t> ends,
             std::vector<int64_t> axes, std::vector<int64_t> steps) {
  return OpCase{name,
                "Slice",
                {In{F, x}},
                {{1, ints_tensor(starts)}, {2, ints_tensor(ends)}, {3, ints_tensor(axes)}, {4, ints_tensor(steps)}},
                {}};
}

void add_elementwise(std::vector<OpCase>& cs) {
  for (const char* op : {"Neg", "Abs", "Exp", "Tanh", "Sigmoid", "Relu", "Erf"}) cs.push_back(unary(op));
  cs.push_back(unary("Log", 0.01, 4));
  cs.push_back(unary("Sqrt", 0, 4));
  cs.push_back(unary("LeakyRelu", -3, 3, {{"alpha", attr_float(0.1)}}));
  for (const char* op : {"Add", "Sub", "Mul"}) {
    cs.push_back(binary(op, {1, 4, 33}, {1, 4, 33}));
    cs.push_back(binary(op, {1, 4, 33}, {1, 1, 33}));
    cs.push_back(binary(op, {2, 1, 5}, {3, 1}));
  }
  cs.push_back(binary("Add", {3, 7}, {7}, DType::i64, -100, 100));
  cs.push_back(binary("Mul", {3, 7}, {3, 7}, DType::i32, -100, 100));
  cs.push_back(binary("Div", {4, 9}, {4, 9}, F, 0.5, 2));
  cs.push_back(binary("Div", {4, 9}, {9}, DType::i32, 1, 50));
  cs.push_back(binary("Pow", {4, 9}, {1}, F, 0.5, 2));
  for (const char* op : {"Equal", "Less", "Greater"}) cs.push_back(binary(op, {3, 5}, {5}, DType::i64, -3, 3));
  cs.push_back(OpCase{"Where", "Where", {In{DType::boolean, {3, 1, 5}}, In{F, {1, 4, 5}}, In{F, {5}}}, {}, {}});
  cs.push_back(OpCase{"Clip", "Clip", {In{F, {2, 33}, -3, 3}}, {}, {}});
  cs.back().inputs.push_back(In{F, {}, -1, -0.5});
  cs.back().inputs.push_back(In{F, {}, 0.5, 1});
  cs.push_back(OpCase{"Cast f32->i32", "Cast", {In{F, {3, 11}, -50, 50}}, {}, {{"to", attr_int(6)}}});
  cs.push_back(OpCase{"Cast i64->f32", "Cast", {In{DType::i64, {3, 11}, -50, 50}}, {}, {{"to", attr_int(1)}}});
  cs.push_back(OpCase{"Cast f32->f16", "Cast", {In{F, {3, 11}, -50, 50}}, {}, {{"to", attr_int(10)}}});
}

void add_movement(std::vector<OpCase>& cs) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  cs.push_back(slice("Slice flip (torch.flip)", {1, 6, 9}, {-1}, {kMin}, {1}, {-1}));
  cs.push_back(slice("Slice gate half", {1, 8, 9}, {4}, {kMax}, {1}, {1}));
  cs.push_back(slice("Slice steps 2,-3", {5, 7, 9}, {1, -1}, {kMax, 0}, {0, 2}, {2, -3}));
  cs.push_back(OpCase{
      "Split sizes input", "Split", {In{F, {1, 10, 6}}}, {{1, ints_tensor({4, 6})}}, {{"axis", attr_int(1)}}, 17, 2});
  cs.push_back(OpCase{"Split num_outputs",
                      "Split",
                      {In{F, {1, 9, 4}}},
                      {},
                      {{"axis", attr_int(1)}, {"num_outputs", attr_int(3)}},
                      18,
                      3});
  cs.push_back(OpCase{
      "Concat axis 1", "Concat", {In{F, {1, 3, 5}}, In{F, {1, 4, 5}}, In{F, {1, 1, 5}}}, {}, {{"axis", attr_int(1)}}});
  cs.push_back(OpCase{"Reshape", "Reshape", {In{F, {2, 3, 4}}}, {{1, ints_tensor({4, -1})}}, {}});
  cs.push_back(OpCase{"Flatten", "Flatten", {In{F, {2, 3, 4}}}, {}, {{"axis", attr_int(2)}}});
  cs.push_back(OpCase{"Unsqueeze", "Unsqueeze", {In{F, {3, 4}}}, {{1, ints_tensor({0, -1})}}, {}});
  cs.push_back(OpCase{"Squeeze", "Squeeze", {In{F, {3, 1, 4, 1}}}, {{1, ints_tensor({1, 3})}}, {}});
  cs.push_back(OpCase{"Transpose", "Transpose", {In{F, {2, 3, 4}}}, {}, {{"perm", attr_ints({2, 0, 1})}}});
  cs.push_back(OpCase{"Tile", "Tile", {In{F, {2, 3}}}, {{1, ints_tensor({2, 3})}}, {}});
  cs.push_back(OpCase{"Expand", "Expand", {In{F, {3, 1}}}, {{1, ints_tensor({2, 3, 4})}}, {}});
  cs.push_back(
      OpCase{"Gather const", "Gather", {In{F, {5, 4}}}, {{1, ints_tensor({4, 0, -1})}}, {{"axis", attr_int(0)}}});
  cs.push_back(
      OpCase{"Gather runtime", "Gather", {In{F, {3, 6}}, In{DType::i64, {2, 2}, -6, 6}}, {}, {{"axis", attr_int(1)}}});
  cs.push_back(OpCase{"Pad constant", "Pad", {In{F, {2, 5}}}, {{1, ints_tensor({1, 2, 0, 3})}}, {}});
  cs.push_back(OpCase{
      "Pad reflect", "Pad", {In{F, {2, 5}}}, {{1, ints_tensor({0, 2, 0, 3})}}, {{"mode", attr_string("reflect")}}});
  cs.push_back(
      OpCase{"Pad edge", "Pad", {In{F, {2, 5}}}, {{1, ints_tensor({1, 2, 1, 3})}}, {{"mode", attr_string("edge")}}});
  cs.push_back(OpCase{"Identity", "Identity", {In{F, {3, 4}}}, {}, {}});
  cs.push_back(OpCase{"DepthToSpace DCR", "DepthToSpace", {In{F, {2, 8, 3, 2}}}, {}, {{"blocksize", attr_int(2)}}});
  cs.push_back(OpCase{"DepthToSpace CRD",
                      "DepthToSpace",
                      {In{F, {1, 9, 2, 3}}},
                      {},
                      {{"blocksize", attr_int(3)}, {"mode", attr_string("CRD")}}});
  cs.push_back(OpCase{"SpaceToDepth", "SpaceToDepth", {In{F, {2, 3, 4, 6}}}, {}, {{"blocksize", attr_int(2)}}});
  cs.push_back(OpCase{"SpaceToDepth CRD",
                      "SpaceToDepth",
                      {In{F, {1, 2, 4, 6}}},
                      {},
                      {{"blocksize", attr_int(2)}, {"mode", attr_string("CRD")}},
                      28});
  // Depth known when compiling; the indices run past it on both sides (those rows stay off).
  cs.push_back(
      OpCase{"OneHot axis 1", "OneHot", {In{DType::i64, {3, 4}, -7, 7}, In{F, {2}}}, {}, {{"axis", attr_int(1)}}, 11});
  cs.back().constants = {{1, ints_tensor({5})}};
  cs.push_back(OpCase{"OneHot float indices", "OneHot", {In{F, {6}, -4, 4}, In{F, {2}}}, {}, {}, 11});
  cs.back().constants = {{1, ints_tensor({4})}};
  cs.push_back(OpCase{"GatherND batch_dims 1",
                      "GatherND",
                      {In{F, {3, 4, 5, 2}}, In{DType::i64, {3, 6, 2}, -4, 4}},
                      {},
                      {{"batch_dims", attr_int(1)}},
                      13});
  // Class 2 (or 0) ignored; weights in [0.5, 1.5); SCE's second output is the log-softmax.
  cs.push_back(OpCase{"NegativeLogLikelihoodLoss none weighted",
                      "NegativeLogLikelihoodLoss",
                      {In{F, {3, 5, 4}}, In{DType::i64, {3, 4}, 0, 5}, In{F, {5}, 0.5, 1.5}},
                      {},
                      {{"reduction", attr_string("none")}, {"ignore_index", attr_int(2)}},
                      13});
  cs.push_back(OpCase{"NegativeLogLikelihoodLoss mean",
                      "NegativeLogLikelihoodLoss",
                      {In{F, {6, 7}}, In{DType::i32, {6}, 0, 7}},
                      {},
                      {},
                      13});
  cs.push_back(OpCase{"SoftmaxCrossEntropyLoss mean weighted log_prob",
                      "SoftmaxCrossEntropyLoss",
                      {In{F, {2, 5, 3, 2}}, In{DType::i64, {2, 3, 2}, 0, 5}, In{F, {5}, 0.5, 1.5}},
                      {},
                      {{"ignore_index", attr_int(0)}},
                      13,
                      2});
  cs.push_back(OpCase{"SoftmaxCrossEntropyLoss sum",
                      "SoftmaxCrossEntropyLoss",
                      {In{F, {4, 10}, -4, 4}, In{DType::i64, {4}, 0, 10}},
                      {},
                      {{"reduction", attr_string("sum")}},
                      13});
  // Resize: scales or sizes (and a crop's roi) are constants; an empty roi or scales is "not given".
  auto resize = [&](const char* name, In x, Tensor roi, Tensor scales, std::optional<Tensor> sizes, Attrs attrs,
                    int opset) {
    cs.push_back(OpCase{name, "Resize", {x}, {}, std::move(attrs), opset});
    cs.back().constants = {{1, std::move(roi)}, {2, std::move(scales)}};
    if (sizes) cs.back().constants.push_back({3, *sizes});
  };
  resize("Resize linear antialias axes", In{F, {2, 3, 8, 10}}, floats_tensor({}), floats_tensor({0.5f, 0.6f}), {},
         {{"mode", attr_string("linear")}, {"antialias", attr_int(1)}, {"axes", attr_ints({2, 3})}}, 18);
  resize("Resize cubic upsample", In{F, {1, 2, 5, 4}}, floats_tensor({}), floats_tensor({1, 1, 1.6f, 2.5f}), {},
         {{"mode", attr_string("cubic")}}, 13);
  resize("Resize cubic antialias exclude_outside", In{F, {1, 1, 9, 7}}, floats_tensor({}),
         floats_tensor({1, 1, 0.45f, 0.7f}), {},
         {{"mode", attr_string("cubic")}, {"antialias", attr_int(1)}, {"exclude_outside", attr_int(1)}}, 18);
  resize("Resize nearest crop extrapolation", In{F, {1, 1, 6, 7}}, floats_tensor({0, 0, 0.2f, -0.1f, 1, 1, 0.9f, 1.3f}),
         floats_tensor({}), ints_tensor({1, 1, 5, 9}),
         {{"coordinate_transformation_mode", attr_string("tf_crop_and_resize")},
          {"extrapolation_value", attr_float(7.5f)}},
         13);
  resize("Resize linear crop", In{F, {1, 2, 5, 6}}, floats_tensor({0, 0, 0.1f, 0.3f, 1, 1, 1.2f, 0.8f}),
         floats_tensor({}), ints_tensor({1, 2, 7, 4}),
         {{"mode", attr_string("linear")}, {"coordinate_transformation_mode", attr_string("tf_crop_and_resize")}}, 13);
  resize("Resize linear not_smaller half_pixel_symmetric", In{F, {1, 3, 7, 5}}, floats_tensor({}), floats_tensor({}),
         ints_tensor({4, 9}),
         {{"mode", attr_string("linear")},
          {"axes", attr_ints({2, 3})},
          {"keep_aspect_ratio_policy", attr_string("not_smaller")},
          {"coordinate_transformation_mode", attr_string("half_pixel_symmetric")}},
         19);
  resize("Resize nearest int32 asymmetric ceil", In{DType::i32, {2, 3, 4}, -100, 100}, floats_tensor({}),
         floats_tensor({1, 2.5f, 0.75f}), {},
         {{"coordinate_transformation_mode", attr_string("asymmetric")}, {"nearest_mode", attr_string("ceil")}}, 13);
  cs.push_back(OpCase{"Upsample nearest", "Upsample", {In{F, {1, 2, 3, 4}}}, {}, {}, 9});
  cs.back().constants = {{1, floats_tensor({1, 1, 2, 3})}};
  cs.push_back(OpCase{"Upsample linear",
                      "Upsample",
                      {In{F, {1, 2, 3, 4}}},
                      {},
                      {{"mode", attr_string("linear")}, {"scales", attr_floats({1, 1, 2.5, 1.5})}},
                      7});
  cs.push_back(OpCase{"EyeLike k -1", "EyeLike", {In{DType::i32, {4, 6}}}, {}, {{"k", attr_int(-1)}}});
}

// Attention: both layouts, grouped heads, each mask kind (a float mask, a boolean one, one
// shorter than the keys), the cache, key padding with a window, softcap and the scores output.
void add_attention(std::vector<OpCase>& cs) {
  const DType F = DType::f32, B = DType::boolean;
  auto attn = [&](const char* name, std::vector<In> ins, Attrs attrs, int opset = 23, int outputs = 1,
                  std::vector<size_t> omitted = {}) {
    cs.push_back(OpCase{name, "Attention", std::move(ins), {}, std::move(attrs), opset, outputs, std::move(omitted)});
  };
  attn("Attention 4d", {In{F, {2, 3, 4, 8}}, In{F, {2, 3, 6, 8}}, In{F, {2, 3, 6, 8}}}, {});
  attn("Attention 3d gqa causal", {In{F, {2, 5, 32}}, In{F, {2, 7, 16}}, In{F, {2, 7, 24}}},
       {{"q_num_heads", attr_int(4)}, {"kv_num_heads", attr_int(2)}, {"is_causal", attr_int(1)}});
  attn("Attention float mask softcap scores with bias",
       {In{F, {1, 2, 4, 8}, -3, 3}, In{F, {1, 2, 6, 8}, -3, 3}, In{F, {1, 2, 6, 8}}, In{F, {4, 6}}},
       {{"softcap", attr_float(2.0f)}, {"qk_matmul_output_mode", attr_int(2)}}, 23, 4);
  attn("Attention bool mask rank 3 causal",
       {In{F, {2, 3, 4, 8}}, In{F, {2, 3, 6, 8}}, In{F, {2, 3, 6, 8}}, In{B, {3, 4, 6}}}, {{"is_causal", attr_int(1)}});
  attn("Attention cache short mask softmax out",
       {In{F, {2, 2, 3, 8}}, In{F, {2, 2, 4, 8}}, In{F, {2, 2, 4, 5}}, In{F, {2, 1, 3, 6}}, In{F, {2, 2, 3, 8}},
        In{F, {2, 2, 3, 5}}},
       {{"qk_matmul_output_mode", attr_int(3)}, {"scale", attr_float(0.2f)}}, 23, 4);
  attn("Attention padded keys window",
       {In{F, {3, 2, 3, 8}}, In{F, {3, 1, 7, 8}}, In{F, {3, 1, 7, 8}}, In{DType::i64, {3}, 3, 8}},
       {{"is_causal", attr_int(1)}, {"left_window_size", attr_int(2)}, {"right_window_size", attr_int(1)}}, 25, 1,
       {3, 4, 5});
  attn("Attention float16 causal cache",
       {In{DType::f16, {1, 2, 3, 4}}, In{DType::f16, {1, 2, 3, 4}}, In{DType::f16, {1, 2, 3, 4}},
        In{DType::f16, {1, 2, 2, 4}}, In{DType::f16, {1, 2, 2, 4}}},
       {{"is_causal", attr_int(1)}}, 23, 3, {3});
  // RotaryEmbedding: caches by position (run-time indices) or per token, halves or neighbours.
  cs.push_back(OpCase{"RotaryEmbedding positions",
                      "RotaryEmbedding",
                      {In{F, {2, 3, 5, 8}}, In{F, {9, 4}}, In{F, {9, 4}}, In{DType::i64, {2, 5}, 0, 9}},
                      {},
                      {},
                      23});
  cs.push_back(OpCase{"RotaryEmbedding 3d interleaved part",
                      "RotaryEmbedding",
                      {In{F, {2, 5, 24}}, In{F, {2, 5, 2}}, In{F, {2, 5, 2}}},
                      {},
                      {{"num_heads", attr_int(3)}, {"interleaved", attr_int(1)}, {"rotary_embedding_dim", attr_int(4)}},
                      23});
}

// The scatters: run-time indices that repeat (the later update wins, or they fold in order).
void add_scatters(std::vector<OpCase>& cs) {
  const DType F = DType::f32, I = DType::i64;
  auto scatter = [&](const char* name, const char* op, std::vector<In> ins, Attrs attrs, int opset) {
    cs.push_back(OpCase{name, op, std::move(ins), {}, std::move(attrs), opset});
  };
  scatter("ScatterElements axis 1 repeats", "ScatterElements", {In{F, {3, 5}}, In{I, {3, 4}, -5, 5}, In{F, {3, 4}}},
          {{"axis", attr_int(1)}}, 13);
  scatter("ScatterElements add", "ScatterElements", {In{F, {4, 3}}, In{I, {6, 3}, 0, 4}, In{F, {6, 3}}},
          {{"reduction", attr_string("add")}}, 16);
  scatter("ScatterElements int32 min", "ScatterElements",
          {In{DType::i32, {2, 3, 4}, -9, 9}, In{DType::i32, {2, 3, 2}, -4, 4}, In{DType::i32, {2, 3, 2}, -9, 9}},
          {{"axis", attr_int(-1)}, {"reduction", attr_string("min")}}, 18);
  scatter("ScatterND slices", "ScatterND", {In{F, {5, 3, 2}}, In{I, {4, 1}, -5, 5}, In{F, {4, 3, 2}}}, {}, 13);
  scatter("ScatterND mul pairs", "ScatterND", {In{F, {3, 4}}, In{I, {2, 3, 2}, 0, 3}, In{F, {2, 3}}},
          {{"reduction", attr_string("mul")}}, 16);
  scatter("ScatterND max", "ScatterND", {In{F, {4, 4}}, In{I, {5, 1}, 0, 4}, In{F, {5, 4}}},
          {{"reduction", attr_string("max")}}, 18);
  scatter("Scatter", "Scatter", {In{F, {3, 3}}, In{I, {2, 3}, 0, 3}, In{F, {2, 3}}}, {}, 10);
  // TopK: k a constant; values that tie (integers in a small range) keep their index order.
  cs.push_back(OpCase{"TopK largest", "TopK", {In{F, {3, 9}}}, {}, {}, 11, 2});
  cs.back().constants = {{1, ints_tensor({4})}};
  cs.push_back(OpCase{"TopK smallest axis 0 ties",
                      "TopK",
                      {In{DType::i32, {7, 3}, -3, 3}},
                      {},
                      {{"axis", attr_int(0)}, {"largest", attr_int(0)}},
                      11,
                      2});
  cs.back().constants = {{1, ints_tensor({5})}};
  cs.push_back(
      OpCase{"SwiGLU alpha", "SwiGLU", {In{F, {3, 7}, -4, 4}, In{F, {3, 7}}}, {}, {{"alpha", attr_float(0.7f)}}, 28});
  cs.push_back(OpCase{"CausalConvWithState bias state silu",
                      "CausalConvWithState",
                      {In{F, {2, 3, 9}}, In{F, {3, 1, 4}}, In{F, {3}}, In{F, {2, 3, 3}}},
                      {},
                      {{"activation", attr_string("silu")}},
                      27,
                      2});
  cs.push_back(
      OpCase{"CausalConvWithState", "CausalConvWithState", {In{F, {1, 4, 6}}, In{F, {4, 1, 3}}}, {}, {}, 27, 2});
  cs.push_back(OpCase{"GroupNormalization per channel",
                      "GroupNormalization",
                      {In{F, {2, 6, 5}, -3, 3}, In{F, {6}}, In{F, {6}}},
                      {},
                      {{"num_groups", attr_int(3)}},
                      21});
  cs.push_back(OpCase{"GroupNormalization per group",
                      "GroupNormalization",
                      {In{F, {2, 4, 3, 2}}, In{F, {2}}, In{F, {2}}},
                      {},
                      {{"num_groups", attr_int(2)}, {"epsilon", attr_float(0.01f)}},
                      18});
  cs.push_back(OpCase{"MeanVarianceNormalization axes",
                      "MeanVarianceNormalization",
                      {In{F, {3, 4, 5}}},
                      {},
                      {{"axes", attr_ints({0, 2})}},
                      13});
  cs.push_back(OpCase{"LRN size 4",
                      "LRN",
                      {In{F, {2, 7, 3, 2}, -2, 2}},
                      {},
                      {{"size", attr_int(4)}, {"alpha", attr_float(0.5f)}, {"bias", attr_float(1.5f)}},
                      13});
  cs.push_back(OpCase{"CenterCropPad", "CenterCropPad", {In{F, {5, 4, 3}}}, {}, {{"axes", attr_ints({0, -1})}}, 18});
  cs.back().constants = {{1, ints_tensor({2, 6})}};
  cs.push_back(OpCase{"Einsum batch matmul",
                      "Einsum",
                      {In{F, {3, 2, 5}}, In{F, {3, 5, 4}}},
                      {},
                      {{"equation", attr_string("bij,bjk->bik")}},
                      12});
  cs.push_back(OpCase{"Einsum ellipsis diagonal",
                      "Einsum",
                      {In{F, {2, 4, 4}}, In{F, {4}}},
                      {},
                      {{"equation", attr_string("...ii,i->...i")}},
                      12});
  cs.push_back(OpCase{"Einsum int64 implicit",
                      "Einsum",
                      {In{DType::i64, {3, 4}, -9, 9}, In{DType::i64, {4, 2}, -9, 9}},
                      {},
                      {{"equation", attr_string("ij,jk")}},
                      12});
  // GridSample: grid values past [-1, 1], so every padding mode is exercised.
  auto grid = [&](const char* name, Shape x, Shape g, const char* mode, const char* pad, int64_t align, int opset) {
    cs.push_back(
        OpCase{name,
               "GridSample",
               {In{F, std::move(x)}, In{F, std::move(g), -1.3, 1.3}},
               {},
               {{"mode", attr_string(mode)}, {"padding_mode", attr_string(pad)}, {"align_corners", attr_int(align)}},
               opset});
  };
  grid("GridSample bicubic reflection", {1, 2, 5, 6}, {1, 4, 3, 2}, "bicubic", "reflection", 0, 16);
  grid("GridSample bilinear zeros align", {2, 1, 4, 4}, {2, 3, 5, 2}, "bilinear", "zeros", 1, 16);
  grid("GridSample nearest border", {1, 3, 3, 5}, {1, 6, 2, 2}, "nearest", "border", 0, 16);
  grid("GridSample volumetric linear reflection align", {1, 2, 3, 4, 5}, {1, 2, 3, 2, 3}, "linear", "reflection", 1,
       20);
  grid("GridSample volumetric cubic zeros", {1, 1, 4, 3, 4}, {1, 2, 2, 3, 3}, "cubic", "zeros", 0, 20);
}

void add_anchors(std::vector<OpCase>& cs) {
  cs.push_back(conv1d("Conv1d 1x1", 16, 24, 1, 50, {}));
  cs.push_back(conv1d("Conv1d k5 same", 8, 16, 5, 40, {{"pads", attr_ints({2, 2})}}));
  cs.push_back(conv1d("Conv1d k3 d5 same", 8, 8, 3, 37, {{"pads", attr_ints({5, 5})}, {"dilations", attr_ints({5})}}));
  // Wide enough that a GPU group's work items share a row block: they stage the weights.
  cs.push_back(
      conv1d("Conv1d k3 d3 wide", 8, 8, 3, 1024, {{"pads", attr_ints({3, 3})}, {"dilations", attr_ints({3})}}));
  cs.push_back(
      conv1d("Conv1d k7 stride 2 group 2", 8, 6, 7, 41, {{"pads", attr_ints({3, 3})}, {"strides", attr_ints({2})}}, 2));
  cs.push_back(OpCase{
      "Conv2d k3 pad1", "Conv", {In{F, {1, 3, 9, 8}}, In{F, {4, 3, 3, 3}}}, {}, {{"pads", attr_ints({1, 1, 1, 1})}}});
  cs.push_back(OpCase{"ConvTranspose1d s8 k16 p4",
                      "ConvTranspose",
                      {In{F, {1, 8, 13}}, In{F, {8, 4, 16}}, In{F, {4}}},
                      {},
                      {{"strides", attr_ints({8})}, {"pads", attr_ints({4, 4})}}});
  cs.push_back(OpCase{"ConvTranspose1d s2 k4 p1 op1",
                      "ConvTranspose",
                      {In{F, {1, 4, 9}}, In{F, {4, 3, 4}}},
                      {},
                      {{"strides", attr_ints({2})}, {"pads", attr_ints({1, 1})}, {"output_padding", attr_ints({1})}}});
  cs.push_back(OpCase{"ConvTranspose1d s3 k5 p2,0",
                      "ConvTranspose",
                      {In{F, {1, 3, 7}}, In{F, {3, 2, 5}}, In{F, {2}}},
                      {},
                      {{"strides", attr_ints({3})}, {"pads", attr_ints({2, 0})}}});
  cs.push_back(OpCase{"ConvTranspose1d s3 k6 p1,2 group 2",
                      "ConvTranspose",
                      {In{F, {1, 4, 6}}, In{F, {4, 2, 6}}, In{F, {4}}},
                      {},
                      {{"strides", attr_ints({3})}, {"pads", attr_ints({1, 2})}, {"group", attr_int(2)}}});
  cs.push_back(OpCase{"ConvTranspose2d group 2",
                      "ConvTranspose",
                      {In{F, {1, 4, 5, 4}}, In{F, {4, 3, 3, 2}}},
                      {},
                      {{"strides", attr_ints({2, 1})}, {"group", attr_int(2)}}});
  cs.push_back(OpCase{"MatMul batched", "MatMul", {In{F, {2, 1, 5, 7}}, In{F, {3, 7, 4}}}, {}, {}});
  cs.push_back(OpCase{"MatMul 1-D", "MatMul", {In{F, {7}}, In{F, {2, 7, 3}}}, {}, {}});
  cs.push_back(OpCase{"Gemm transB alpha beta",
                      "Gemm",
                      {In{F, {4, 6}}, In{F, {5, 6}}, In{F, {5}}},
                      {},
                      {{"transB", attr_int(1)}, {"alpha", attr_float(0.5)}, {"beta", attr_float(2.0)}}});
  cs.push_back(OpCase{"ReduceSum axes input",
                      "ReduceSum",
                      {In{F, {3, 4, 5}}},
                      {{1, ints_tensor({0, 2})}},
                      {{"keepdims", attr_int(0)}}});
  cs.push_back(OpCase{"ReduceMean", "ReduceMean", {In{F, {3, 4, 5}}}, {}, {{"axes", attr_ints({1})}}});
  cs.push_back(OpCase{"RMSNormalization", "RMSNormalization", {In{F, {2, 3, 8}}, In{F, {8}}}, {}, {}, 23});
  cs.push_back(OpCase{"LpNormalization p1 axis 1",
                      "LpNormalization",
                      {In{F, {3, 5, 4}}},
                      {},
                      {{"axis", attr_int(1)}, {"p", attr_int(1)}}});
  cs.push_back(OpCase{"LpNormalization p2", "LpNormalization", {In{F, {3, 5, 4}}}, {}, {}});
  cs.push_back(
      OpCase{"CumProd", "CumProd", {In{F, {3, 7}, 0.5, 1.5}}, {{1, ints_tensor({1})}}, {{"reverse", attr_int(1)}}, 26});
  cs.push_back(OpCase{"LpPool p3 2-D ceil",
                      "LpPool",
                      {In{F, {1, 3, 7, 6}}},
                      {},
                      {{"kernel_shape", attr_ints({3, 2})},
                       {"strides", attr_ints({2, 2})},
                       {"pads", attr_ints({1, 0, 1, 1})},
                       {"p", attr_int(3)},
                       {"ceil_mode", attr_int(1)}},
                      18});
  cs.push_back(OpCase{"LpPool p2 1-D dilated",
                      "LpPool",
                      {In{F, {2, 3, 11}}},
                      {},
                      {{"kernel_shape", attr_ints({3})}, {"dilations", attr_ints({2})}},
                      18});
  cs.push_back(OpCase{"AveragePool ceil count_include_pad",
                      "AveragePool",
                      {In{F, {1, 2, 7, 8}}},
                      {},
                      {{"kernel_shape", attr_ints({3, 3})},
                       {"strides", attr_ints({2, 3})},
                       {"pads", attr_ints({1, 1, 1, 1})},
                       {"ceil_mode", attr_int(1)},
                       {"count_include_pad", attr_int(1)}},
                      19});
  cs.push_back(OpCase{"MaxPool 1-D dilated pads",
                      "MaxPool",
                      {In{F, {2, 2, 13}}},
                      {},
                      {{"kernel_shape", attr_ints({3})}, {"dilations", attr_ints({3})}, {"pads", attr_ints({2, 4})}},
                      12});
  cs.push_back(OpCase{"Softmax last axis", "Softmax", {In{F, {3, 4, 9}, -5, 5}}, {}, {}, 13});
  cs.push_back(
      OpCase{"Softmax opset 11 coerced", "Softmax", {In{F, {3, 4, 9}, -5, 5}}, {}, {{"axis", attr_int(1)}}, 11});
}

// Random generators (docs/random.md): each kind, seeded and keyed by the node, with a scale,
// a range and a float16 output, and Bernoulli over probabilities.
void add_random(std::vector<OpCase>& cs) {
  const DType F = DType::f32;
  cs.push_back(OpCase{"RandomNormalLike", "RandomNormalLike", {In{F, {2, 3, 37}}}, {}, {}});
  cs.push_back(OpCase{
      "RandomNormal seeded scaled",
      "RandomNormal",
      {},
      {},
      {{"shape", attr_ints({5, 19})}, {"seed", attr_float(2)}, {"mean", attr_float(-1)}, {"scale", attr_float(3)}}});
  cs.push_back(OpCase{"RandomUniformLike float16",
                      "RandomUniformLike",
                      {In{F, {4, 29}}},
                      {},
                      {{"dtype", attr_int(10)}, {"low", attr_float(-2)}, {"high", attr_float(6)}}});
  cs.push_back(OpCase{"RandomUniform", "RandomUniform", {}, {}, {{"shape", attr_ints({3, 41})}}});
  cs.push_back(OpCase{"Bernoulli", "Bernoulli", {In{F, {6, 23}, 0, 1}}, {}, {}});
}

// Compress with a condition known when compiling (a gather the probe maps), and ReverseSequence
// with run-time lengths (kernel/lower_movement.cpp).
void add_selection(std::vector<OpCase>& cs) {
  Tensor cond(DType::boolean, {6});
  for (int64_t k = 0; k < 6; ++k) cond.data<uint8_t>()[k] = k % 3 != 1;
  cs.push_back(
      OpCase{"Compress axis 1", "Compress", {In{DType::f32, {3, 6, 4}}}, {{1, cond}}, {{"axis", attr_int(1)}}});
  cs.push_back(OpCase{"Compress flat", "Compress", {In{DType::i32, {2, 5}, -50, 50}}, {{1, cond}}, {}});
  cs.push_back(OpCase{"ReverseSequence time-major",
                      "ReverseSequence",
                      {In{DType::f32, {5, 3, 4}}, In{DType::i64, {3}, 0, 6}},
                      {},
                      {},
                      10});
  cs.push_back(OpCase{"ReverseSequence batch-major",
                      "ReverseSequence",
                      {In{DType::f16, {2, 7}}, In{DType::i64, {2}, 0, 8}},
                      {},
                      {{"batch_axis", attr_int(0)}, {"time_axis", attr_int(1)}},
                      10});
}

}  // namespace

std::vector<OpCase> standard_cases() {
  std::vector<OpCase> cs;
  add_elementwise(cs);
  add_movement(cs);
  add_attention(cs);
  add_scatters(cs);
  add_anchors(cs);
  add_random(cs);
  add_selection(cs);
  return cs;
}

}  // namespace lockstep
