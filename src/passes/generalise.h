// One compile for every length: the pipeline runs at a few probe values of the graph's
// symbolic dims ("T"), and the plans it gives are unified into one symbolic plan whose shapes
// and index constants are affine in the symbols. Kernels read the symbols at run time;
// instantiate() gives the concrete plan (shapes, launch sizes) for one set of values.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kernel/kernel.h"
#include "ops/infer.h"
#include "passes/pipeline.h"

namespace lockstep {

// c + sum_j k[j] * symbol_j.
struct Affine {
  int64_t c = 0;
  std::vector<int64_t> k;
  bool fixed() const;
  int64_t at(const std::vector<int64_t>& symbols) const;
  std::string str(const std::vector<std::string>& names) const;  // "256*T", "T-1", "7"
};

struct SymbolicPlan {
  kir::Plan plan;                               // symbolic: plan.symbols, plan.symbol_buf
  std::vector<PassRecord> log;                  // of the pipeline at the first probe
  std::vector<std::vector<Affine>> value_dims;  // per value of the graph given: its dims (empty: rank unknown)
  // Per value that shape inference folds at every probe, small and not an initializer (shape
  // arithmetic: Shape -> Gather -> Min, Less, ...): each element affine in the symbols (floats:
  // the same at every probe). Its kernels were built with these values, so a bind checks them.
  struct FoldedValue {
    int value = -1;
    DType dtype = DType::undefined;
    Shape shape;
    std::vector<Affine> ints;   // integer and bool elements
    std::vector<double> floats; // float elements
  };
  std::vector<FoldedValue> folded;
  std::vector<std::vector<int64_t>> probes;     // symbol values the pipeline ran at
  // Every buffer dim that follows the symbols, flat, so that a bind evaluates a short table
  // rather than the dims' expression trees; and the GPU kernels whose launch size follows.
  struct SymbolicDim {
    int buf = -1, axis = -1;
    Affine at;
  };
  std::vector<SymbolicDim> buffer_dims;
  std::vector<int> sized_kernels;
};

// The named symbolic dims of the graph's inputs, in order of first appearance.
std::vector<std::string> graph_symbols(const Graph& g);

// Which of `symbols` axis d of graph input k is declared as; -1 for a fixed or unnamed axis.
int symbol_index(const Graph& g, size_t k, size_t d, const std::vector<std::string>& symbols);

// The symbol values of these input types (types in g.inputs order), and in `where` the input
// and axis each was read from. Throws Error naming both inputs when one symbol has two sizes.
std::vector<int64_t> symbol_values(const Graph& g, const std::vector<TypeInfo>& types,
                                   const std::vector<std::string>& symbols, std::vector<std::string>* where = nullptr);

// The symbolic plan for inputs like `like` (same dtypes and fixed dims, any symbol values), or
// nullopt with `why` saying what depends on a symbol in a way the plan cannot express (then
// the caller compiles for concrete shapes).
std::optional<SymbolicPlan> generalise(const Graph& g, const Specialisation& like, const PipelineOptions& o,
                                       std::string* why);

// The concrete plan at these symbol values: shapes evaluated, launch sizes recomputed. Kernel
// bodies are shared with the symbolic plan (they read the symbols themselves), and `dims` stay,
// marking the buffers whose size the compiled code leaves to the symbols.
kir::Plan instantiate(const SymbolicPlan& s, const std::vector<int64_t>& values);
// The same in place, on a plan instantiate(s) gave (at any values): no copy of the kernels.
void reinstantiate(const SymbolicPlan& s, kir::Plan& instance, const std::vector<int64_t>& values);

// Whether every value's shape that shape inference gives for `types` is the symbolic plan's
// at `values` (so the plan computes what the model asks at this length); else `why` names the
// first value that differs. `scratch`, kept between calls for one graph, saves converting
// the short initializers again at each new length.
bool covers(const Graph& g, const SymbolicPlan& s, const std::vector<TypeInfo>& types,
            const std::vector<int64_t>& values, std::string* why, GraphTypes* scratch = nullptr);

}  // namespace lockstep
