// Shared state of one lowering run; the op families live in lower_*.cpp.
#pragma once
#include "kernel/lower.h"
#include "ops/op.h"

namespace lockstep::kir {

struct Lowering {
  const Graph& g;
  const GraphTypes& types;
  Plan plan;
  std::vector<int> buf;  // graph value id -> buffer holding it, -1 before it is computed

  const TypeInfo& type(int value) const { return types.type[value]; }
  const Shape& shape(int value) const { return types.type[value].dims; }
  int add_buffer(Buffer::Kind kind, DType t, const Shape& s, const std::string& name);
  // Reads value `v` at a multi-index (one expr per dim of v).
  ExprP read(int v, std::vector<ExprP> idx) const;
  // Reads `v` broadcast against an output of rank `rank` indexed by vars 0..rank-1.
  ExprP read_bcast(int v, size_t rank) const;
  // A new kernel computing graph value `v` (output k of node n).
  void emit(int n, int v, ExprP body);
  // A kernel into a fresh temporary buffer (e.g. a padded copy); returns the buffer id.
  int emit_temp(int n, DType t, const Shape& s, ExprP body);
  // A check kernel: the fixed-order sum (no atomics) of `flags`, int64 0 or 1 at vars 0.. over
  // `extents`, which the runtime turns into an error naming node n and `what` unless it is 0.
  void count_check(int n, ExprP flags, const Shape& extents, std::string what);
};

// float16 and bfloat16 values computed in float32: the reference computes a node in float64
// and rounds once, when it stores, so a square or a partial sum must not round (or overflow)
// at the narrow type. narrowed() rounds back, once.
ExprP widened(ExprP e);
ExprP narrowed(ExprP e, DType t);

// An index read at run time, wrapped from [-len, 0) into range; `ok` says it is valid.
struct GatherIndex {
  ExprP i, ok;
};
// The index at `at` in `ind`, counted back from len when negative, and whether it is in range.
GatherIndex gather_index(Lowering& L, int ind, int64_t len, std::vector<ExprP> at);
// The same with `ind` read at vars first_var.. (one per dim).
GatherIndex gather_index(Lowering& L, int ind, int64_t len, int first_var);

// Families: each returns false when the op is not theirs.
bool lower_elementwise(Lowering& L, int n);
bool lower_movement(Lowering& L, int n);
bool lower_anchor(Lowering& L, int n);
bool lower_reduce(Lowering& L, int n);
bool lower_activation(Lowering& L, int n);
bool lower_normalization(Lowering& L, int n);
bool lower_pool(Lowering& L, int n);
bool lower_losses(Lowering& L, int n);
bool lower_resizes(Lowering& L, int n);
bool lower_attention(Lowering& L, int n);
bool lower_rotary(Lowering& L, int n);
bool lower_scatters(Lowering& L, int n);
bool lower_topks(Lowering& L, int n);
bool lower_causal_convs(Lowering& L, int n);
bool lower_einsums(Lowering& L, int n);
bool lower_grid_samples(Lowering& L, int n);

}  // namespace lockstep::kir
