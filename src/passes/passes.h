// The pipeline every target shares: graph passes, lowering, kernel passes. Each pass asks the
// PassManager before each application, so --pass-limit cuts the pipeline anywhere and the
// program stays correct (passes optimise; lowering alone is complete).
#pragma once
#include "graph/graph.h"
#include "kernel/kernel.h"
#include "kernel/target_desc.h"
#include "passes/pass_manager.h"

namespace lockstep {

// Graph level, before shape specialisation.
void fold_constants(Graph& g, PassManager& pm);        // nodes whose inputs are all constant
void eliminate_dead_nodes(Graph& g, PassManager& pm);  // nodes no output depends on
void canonicalize(Graph& g, PassManager& pm);          // Identity removal

// Kernel level, after lowering.
void split_wide_kernels(kir::Plan& p, PassManager& pm);  // required: at most kMaxKernelLoads loads each
void inline_views(kir::Plan& p, PassManager& pm);       // pure index remaps into their readers
void fuse_elementwise(kir::Plan& p, PassManager& pm);   // single-reader elementwise producers
void fuse_epilogues(kir::Plan& p, PassManager& pm);     // elementwise readers into their anchor
void squeeze_reduction_rows(kir::Plan& p, PassManager& pm);  // [L, 1, E] reductions over [L, E]
void remove_dead_kernels(kir::Plan& p);                 // required clean-up, not numbered
// Index / and % and comparisons folded by the loop variables' extents (the same values at every
// point of the loops); not numbered. Not for a probe of a symbolic plan, whose extents change;
// a symbolic plan's own vars are bounded by its dims, affine in the symbols.
void simplify_indices(kir::Plan& p);
// Whether index e lies in [0, d) at every point of kernel k's loops, by the same bounds.
bool index_within(const kir::Plan& p, const kir::Kernel& k, const kir::ExprP& e, const kir::ExprP& d);
void block_constant_rows(kir::Plan& p, PassManager& pm);  // after the schedule: constants in tile order
void transpose_constant_columns(kir::Plan& p, PassManager& pm);  // [column, k] constants stored [k, column]
// After the schedule, on a target that stages host windows: a conv's cheap elementwise producer
// computed in its tiles (window.cpp); each one a numbered application where `pm` is given.
void absorb_windows(kir::Plan& p, const kir::TargetDesc& t, PassManager* pm);

}  // namespace lockstep
