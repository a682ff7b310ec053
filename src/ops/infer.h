// Whole-graph shape and dtype inference with small-value propagation, so that shape
// arithmetic (Shape -> Gather -> Concat -> Reshape) resolves to concrete dims.
#pragma once
#include <optional>
#include <vector>

#include "graph/graph.h"

namespace lockstep {

struct OpDef;

struct GraphTypes {
  std::vector<TypeInfo> type;                 // per value id
  std::vector<std::optional<RefTensor>> value;  // per value id, when known without running
  std::vector<const OpDef*> defs;               // per node, once its schema checks passed
};

// Checks node `n` against its OpDef: op supported, arity, attributes known, and returns the
// OpDef. Throws Error.
const OpDef* check_node_schema(const Graph& g, int n);

// Runs every node's shape rule in order. `inputs` gives the graph inputs' types (from actual
// tensors at run time); when null, the declared types are used and symbols stay unknown.
// `input_values`, when given, holds graph input values to specialise on (null entries: not).
// Initializers of at most `fold_initializers` elements take part with their values; binding a
// new length passes a small bound, as only short shape parameters decide shapes.
GraphTypes infer_graph(const Graph& g, const std::vector<TypeInfo>* inputs = nullptr,
                       const std::vector<const RefTensor*>* input_values = nullptr,
                       int64_t fold_initializers = int64_t{1} << 16);

// infer_graph again in `gt` (which an infer_graph of `g` gave) at new input types, no input
// values: initializer entries are kept, so binding a new length converts no weights again.
void reinfer_graph(const Graph& g, GraphTypes& gt, const std::vector<TypeInfo>& inputs);

// Values up to this many elements are folded during inference (shape arithmetic, scalars).
constexpr int64_t kFoldLimit = 1 << 16;
// No tensor may have more elements than this (2^40); larger shapes are errors, not overflows.
constexpr int64_t kMaxElements = int64_t{1} << 40;

}  // namespace lockstep
