// What a symbolic plan's kernels read from its Symbols buffer: the symbols' values, then one
// multiplier per run-time divisor, so that a GPU kernel divides its index by a length known
// only at run time with two multiplies (ls_udiv32) instead of a division sequence.
#pragma once
#include <cstdint>
#include <vector>

#include "kernel/kernel.h"
#include "kernel/schedule.h"

namespace lockstep::kir {

// A dim expression (affine in the symbols, or a product or exact quotient of such) at these
// symbol values. Throws InternalError for anything else.
int64_t symbolic_value(const Expr& e, const std::vector<int64_t>& symbols, int symbol_buf);

// The dims a GPU kernel's work-item index is unflattened over for tile t: the output's, with
// the dim before the last divided by t.rows and the last by t.cols.
std::vector<ExprP> item_dims(const Plan& p, const Kernel& k, const Schedule& t);

// Collects p.divisors from every GPU-scheduled kernel of a symbolic plan (each non-constant
// stride and dim of its item dims, for each tile it holds) and sizes the Symbols buffer.
void collect_divisors(Plan& p);
// Index of `d` in p.divisors; -1 if it is not one.
int divisor_slot(const Plan& p, const ExprP& d);

// m = floor(2^64 / d) + 1, with which x / d = (x * m) >> 64 exactly for every x < 2^32 and
// 2 <= d < 2^32 (the rounding error of m times x stays under 1/d); 0 for d <= 1.
uint64_t divide_multiplier(int64_t d);
// The Symbols buffer's contents at these symbol values: the values, then each divisor's m.
std::vector<int64_t> symbol_words(const Plan& p, const std::vector<int64_t>& values);

}  // namespace lockstep::kir
