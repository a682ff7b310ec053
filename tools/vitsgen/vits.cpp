#include "vits.h"

#include <cmath>
#include <numbers>

#include "core/error.h"
#include "graph/cut.h"
#include "parts.h"

namespace lockstep::vits {

static void require(bool ok, const std::string& msg) {
  if (!ok) throw Error("vitsgen: " + msg);
}

void check_config(const Config& c) {
  const FlowSizes& f = c.flow;
  require(f.channels >= 2 && f.channels % 2 == 0, "channels must be even and >= 2");
  require(f.hidden >= 1 && f.layers >= 1 && f.flows >= 1, "hidden, layers and flows must be >= 1");
  require(f.kernel >= 1 && f.kernel % 2 == 1, "the WaveNet kernel must be odd (same padding)");
  require(f.dilation_rate >= 1, "the dilation rate must be >= 1");
  require(c.T != 0, "T must be positive or symbolic");
  require(!(c.dynamo && c.constant_nodes), "the dynamo exporter writes no Constant nodes");
  if (c.part == Part::flow) return;
  const DecSizes& d = c.dec;
  require(!d.rates.empty() && d.rates.size() == d.kernels.size(), "upsample rates and kernels must pair up");
  int64_t ch = d.upsample_initial;
  for (size_t i = 0; i < d.rates.size(); ++i) {
    require(d.rates[i] >= 1 && d.kernels[i] >= d.rates[i] && (d.kernels[i] - d.rates[i]) % 2 == 0,
            "each upsample kernel must be >= its rate, with an even difference");
    require(ch % 2 == 0 && ch >= 2, "upsample channels must halve evenly at every stage");
    ch /= 2;
  }
  require(!d.resblock_kernels.empty() && !d.resblock_dilations.empty(), "resblocks need kernels and dilations");
  for (int64_t k : d.resblock_kernels) require(k >= 1 && k % 2 == 1, "resblock kernels must be odd");
  for (int64_t k : d.resblock_dilations) require(k >= 1, "resblock dilations must be >= 1");
}

static int64_t hop(const DecSizes& d) {
  int64_t h = 1;
  for (int64_t u : d.rates) h *= u;
  return h;
}

Graph build(const Config& c) {
  check_config(c);
  GraphBuilder b(c.dynamo ? 20 : 17, c.dynamo ? 10 : 8);
  Emitter e(b, c.seed, c.dynamo, c.constant_nodes);
  Dim t = c.T > 0 ? dim(c.T) : dim("T");
  int x = b.input(c.part == Part::dec ? "z" : "z_p", DType::f32, {dim(1), dim(c.flow.channels), t});
  int mask = b.input("y_mask", DType::f32, {dim(1), dim(1), t});
  if (c.part != Part::dec) x = flow_reverse(e, x, mask, c.flow);
  if (c.part == Part::flow) {
    b.rename(x, "z");
    b.output(x, DType::f32, {dim(1), dim(c.flow.channels), t});
    return b.finish();
  }
  // SynthesizerTrn.infer: o = dec(z * y_mask); the audio is masked by the upsampled mask.
  Path top;
  int o = generator(e, e.op(top, "Mul", {x, mask}), c.flow.channels, c.dec);
  int audio = e.op(top, "Mul", {o, repeat_interleave_time(e, top, mask, hop(c.dec))});
  b.rename(audio, "audio");
  Dim samples = c.T > 0 ? dim(c.T * hop(c.dec)) : dim(c.dynamo ? std::to_string(hop(c.dec)) + "*T" : "T_audio");
  b.output(audio, DType::f32, {dim(1), dim(1), samples});
  return b.finish();
}

Graph build_cut(const Config& c, const std::vector<std::string>& cut_names) {
  return cut_at(build(c), cut_names);
}

ExportOptions export_options(const Config& c) {
  ExportOptions o;
  o.ir_version = c.dynamo ? 10 : 8;
  o.opset = c.dynamo ? 20 : 17;
  o.producer_name = "lockstep-vitsgen";
  o.value_info = c.dynamo;
  return o;
}

std::map<std::string, Tensor> seed_inputs(const Graph& g, int64_t frames) {
  std::map<std::string, Tensor> out;
  for (int v : g.inputs) {
    const Value& val = g.values[v];
    if (val.type.dims.size() != 3) throw Error("vitsgen: input '" + val.name + "' is not [1,C,T]");
    int64_t channels = val.type.dims[1];
    Tensor t(DType::f32, {1, channels, frames});
    float* p = t.data<float>();
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t k = 0; k < frames; ++k)
        p[c * frames + k] = val.name == "y_mask"
            ? 1.0f
            : static_cast<float>(0.5 * std::sin(2.0 * std::numbers::pi * static_cast<double>(3 * c + k) / 128.0));
    out[val.name] = std::move(t);
  }
  return out;
}

}  // namespace lockstep::vits
