// Max, Min, Sum and Mean: one output from any number of inputs of one dtype, broadcast
// together (from opset 8; before it every input has the output's shape), folded left to right.
#include <climits>
#include <numeric>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

const TypeHistory kExtremumTypes = {{6, kFloat}, {12, kNumeric & ~kBf16}, {13, kNumeric}};
const TypeHistory kSumTypes = {{6, kFloat}, {13, kFloat | kBf16}};

std::vector<size_t> every_input(const OpCtx& c) {
  std::vector<size_t> all(c.num_inputs());
  std::iota(all.begin(), all.end(), size_t{0});
  return all;
}

void infer_variadic(InferCtx& c, TypeHistory h) {
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    require_types(c, k, h);
    c.require_same_dtype(0, k);
  }
  TypeInfo out = infer_broadcast(c, every_input(c), c.input(0).dtype);
  for (size_t k = 0; c.opset < 8 && out.rank_known && k < c.num_inputs(); ++k)
    if (c.input(k).dims != out.dims)
      c.fail("inputs must all have one shape before opset 8 (the model imports opset " + std::to_string(c.opset) + ")");
  c.out[0] = out;
}

// NaN wins, as numpy's maximum and minimum give it; of equal values the first stays, so
// Max(-0, +0) is -0 and Max(+0, -0) is +0 (the targets' ls_max_nan / ls_min_nan).
double max_nan(double a, double b) { return a != a ? a : (b > a || b != b) ? b : a; }
double min_nan(double a, double b) { return a != a ? a : (b < a || b != b) ? b : a; }

// out[k] = step(...step(x0, x1)..., xn) over the broadcast; `mean` divides the float sum by n.
template <class FStep, class IStep>
void ref_fold(RefCtx& c, FStep fstep, IStep istep, bool mean) {
  std::vector<Shape> shapes;
  for (size_t k = 0; k < c.num_inputs(); ++k) shapes.push_back(c.input(k).shape);
  const RefTensor& x0 = c.input(0);
  RefTensor out(x0.dtype, ref_broadcast(c, every_input(c)));
  size_t n = shapes.size();
  for_each_broadcast(out.shape, shapes, [&](int64_t k, const int64_t* ix) {
    if (x0.is_float()) {
      double acc = x0.f[ix[0]];
      for (size_t j = 1; j < n; ++j) acc = fstep(acc, c.input(j).f[ix[j]]);
      out.set(k, mean ? acc / static_cast<double>(n) : acc);
    } else {
      int64_t acc = x0.i[ix[0]];
      for (size_t j = 1; j < n; ++j) acc = istep(acc, c.input(j).i[ix[j]], x0.dtype);
      out.set_int(k, acc);
    }
  });
  c.out[0] = std::move(out);
}

void ref_max(RefCtx& c) {
  ref_fold(
      c, max_nan, [](int64_t a, int64_t b, DType t) { return int_less(a, b, t) ? b : a; }, false);
}

void ref_min(RefCtx& c) {
  ref_fold(
      c, min_nan, [](int64_t a, int64_t b, DType t) { return int_less(b, a, t) ? b : a; }, false);
}

double add(double a, double b) { return a + b; }
int64_t no_int(int64_t a, int64_t, DType) { return a; }  // Sum and Mean take floats only

const OpDef kOps[] = {
    {"Max", 1, INT_MAX, 1, 1, {}, [](InferCtx& c) { infer_variadic(c, kExtremumTypes); }, ref_max},
    {"Min", 1, INT_MAX, 1, 1, {}, [](InferCtx& c) { infer_variadic(c, kExtremumTypes); }, ref_min},
    {"Sum",
     1,
     INT_MAX,
     1,
     1,
     {},
     [](InferCtx& c) { infer_variadic(c, kSumTypes); },
     [](RefCtx& c) { ref_fold(c, add, no_int, false); }},
    {"Mean",
     1,
     INT_MAX,
     1,
     1,
     {},
     [](InferCtx& c) { infer_variadic(c, kSumTypes); },
     [](RefCtx& c) { ref_fold(c, add, no_int, true); }},
};

}  // namespace

std::span<const OpDef> elementwise_variadic_ops() { return kOps; }

}  // namespace lockstep
