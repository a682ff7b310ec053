#include "emitter.h"

#include <cmath>
#include <cstring>
#include <numbers>

#include "core/random.h"

namespace lockstep::vits {

Path Path::operator/(const std::string& child) const {
  Path p = *this;
  p.parts.push_back(child);
  return p;
}

std::string Path::scope() const {
  std::string s;
  for (const auto& part : parts) s += "/" + part;
  return s;
}

std::string Path::param(const std::string& leaf) const {
  std::string s;
  for (const auto& part : parts) s += part + ".";
  return s + leaf;
}

Path indexed(const Path& p, const std::string& list, int64_t i) { return p / (list + "." + std::to_string(i)); }

// Uniform in (0, 1): 53 random bits, offset by half a step so log() never sees 0.
static double uniform01(uint64_t& state) {
  return (static_cast<double>(splitmix64_next(state) >> 11) + 0.5) * 0x1.0p-53;
}

static uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

Tensor normal_tensor(uint64_t seed, const std::string& name, const Shape& shape, double std) {
  Tensor t(DType::f32, shape);
  uint64_t state = seed ^ fnv1a(name);
  float* out = t.data<float>();
  int64_t n = t.numel();
  for (int64_t k = 0; k < n; k += 2) {
    double r = std::sqrt(-2.0 * std::log(uniform01(state)));
    double theta = 2.0 * std::numbers::pi * uniform01(state);
    out[k] = static_cast<float>(std * r * std::cos(theta));
    if (k + 1 < n) out[k + 1] = static_cast<float>(std * r * std::sin(theta));
  }
  return t;
}

std::vector<int> Emitter::op_n(const Path& p, const std::string& op_type, const std::vector<int>& inputs,
                               Attrs attrs, int num_outputs) {
  std::string base = p.scope() + "/" + op_type;
  int k = counts_[base]++;
  std::string name = k == 0 ? base : base + "_" + std::to_string(k);
  return b.node(op_type, name, inputs, std::move(attrs), num_outputs);
}

int Emitter::op(const Path& p, const std::string& op_type, const std::vector<int>& inputs, Attrs attrs) {
  return op_n(p, op_type, inputs, std::move(attrs), 1)[0];
}

int Emitter::constant(const Path& p, Tensor t) {
  if (constant_nodes_) return op(p, "Constant", {}, {{"value", attr_tensor(std::move(t))}});
  std::string key = std::to_string(static_cast<int>(t.dtype)) + shape_str(t.shape);
  key.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  // PyTorch names folded constants "onnx::<Consumer>_<id>"; a neutral counter does here.
  int v = b.initializer("onnx::Constant_" + std::to_string(constants_.size()), std::move(t));
  constants_[key] = v;
  return v;
}

int Emitter::ints(const Path& p, const std::vector<int64_t>& v) {
  Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return constant(p, std::move(t));
}

int Emitter::shared_ints(const std::string& consumer, const std::vector<int64_t>& v) {
  if (!constant_nodes_) return ints(Path{}, v);
  auto it = shared_nodes_.find(v);
  if (it != shared_nodes_.end()) return it->second;
  Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  std::string n = std::to_string(b.graph().nodes.size());
  int out = b.op("Constant", "Constant_" + n, {}, {{"value", attr_tensor(std::move(t))}});
  b.rename(out, "onnx::" + consumer + "_" + n);
  return shared_nodes_[v] = out;
}

int Emitter::scalar(const Path& p, float v) {
  Tensor t(DType::f32, {});
  *t.data<float>() = v;
  return constant(p, std::move(t));
}

int Emitter::param(const Path& p, const std::string& leaf, const Shape& shape, double std) {
  std::string name = p.param(leaf);
  return b.initializer(name, normal_tensor(seed_, name, shape, std));
}

// The attributes torch.onnx writes for nn.Conv1d / nn.ConvTranspose1d; the dynamo exporter
// adds auto_pad, and output_padding on transposed convolutions.
static Attrs conv_attrs(const Emitter& e, const ConvSpec& s, bool transposed) {
  Attrs a{{"dilations", attr_ints({s.dilation})},
          {"group", attr_int(1)},
          {"kernel_shape", attr_ints({s.kernel})},
          {"pads", attr_ints({s.pad, s.pad})},
          {"strides", attr_ints({s.stride})}};
  if (e.dynamo()) {
    a["auto_pad"] = attr_string("NOTSET");
    if (transposed) a["output_padding"] = attr_ints({0});
  }
  return a;
}

int conv1d(Emitter& e, const Path& p, int x, const ConvSpec& s) {
  std::vector<int> in{x, e.param(p, "weight", {s.out, s.in, s.kernel}, s.weight_std)};
  if (s.bias) in.push_back(e.param(p, "bias", {s.out}, s.bias_std));
  return e.op(p, "Conv", in, conv_attrs(e, s, false));
}

int conv_transpose1d(Emitter& e, const Path& p, int x, const ConvSpec& s) {
  std::vector<int> in{x, e.param(p, "weight", {s.in, s.out, s.kernel}, s.weight_std)};
  if (s.bias) in.push_back(e.param(p, "bias", {s.out}, s.bias_std));
  return e.op(p, "ConvTranspose", in, conv_attrs(e, s, true));
}

int slice(Emitter& e, const Path& p, int x, int64_t start, int64_t end, int64_t axis, std::vector<int64_t> steps) {
  int axes = e.ints(p, {axis});
  int starts = e.ints(p, {start});
  int ends = e.ints(p, {end});
  if (steps.empty()) return e.op(p, "Slice", {x, starts, ends, axes});
  return e.op(p, "Slice", {x, starts, ends, axes, e.ints(p, steps)});
}

int slice_channels(Emitter& e, const Path& p, int x, int64_t begin, int64_t end) {
  return slice(e, p, x, begin, end, 1, {1});
}

int leaky_relu(Emitter& e, const Path& p, int x, double slope) {
  return e.op(p, "LeakyRelu", {x}, {{"alpha", attr_float(slope)}});
}

}  // namespace lockstep::vits
