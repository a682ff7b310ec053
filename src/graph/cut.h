// Prefix cuts: the subgraph that computes chosen values, with those values as its outputs
// (onnx.utils.extract_model's job, kept in-process for bisection by prefix cuts).
#pragma once
#include <string>
#include <vector>

#include "graph/graph.h"

namespace lockstep {

// Each name is a value name or a node id (a named node's id is its name; meaning that node's
// first output). Keeps only the nodes, initializers and graph inputs those values depend on,
// in their original order; node names and ids, value names and known types are kept. Unknown
// names -> one Error naming them.
Graph cut_at(const Graph& g, const std::vector<std::string>& value_or_node_names);

// The value a cut name refers to, or -1 (value names first, then node ids).
int resolve_cut_name(const Graph& g, const std::string& name);

}  // namespace lockstep
