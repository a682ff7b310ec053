// Fuzzes ONNX import (parse, convert, validate, shape inference) and, for graphs small
// enough, the reference interpreter. Only lockstep::Error may escape the library.
#include <onnx/onnx_pb.h>

#include <cstdint>

#include "core/error.h"
#include "frontend/onnx_import.h"
#include "ops/infer.h"
#include "ref/interpreter.h"

using namespace lockstep;

// Symbolic dims get size 2; inputs are a fixed ramp so runs are reproducible.
static TensorMap small_inputs(const Graph& g) {
  TensorMap feed;
  for (int v : g.inputs) {
    const Value& val = g.values[v];
    if (!val.type.rank_known) throw Error("unknown rank");
    Shape s;
    for (const Dim& d : val.declared) s.push_back(d.known() ? d.value : 2);
    if (shape_numel(s) > 4096) throw Error("input too large to feed");  // the harness's own limit
    RefTensor r(val.type.dtype, s);
    for (int64_t k = 0; k < r.numel(); ++k) r.set(k, static_cast<double>(k % 7) - 3);
    feed[val.name] = from_ref(r);
  }
  return feed;
}

static bool small_enough(const Graph& g, const TensorMap& feed) {
  std::vector<TypeInfo> types = bind_inputs(g, feed);
  GraphTypes gt = infer_graph(g, &types);
  for (const TypeInfo& t : gt.type)
    if (!t.fully_known() || shape_numel(t.dims) > 4096) return false;
  return g.nodes.size() <= 64;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto m;
  if (!m.ParseFromArray(data, static_cast<int>(size))) return 0;
  try {
    Graph g = import_model(m, "fuzz.onnx", "/nonexistent-lockstep-fuzz-dir");
    TensorMap feed = small_inputs(g);
    if (small_enough(g, feed)) run_reference(g, feed);
  } catch (const Error&) {
  }
  return 0;
}
