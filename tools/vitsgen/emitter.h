// Writes a graph the way PyTorch's ONNX exporter names it: node "/dec/ups.0/ConvTranspose",
// repeated ops in one scope numbered "Mul", "Mul_1", ...; parameters named by module path
// ("dec.ups.0.weight"). Small constants are shared initializers (the graph, the
// dynamo exporter) or one Constant node per use (the TorchScript exporter).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/builder.h"

namespace lockstep::vits {

// A module path such as flow / flows.6 / enc / in_layers.0.
struct Path {
  std::vector<std::string> parts;
  Path operator/(const std::string& child) const;
  std::string scope() const;                       // "/flow/flows.6/enc/in_layers.0"
  std::string param(const std::string& leaf) const;  // "flow.flows.6.enc.in_layers.0.weight"
};
Path indexed(const Path& p, const std::string& list, int64_t i);  // p / "list.i"

// N(0, std) float32 tensor whose values depend only on (seed, name): splitmix64 + Box-Muller,
// identical on every host and independent of the order tensors are made in.
Tensor normal_tensor(uint64_t seed, const std::string& name, const Shape& shape, double std);

class Emitter {
 public:
  Emitter(GraphBuilder& b, uint64_t seed, bool dynamo, bool constant_nodes)
      : b(b), seed_(seed), dynamo_(dynamo), constant_nodes_(constant_nodes) {}
  GraphBuilder& b;
  bool dynamo() const { return dynamo_; }

  // A node named after its scope and op type, numbered within the scope.
  int op(const Path& p, const std::string& op_type, const std::vector<int>& inputs, Attrs attrs = {});
  std::vector<int> op_n(const Path& p, const std::string& op_type, const std::vector<int>& inputs,
                        Attrs attrs, int num_outputs);
  int ints(const Path& p, const std::vector<int64_t>& v);  // 1-D int64 constant for a node in p
  int scalar(const Path& p, float v);                      // 0-D float32 constant
  // A constant TorchScript's CSE shares across scopes (split sizes): one unscoped Constant node
  // "Constant_<n>" with output "onnx::<consumer>_<n>" in Constant-node mode.
  int shared_ints(const std::string& consumer, const std::vector<int64_t>& v);
  int param(const Path& p, const std::string& leaf, const Shape& shape, double std);

 private:
  int constant(const Path& p, Tensor t);
  uint64_t seed_;
  bool dynamo_, constant_nodes_;
  std::map<std::string, int> counts_;
  std::map<std::string, int> constants_;  // dtype, shape and bytes -> value
  std::map<std::vector<int64_t>, int> shared_nodes_;
};

// The building blocks shared by the flow and the generator.
struct ConvSpec {
  int64_t in, out, kernel, stride = 1, dilation = 1, pad = 0;
  bool bias = true;
  double weight_std = 0.1, bias_std = 0.1;
};
int conv1d(Emitter& e, const Path& p, int x, const ConvSpec& s);
int conv_transpose1d(Emitter& e, const Path& p, int x, const ConvSpec& s);
// Slice with its constants made in the TorchScript exporter's order (axes, starts, ends, steps);
// steps may be empty (input omitted).
int slice(Emitter& e, const Path& p, int x, int64_t start, int64_t end, int64_t axis, std::vector<int64_t> steps);
// x[:, begin:end] (end INT64_MAX when open), with explicit steps as PyTorch writes.
int slice_channels(Emitter& e, const Path& p, int x, int64_t begin, int64_t end);
int leaky_relu(Emitter& e, const Path& p, int x, double slope);

}  // namespace lockstep::vits
