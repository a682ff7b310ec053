#include "verify/parity.h"

#include <cstdio>

#include "core/sha256.h"
#include "ref/interpreter.h"

namespace lockstep {

std::vector<Agreement> agreement_with_ref(const Graph& g, const TensorMap& inputs, const std::vector<Tensor>& outs) {
  std::vector<RefTensor> ref = run_reference(g, inputs);
  std::vector<Agreement> result;
  for (size_t k = 0; k < ref.size(); ++k) result.push_back(compare(to_ref(outs.at(k)), ref[k]));
  return result;
}

std::string tensor_sha256(const Tensor& t) { return sha256_hex(t.bytes.data(), t.bytes.size()); }

std::string describe(const Agreement& a) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "cosine %.9f rel_l2 %.3g max|d| %.3g @%lld nonfinite %lld%s", a.cosine, a.rel_l2,
                a.max_abs, static_cast<long long>(a.max_abs_index), static_cast<long long>(a.nonfinite_mismatches),
                a.shape_match ? "" : " SHAPE MISMATCH");
  return buf;
}

}  // namespace lockstep
