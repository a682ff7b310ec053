#include "graph/bind.h"

#include <set>

#include "core/error.h"

namespace lockstep {

static std::string declared_str(const Value& v) {
  if (!v.type.rank_known) return std::string(dtype_name(v.type.dtype)) + "[unknown rank]";
  std::string s = std::string(dtype_name(v.type.dtype)) + "[";
  for (size_t k = 0; k < v.declared.size(); ++k) {
    if (k) s += ",";
    const Dim& d = v.declared[k];
    s += d.known() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol);
  }
  return s + "]";
}

std::vector<TypeInfo> bind_inputs(const Graph& g, const TensorMap& inputs) {
  std::set<std::string> declared;  // a set: a graph of thousands of inputs binds in n log n
  for (int v : g.inputs) declared.insert(g.values[v].name);
  for (const auto& [name, t] : inputs) {
    if (!declared.count(name)) {
      std::string names;
      for (int v : g.inputs) names += (names.empty() ? "" : ", ") + g.values[v].name;
      throw Error("input '" + name + "' is not an input of the model (its inputs: " + names + ")");
    }
  }
  std::map<std::string, std::pair<int64_t, std::string>> symbols;  // size, and where it was read
  std::vector<TypeInfo> types;
  for (int v : g.inputs) {
    const Value& val = g.values[v];
    auto it = inputs.find(val.name);
    if (it == inputs.end()) throw Error("model input '" + val.name + "' was not given");
    const Tensor& t = it->second;
    std::string want = declared_str(val);
    std::string got = TypeInfo{t.dtype, true, t.shape}.str();
    if (t.dtype != val.type.dtype)
      throw Error("input '" + val.name + "': dtype " + dtype_name(t.dtype) + " given, model expects " + want);
    if (val.type.rank_known) {
      if (t.shape.size() != val.declared.size())
        throw Error("input '" + val.name + "': shape " + got + " has rank " +
                    std::to_string(t.shape.size()) + ", model expects " + want);
      for (size_t k = 0; k < t.shape.size(); ++k) {
        const Dim& d = val.declared[k];
        if (d.known() && d.value != t.shape[k])
          throw Error("input '" + val.name + "': shape " + got + " differs from " + want +
                      " at axis " + std::to_string(k));
        if (d.known() || d.symbol.empty()) continue;
        std::string here = "input '" + val.name + "' axis " + std::to_string(k);
        auto [pos, fresh] = symbols.emplace(d.symbol, std::make_pair(t.shape[k], here));
        if (!fresh && pos->second.first != t.shape[k])
          throw Error("inputs disagree on dimension '" + d.symbol + "': " + pos->second.second + " is " +
                      std::to_string(pos->second.first) + " but " + here + " is " + std::to_string(t.shape[k]) +
                      " (the model declares both as '" + d.symbol + "', so they must be equal)");
      }
    }
    types.push_back(TypeInfo{t.dtype, true, t.shape});
  }
  return types;
}

}  // namespace lockstep
