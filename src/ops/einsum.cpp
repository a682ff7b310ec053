// Einsum: the output at each assignment of its labels is the sum, over every assignment of the
// other labels, of the inputs' product (a label repeated within one input takes its diagonal);
// "..." broadcasts. Without "->" the output is the labels seen once, alphabetical, after "...".
#include "ops/einsum.h"

#include <algorithm>
#include <map>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

std::string trimmed(const std::string& s) {
  std::string t;
  for (char ch : s)
    if (ch != ' ') t += ch;
  return t;
}

std::vector<std::string> split_terms(const std::string& lhs) {
  std::vector<std::string> terms(1);
  for (char ch : lhs)
    if (ch == ',') terms.emplace_back();
    else terms.back() += ch;
  return terms;
}

// A term's letters with "..." as '.', checking what it may hold.
std::string term_letters(const OpCtx& c, const std::string& t) {
  std::string out;
  for (size_t k = 0; k < t.size(); ++k) {
    if (t.compare(k, 3, "...") == 0) {
      if (out.find('.') != std::string::npos) c.fail("a term has two ellipses: '" + t + "'");
      out += '.';
      k += 2;
    } else if (std::isalpha(static_cast<unsigned char>(t[k]))) {
      out += t[k];
    } else {
      c.fail(std::string("the equation has '") + t[k] + "', which is not a letter, ',', '->' or '...'");
    }
  }
  return out;
}

}  // namespace

EinsumPlan einsum_plan(const OpCtx& c, const std::vector<Shape>& shapes) {
  std::string eq = trimmed(c.attr_string("equation", ""));
  size_t arrow = eq.find("->");
  std::vector<std::string> terms;
  for (const std::string& t : split_terms(eq.substr(0, arrow))) terms.push_back(term_letters(c, t));
  if (terms.size() != shapes.size())
    c.fail("the equation has " + std::to_string(terms.size()) + " terms for " + std::to_string(shapes.size()) +
           " inputs");
  // The ellipsis's dims: the broadcast of each input's dims under it, right-aligned.
  Shape ell;
  for (size_t k = 0; k < terms.size(); ++k) {
    int64_t named =
        static_cast<int64_t>(std::count_if(terms[k].begin(), terms[k].end(), [](char ch) { return ch != '.'; }));
    int64_t rank = static_cast<int64_t>(shapes[k].size()), covered = rank - named;
    bool has = terms[k].find('.') != std::string::npos;
    if (covered < 0 || (!has && covered != 0))
      c.fail("term '" + terms[k] + "' does not match input " + std::to_string(k) + "'s rank " + std::to_string(rank));
    if (static_cast<int64_t>(ell.size()) < covered) ell.insert(ell.begin(), covered - ell.size(), 1);
    size_t at = terms[k].find('.');
    for (int64_t j = 0; j < covered; ++j) {
      int64_t d = shapes[k][at + j], &e = ell[ell.size() - covered + j];
      if (d != 1 && e != 1 && d != e) c.fail("the dims under '...' do not broadcast");
      if (d != 1) e = d;
    }
  }
  std::string out;
  std::map<char, int> seen;
  for (const std::string& t : terms)
    for (char ch : t) ++seen[ch];
  if (arrow != std::string::npos) {
    out = term_letters(c, eq.substr(arrow + 2));
  } else {
    if (!ell.empty()) out += '.';
    for (auto [ch, n] : seen)
      if (ch != '.' && n == 1) out += ch;
  }
  EinsumPlan p;
  std::map<char, int> id;
  auto add = [&](char ch) {
    if (!id.count(ch)) {
      id[ch] = static_cast<int>(p.size.size());
      p.size.push_back(-2);
    }
  };
  for (char ch : out) {
    if (ch == '.') {
      for (int64_t d : ell) {
        p.output.push_back(static_cast<int>(p.size.size()));
        p.size.push_back(d);
      }
      continue;
    }
    if (!seen.count(ch)) c.fail(std::string("output label '") + ch + "' is in no input");
    if (id.count(ch)) c.fail(std::string("output label '") + ch + "' repeats");
    add(ch);
    p.output.push_back(id[ch]);
  }
  int ell_first = out.find('.') == std::string::npos ? -1 : static_cast<int>(out.find('.'));
  std::vector<int> ell_ids;
  if (ell_first < 0) {
    if (!ell.empty()) c.fail("the output leaves out '...', whose dims cannot be summed (as numpy says)");
  } else {
    int pos = 0;
    for (char ch : out.substr(0, ell_first)) pos += ch != '.';
    for (size_t j = 0; j < ell.size(); ++j) ell_ids.push_back(p.output[pos + j]);
  }
  for (size_t k = 0; k < terms.size(); ++k) {
    std::vector<int> labels;
    int64_t covered =
        static_cast<int64_t>(shapes[k].size()) -
        static_cast<int64_t>(std::count_if(terms[k].begin(), terms[k].end(), [](char ch) { return ch != '.'; }));
    for (char ch : terms[k]) {
      if (ch == '.') {
        for (int64_t j = 0; j < covered; ++j) labels.push_back(ell_ids[ell.size() - covered + j]);
        continue;
      }
      add(ch);
      labels.push_back(id[ch]);
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      int64_t dim = shapes[k][d], &s = p.size[labels[d]];
      bool is_ell = std::find(ell_ids.begin(), ell_ids.end(), labels[d]) != ell_ids.end();
      if (is_ell) continue;
      if (s != -2 && dim >= 0 && s >= 0 && s != dim)
        c.fail("label sizes differ across the inputs (" + std::to_string(s) + " and " + std::to_string(dim) + ")");
      if (dim >= 0) s = dim;
      else if (s == -2) s = -1;
    }
    p.inputs.push_back(labels);
  }
  return p;
}

namespace {

void infer_einsum(InferCtx& c) {
  require_op_exists(c, {{12, 0}});
  std::vector<Shape> shapes;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    if (c.input(k).dtype != c.input(0).dtype) c.fail("the inputs' dtypes differ");
    if (c.input(k).dtype == DType::boolean) c.fail("Einsum of bool is not supported");
    if (!c.input(k).rank_known) return c.set_output_unknown_rank(0, c.input(0).dtype);
    shapes.push_back(c.input(k).dims);
  }
  EinsumPlan p = einsum_plan(c, shapes);
  Shape dims;
  for (int l : p.output) dims.push_back(p.size[l]);
  c.set_output(0, c.input(0).dtype, dims);
}

void ref_einsum(RefCtx& c) {
  std::vector<Shape> shapes;
  for (size_t k = 0; k < c.in.size(); ++k) shapes.push_back(c.input(k).shape);
  EinsumPlan p = einsum_plan(c, shapes);
  Shape out_dims;
  for (int l : p.output) out_dims.push_back(p.size[l]);
  RefTensor y(c.input(0).dtype, out_dims);
  std::vector<int64_t> at(p.size.size(), 0);
  std::vector<std::vector<int64_t>> strides;
  for (const Shape& s : shapes) strides.push_back(shape_strides(s));
  size_t outs = p.output.size();
  int64_t sums = 1;
  for (size_t l = outs; l < p.size.size(); ++l) sums *= p.size[l];
  for (int64_t e = 0; e < y.numel(); ++e) {
    for (size_t j = outs, rest = e; j-- > 0;) {
      at[j] = static_cast<int64_t>(rest) % p.size[j];
      rest /= p.size[j];
    }
    double acc = 0;
    uint64_t iacc = 0;
    for (int64_t s = 0; s < sums; ++s) {
      for (size_t j = p.size.size(), rest = s; j-- > outs;) {
        at[j] = static_cast<int64_t>(rest) % p.size[j];
        rest /= p.size[j];
      }
      double prod = 1;
      uint64_t iprod = 1;
      for (size_t k = 0; k < shapes.size(); ++k) {
        int64_t flat = 0;
        for (size_t d = 0; d < shapes[k].size(); ++d)
          flat += (shapes[k][d] == 1 ? 0 : at[p.inputs[k][d]]) * strides[k][d];
        if (y.is_float()) prod *= c.input(k).f[flat];
        else iprod *= static_cast<uint64_t>(c.input(k).i[flat]);
      }
      acc += prod;
      iacc += iprod;
    }
    if (y.is_float()) y.f[e] = acc;
    else y.i[e] = static_cast<int64_t>(iacc);
  }
  c.out[0] = std::move(y);
}

const OpDef kOps[] = {
    {"Einsum", 1, 1 << 20, 1, 1, {"equation"}, infer_einsum, ref_einsum},
};

}  // namespace

std::span<const OpDef> einsum_ops() { return kOps; }

}  // namespace lockstep
