// ResidualCouplingBlock (VITS modules.py), mean_only coupling layers, inference direction.
#include <cstdint>
#include <limits>

#include "parts.h"

namespace lockstep::vits {

constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();

// torch.flip(x, [1]): Slice from -1 with step -1 to an end past the front, which the
// TorchScript exporter writes as -INT64_MAX and the dynamo exporter as INT64_MIN.
static int flip(Emitter& e, const Path& p, int x) {
  int64_t end = e.dynamo() ? std::numeric_limits<int64_t>::min() : -std::numeric_limits<int64_t>::max();
  return slice(e, p, x, -1, end, 1, {-1});
}

// torch.split(x, [half, half], 1) is split_with_sizes: both exporters pass the sizes as an
// input (opset 13+), torch 2.11's dynamo exporter included.
static std::vector<int> split_half(Emitter& e, const Path& p, int x, int64_t half) {
  return e.op_n(p, "Split", {x, e.shared_ints("Split", {half, half})}, {{"axis", attr_int(1)}}, 2);
}

// One WaveNet layer's gate: tanh(a[:, :h]) * sigmoid(a[:, h:]).
static int gate(Emitter& e, const Path& p, int a, int64_t h) {
  int t = e.op(p, "Tanh", {slice_channels(e, p, a, 0, h)});
  int s = e.op(p, "Sigmoid", {slice_channels(e, p, a, h, kOpenEnd)});
  return e.op(p, "Mul", {t, s});
}

// WN: the skip sum starts at the first layer's skip half (the exported zeros_like start and
// the zero conditioning input g_l fold away).
static int wavenet(Emitter& e, const Path& p, int x, int mask, const FlowSizes& s) {
  int64_t h = s.hidden;
  int skip = -1;
  auto add_skip = [&](int v) { skip = skip < 0 ? v : e.op(p, "Add", {skip, v}); };
  int64_t dilation = 1;
  for (int64_t i = 0; i < s.layers; ++i, dilation *= s.dilation_rate) {
    int64_t pad = (s.kernel * dilation - dilation) / 2;
    int a = conv1d(e, indexed(p, "in_layers", i), x, {h, 2 * h, s.kernel, 1, dilation, pad});
    int acts = gate(e, p, a, h);
    bool last = i == s.layers - 1;
    int rs = conv1d(e, indexed(p, "res_skip_layers", i), acts, {h, last ? h : 2 * h, 1});
    if (last) {
      add_skip(rs);
      break;
    }
    int res = slice_channels(e, p, rs, 0, h);
    x = e.op(p, "Mul", {e.op(p, "Add", {x, res}), mask});
    add_skip(slice_channels(e, p, rs, h, kOpenEnd));
  }
  return e.op(p, "Mul", {skip, mask});
}

// ResidualCouplingLayer(mean_only=True), reverse: x1 = (x1 - m) * mask (exp(-logs) = 1).
static int coupling(Emitter& e, const Path& p, int x, int mask, const FlowSizes& s) {
  int64_t half = s.channels / 2;
  std::vector<int> halves = split_half(e, p, x, half);
  int h = e.op(p, "Mul", {conv1d(e, p / "pre", halves[0], {half, s.hidden, 1}), mask});
  h = wavenet(e, p / "enc", h, mask, s);
  int m = e.op(p, "Mul", {conv1d(e, p / "post", h, {s.hidden, half, 1}), mask});
  int x1 = e.op(p, "Mul", {e.op(p, "Sub", {halves[1], m}), mask});
  return e.op(p, "Concat", {halves[0], x1}, {{"axis", attr_int(1)}});
}

// flows = [coupling 0, flip 1, coupling 2, flip 3, ...]; reverse runs them backwards.
int flow_reverse(Emitter& e, int z_p, int mask, const FlowSizes& s) {
  Path flow{{"flow"}};
  int x = z_p;
  for (int64_t i = s.flows - 1; i >= 0; --i) {
    x = flip(e, indexed(flow, "flows", 2 * i + 1), x);
    x = coupling(e, indexed(flow, "flows", 2 * i), x, mask, s);
  }
  return x;
}

}  // namespace lockstep::vits
