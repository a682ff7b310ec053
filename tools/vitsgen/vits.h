// The VITS decoder family (flow + HiFi-GAN generator), written as a Graph with the node and
// parameter names PyTorch's exporter gives it. Sizes are parameters; weights come from a seed.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontend/onnx_export.h"
#include "graph/graph.h"

namespace lockstep::vits {

enum class Part { flow, dec, decoder };

// ResidualCouplingBlock: `flows` coupling layers of a `layers`-deep WaveNet each.
struct FlowSizes {
  int64_t channels = 128;  // z channels; each coupling layer splits them in half
  int64_t hidden = 72;
  int64_t kernel = 5;
  int64_t dilation_rate = 1;  // VITS flows use 1
  int64_t layers = 4;
  int64_t flows = 4;
};

// HiFi-GAN generator with ResBlock1.
struct DecSizes {
  int64_t upsample_initial = 512;
  std::vector<int64_t> rates{8, 8, 2, 2};
  std::vector<int64_t> kernels{16, 16, 4, 4};
  std::vector<int64_t> resblock_kernels{3, 7, 11};
  std::vector<int64_t> resblock_dilations{1, 3, 5};
};

struct Config {
  Part part = Part::flow;
  FlowSizes flow;
  DecSizes dec;
  int64_t T = 1024;  // frames; < 0 means the symbolic dim "T"
  uint64_t seed = 0;
  // torch.onnx.export(dynamo=True) flavour: IR 10, opset 20, Expand for Tile, flip ends at
  // INT64_MIN, auto_pad written, value_info from shape inference. Node names stay scoped.
  bool dynamo = false;
  // TorchScript exporter's small constants: one Constant node per use instead of shared
  // initializers (the reduced graph has none).
  bool constant_nodes = false;
};

// Throws Error for sizes the architecture cannot take (odd channels, (k - u) odd, ...).
void check_config(const Config& c);

// Inputs: flow and decoder read z_p [1,C,T], dec reads z [1,C,T]; all read y_mask [1,1,T].
// Outputs: "z" [1,C,T] (flow) or "audio" [1,1,T*prod(rates)] (dec, decoder; symbolic
// "T_audio", or "<hop>*T" as the dynamo exporter writes it).
Graph build(const Config& c);

// build() cut at the given node or value names (graph/cut.h).
Graph build_cut(const Config& c, const std::vector<std::string>& cut_names);

// IR version and opset of the chosen exporter flavour.
ExportOptions export_options(const Config& c);

// The seed's deterministic inputs for `frames` frames: x[c,t] = 0.5 sin(2 pi (3c + t) / 128)
// for z_p / z, y_mask = 1; keyed by the graph's input names.
std::map<std::string, Tensor> seed_inputs(const Graph& g, int64_t frames);

}  // namespace lockstep::vits
