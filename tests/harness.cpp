#include "harness.h"

#include <cmath>

#include "backend/registry.h"
#include "core/error.h"
#include "core/random.h"
#include "core/sha256.h"
#include "runtime/program.h"

namespace lockstep {

Tensor ints_tensor(const std::vector<int64_t>& v) {
  Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
  for (size_t k = 0; k < v.size(); ++k) t.data<int64_t>()[k] = v[k];
  return t;
}

Tensor floats_tensor(const std::vector<float>& v) {
  Tensor t(DType::f32, {static_cast<int64_t>(v.size())});
  for (size_t k = 0; k < v.size(); ++k) t.data<float>()[k] = v[k];
  return t;
}

Graph build_case(const OpCase& c) {
  GraphBuilder b(c.opset);
  std::vector<int> ins(c.node_inputs(), -1);
  size_t next = 0;
  for (size_t k = 0; k < ins.size(); ++k) {
    if (c.is_omitted(k)) continue;
    bool is_const = false;
    for (const auto& [idx, t] : c.constants)
      if (idx == k) {
        ins[k] = b.initializer("c" + std::to_string(k), t);
        is_const = true;
      }
    if (is_const) continue;
    const OpCase::Input& in = c.inputs.at(next++);
    std::vector<Dim> dims;
    for (int64_t d : in.shape) dims.push_back(dim(d));
    ins[k] = b.input("x" + std::to_string(k), in.dtype, dims);
  }
  std::vector<int> outs = b.node(c.op, c.op + "_under_test", ins, c.attrs, c.outputs);
  for (int o : outs) b.output(o);
  return b.finish();
}

static TensorMap case_inputs(const OpCase& c, const Graph& g) {
  std::string seed_text = c.name;
  SplitMix64 rng(std::stoull(sha256_hex(seed_text.data(), seed_text.size()).substr(0, 15), nullptr, 16));
  TensorMap feed;
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const OpCase::Input& in = c.inputs[k];
    RefTensor r(in.dtype, in.shape);
    for (int64_t e = 0; e < r.numel(); ++e) {
      double v = rng.uniform(in.lo, in.hi);
      if (in.dtype == DType::boolean) r.i[e] = v > 0;
      else if (r.is_float()) r.f[e] = v;
      else r.i[e] = static_cast<int64_t>(std::floor(v));
    }
    feed[g.values[g.inputs[k]].name] = from_ref(r);
  }
  return feed;
}

CaseOutcome run_case(const OpCase& c, const std::string& target) {
  CaseOutcome out{c.name, target, CaseOutcome::Failed, ""};
  try {
    Graph g = build_case(c);
    TensorMap feed = case_inputs(c, g);
    std::vector<RefTensor> want;
    for (const Tensor& t : compile(g, "ref")->run(feed)) want.push_back(to_ref(t));
    CompileOptions opts;
    opts.checked = true;  // sentinels around every buffer, poisoned dead memory
    opts.verify_each = true;
    std::vector<Tensor> got = compile(g, target, opts)->run(feed);
    for (size_t k = 0; k < want.size(); ++k) {
      RefTensor r = to_ref(got[k]);
      if (!r.is_float()) {
        std::string why = allclose_mismatch(r, want[k], 0, 0);
        if (!why.empty()) {
          out.detail = "output " + std::to_string(k) + ": " + why;
          return out;
        }
        continue;
      }
      Agreement a = compare(r, want[k]);
      if (!agrees(a)) {
        out.detail = "output " + std::to_string(k) + ": cosine " + std::to_string(a.cosine) + ", rel L2 " +
                     std::to_string(a.rel_l2) + ", max |d| " + std::to_string(a.max_abs) + " at " +
                     std::to_string(a.max_abs_index) + ", non-finite mismatches " +
                     std::to_string(a.nonfinite_mismatches);
        return out;
      }
    }
    out.status = CaseOutcome::Passed;
  } catch (const Unsupported& e) {
    out.status = CaseOutcome::Unsupported;
    out.detail = e.what();
  } catch (const std::exception& e) {
    out.detail = e.what();
  }
  return out;
}

}  // namespace lockstep
