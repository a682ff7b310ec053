#include "cli/inputs.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <numbers>
#include <sstream>

#include "core/error.h"
#include "core/memory.h"
#include "core/text.h"
#include "frontend/npy.h"
#include "frontend/onnx_import.h"

namespace lockstep::cli {

const char* const kInputGenerationHelp =
    "Inputs not given with --input are generated, the same on every machine:\n"
    "  k     = the input's position among the model's graph inputs (0-based, initializers\n"
    "          excluded, given inputs counted)\n"
    "  state = seed + 0x9E3779B97F4A7C15 * (k + 1)  (mod 2^64)\n"
    "  each element, in row-major order, takes the next splitmix64 output x:\n"
    "    state += 0x9E3779B97F4A7C15; z = state;\n"
    "    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;\n"
    "    x = z ^ (z >> 31)\n"
    "  float types: (x >> 11) * 2^-53 * 2 - 1, uniform in [-1, 1), rounded to the dtype\n"
    "  integer types: x mod 10, in [0, 9];  bool: x >> 63\n"
    "Symbolic dims take their size from --dim SYMBOL=N or from a given input that has them.\n"
    "--seed-inputs vits: z_p[b, c, t] = 0.5 * sin(2*pi*(3c + t)/128) and y_mask = 1, for the\n"
    "inputs named z_p and y_mask or, failing names, the first and second 3-D float inputs;\n"
    "other inputs are generated as above.";

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// "float32[1,T,?]" as the model declares it.
std::string declared_str(const Value& v) {
  std::string s = dtype_name(v.type.dtype);
  if (!v.type.rank_known) return s + "[unknown rank]";
  s += "[";
  for (size_t k = 0; k < v.declared.size(); ++k) {
    const Dim& d = v.declared[k];
    s += (k ? "," : "") + (d.known() ? std::to_string(d.value) : d.symbol.empty() ? "?" : d.symbol);
  }
  return s + "]";
}

int input_position(const Graph& g, const std::string& name) {
  for (size_t k = 0; k < g.inputs.size(); ++k)
    if (g.values[g.inputs[k]].name == name) return static_cast<int>(k);
  return -1;
}

std::string input_names(const Graph& g) {
  std::string names;
  for (int v : g.inputs) names += (names.empty() ? "" : ", ") + g.values[v].name;
  return names.empty() ? "none" : names;
}

// Checks a given tensor against the declared input; records the symbols it binds.
void check_given(const Value& v, const Tensor& t, const std::string& file,
                 std::map<std::string, std::pair<int64_t, std::string>>& bound) {
  std::string what = "input '" + v.name + "' from '" + file + "'";
  std::string got = TypeInfo{t.dtype, true, t.shape}.str();
  if (t.dtype != v.type.dtype)
    throw Error(what + ": dtype " + dtype_name(t.dtype) + ", but the model expects " + declared_str(v));
  if (!v.type.rank_known) return;
  if (t.shape.size() != v.declared.size())
    throw Error(what + ": shape " + got + " has rank " + std::to_string(t.shape.size()) +
                ", but the model expects " + declared_str(v));
  for (size_t k = 0; k < t.shape.size(); ++k) {
    const Dim& d = v.declared[k];
    if (d.known() && d.value != t.shape[k])
      throw Error(what + ": shape " + got + " differs from the model's " + declared_str(v) +
                  " at axis " + std::to_string(k));
    if (d.known() || d.symbol.empty()) continue;
    auto [it, fresh] = bound.emplace(d.symbol, std::pair{t.shape[k], what});
    if (!fresh && it->second.first != t.shape[k])
      throw Error(what + ": dimension '" + d.symbol + "' is " + std::to_string(t.shape[k]) +
                  ", but " + it->second.second + " sets it to " + std::to_string(it->second.first));
  }
}

// Concrete shape of an input to generate, or an Error saying what to pass.
Shape generated_shape(const Value& v, const std::map<std::string, std::pair<int64_t, std::string>>& bound) {
  if (!v.type.rank_known)
    throw Error("input '" + v.name + "' has no declared shape; give it with --input " + v.name + "=FILE.npy");
  Shape s;
  int64_t n = 1;
  for (size_t k = 0; k < v.declared.size(); ++k) {
    const Dim& d = v.declared[k];
    int64_t size = d.value;
    if (!d.known() && d.symbol.empty())
      throw Error("input '" + v.name + "' has a dimension of unknown size at axis " + std::to_string(k) +
                  "; give the input with --input " + v.name + "=FILE.npy");
    if (!d.known()) {
      auto it = bound.find(d.symbol);
      if (it == bound.end())
        throw Error("input '" + v.name + "' has symbolic dimension '" + d.symbol + "' (axis " +
                    std::to_string(k) + "); give its size with --dim " + d.symbol + "=N");
      size = it->second.first;
    }
    if (size != 0 && n > (int64_t{1} << 40) / size)
      throw Error("input '" + v.name + "' would have more than 2^40 elements");
    n *= size;
    s.push_back(size);
  }
  return s;
}

Tensor random_input(const Value& v, const Shape& shape, uint64_t seed, size_t index) {
  RefTensor r(v.type.dtype, shape);
  uint64_t state = input_stream_seed(seed, index);
  for (int64_t k = 0; k < r.numel(); ++k) {
    uint64_t x = splitmix64_next(state);
    if (r.is_float()) r.f[k] = static_cast<double>(x >> 11) * 0x1p-53 * 2.0 - 1.0;
    else if (v.type.dtype == DType::boolean) r.i[k] = static_cast<int64_t>(x >> 63);
    else r.i[k] = static_cast<int64_t>(x % 10);
  }
  return from_ref(r);
}

// The seed's VITS inputs; `role` 0 is z_p, 1 is y_mask.
Tensor vits_input(const Value& v, const Shape& shape, int role) {
  RefTensor r(v.type.dtype, shape);
  if (role == 1) {
    for (int64_t k = 0; k < r.numel(); ++k) r.set(k, 1.0);
    return from_ref(r);
  }
  if (shape.size() != 3)
    throw Error("--seed-inputs vits: input '" + v.name + "' is " + declared_str(v) +
                ", but z_p needs 3 dims [batch, channels, time]");
  int64_t C = shape[1], T = shape[2];
  for (int64_t k = 0; k < r.numel(); ++k) {
    int64_t c = (k / T) % C, t = k % T;
    r.set(k, 0.5 * std::sin(2.0 * std::numbers::pi * static_cast<double>(3 * c + t) / 128.0));
  }
  return from_ref(r);
}

// Positions in g.inputs of z_p and y_mask: by name, else the 3-D float inputs in order.
std::pair<int, int> vits_roles(const Graph& g) {
  int roles[2] = {input_position(g, "z_p"), input_position(g, "y_mask")};
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const Value& v = g.values[g.inputs[k]];
    bool is_3d_float = dtype_is_float(v.type.dtype) && v.type.rank_known && v.declared.size() == 3;
    if (!is_3d_float || roles[0] == int(k) || roles[1] == int(k)) continue;
    for (int& r : roles)
      if (r < 0) { r = static_cast<int>(k); break; }
  }
  if (roles[0] < 0)
    throw Error("--seed-inputs vits: the model has no input named 'z_p' and no 3-D float input (its inputs: " +
                input_names(g) + ")");
  return {roles[0], roles[1]};
}

// Symbols every graph input declares, for checking --dim.
std::map<std::string, bool> model_symbols(const Graph& g) {
  std::map<std::string, bool> syms;
  for (int v : g.inputs)
    for (const Dim& d : g.values[v].declared)
      if (!d.known() && !d.symbol.empty()) syms[d.symbol] = true;
  return syms;
}

}  // namespace

std::vector<std::string> input_paths(const std::string& model, const InputSpec& spec) {
  std::vector<std::string> paths = {model};
  std::error_code ec;
  if (std::filesystem::is_directory(model, ec)) {
    paths.push_back((std::filesystem::path(model) / "model.onnx").string());
    for (const auto& e : std::filesystem::recursive_directory_iterator(model, ec)) paths.push_back(e.path().string());
  }
  for (const std::string& f : spec.files)
    if (size_t eq = f.find('='); eq != std::string::npos) paths.push_back(f.substr(eq + 1));
  return paths;
}

// A seed is any 64-bit unsigned value: "-1" or 2^64 would wrap, so they are errors.
uint64_t parse_seed(const std::string& text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw Error("--seed: '" + text + "' is not an integer from 0 to 18446744073709551615");
  return v;
}

int64_t parse_size(const std::string& text, const std::string& what) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw Error(what + ": '" + text + "' is not a non-negative integer");
  return v;
}

Graph load_quietly(const std::function<Graph()>& load) {
  std::ostringstream held;
  struct Restore {
    std::streambuf* old;
    ~Restore() { std::cerr.rdbuf(old); }
  } restore{std::cerr.rdbuf(held.rdbuf())};
  Graph g = load();
  std::cerr.rdbuf(restore.old);
  std::cerr << printable(held.str(), true);
  return g;
}

Graph load_model(const std::string& file, const InputSpec& spec) {
  Graph g = load_quietly([&] { return load_onnx(file); });
  g.random_seed = spec.seed;
  return g;
}

void add_input_flags(CLI::App& app, InputSpec& spec) {
  app.add_option("--input", spec.files, "NAME=FILE.npy: value of a model input (repeatable)");
  app.add_option_function<std::string>(
         "--seed", [&spec](const std::string& v) { spec.seed = parse_seed(v); },
         "Seed for generated inputs and for random ops without a seed attribute (0 to 2^64 - 1)")
      ->type_name("N")
      ->default_str("0");
  app.add_option("--seed-inputs", spec.seed_inputs, "Named input recipe: vits");
  app.add_option("--dim", spec.dims, "SYMBOL=N: size of a symbolic input dimension (repeatable)");
}

void add_sweep_flag(CLI::App& app, std::vector<std::string>& lists) {
  app.add_option("--dims", lists,
                 "SYMBOL=N1,N2,...: run each length in turn, in one process (repeatable; lists of equal length go together)");
}

std::vector<InputSpec> sweep_specs(const InputSpec& spec, const std::vector<std::string>& lists) {
  if (lists.empty()) return {spec};
  std::vector<std::pair<std::string, std::vector<std::string>>> sweep;
  for (const std::string& l : lists) {
    auto [symbol, values] = split_assignment(l, "--dims");
    std::vector<std::string> each;
    for (size_t at = 0; at <= values.size();) {
      size_t comma = values.find(',', at);
      if (comma == std::string::npos) comma = values.size();
      each.push_back(values.substr(at, comma - at));
      if (each.back().empty()) throw Error("--dims " + l + ": an empty length in the list");
      parse_size(each.back(), "--dims " + l);
      at = comma + 1;
    }
    for (const auto& [other, values_] : sweep)
      if (other == symbol) throw Error("--dims " + l + ": '" + symbol + "' is swept twice");
    if (!sweep.empty() && each.size() != sweep[0].second.size())
      throw Error("--dims " + l + ": " + std::to_string(each.size()) + " lengths, but --dims " + sweep[0].first + " has " +
                  std::to_string(sweep[0].second.size()));
    sweep.emplace_back(symbol, each);
  }
  std::vector<InputSpec> steps;
  for (size_t k = 0; k < sweep[0].second.size(); ++k) {
    InputSpec step = spec;
    step.swept = lists;
    for (const auto& [symbol, values] : sweep) {
      std::erase_if(step.dims, [&](const std::string& d) { return split_assignment(d, "--dim").first == symbol; });
      step.dims.push_back(symbol + "=" + values[k]);
    }
    steps.push_back(step);
  }
  return steps;
}

std::string sweep_label(const InputSpec& step, const std::vector<std::string>& lists) {
  std::string s;
  for (const std::string& l : lists) {
    std::string symbol = split_assignment(l, "--dims").first;
    for (const std::string& d : step.dims)
      if (split_assignment(d, "--dim").first == symbol) s += (s.empty() ? "" : " ") + d;
  }
  return s;
}

uint64_t input_stream_seed(uint64_t seed, size_t input_index) {
  return seed + kGolden * (static_cast<uint64_t>(input_index) + 1);
}

std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& option) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(option + " '" + text + "': expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

TensorMap make_inputs(const Graph& g, const InputSpec& spec) {
  TensorMap given;
  std::map<std::string, std::pair<int64_t, std::string>> bound;  // symbol -> size, who set it
  for (const std::string& arg : spec.files) {
    auto [name, file] = split_assignment(arg, "--input");
    int pos = input_position(g, name);
    if (pos < 0)
      throw Error("--input '" + name + "' (" + file + "): the model has no input named '" + name +
                  "' (its inputs: " + input_names(g) + ")");
    if (given.count(name)) throw Error("--input '" + name + "' is given twice");
    Tensor t = read_npy(file);
    check_given(g.values[g.inputs[pos]], t, file, bound);
    given[name] = std::move(t);
  }
  auto symbols = model_symbols(g);
  for (const std::string& arg : spec.dims) {
    auto [sym, text] = split_assignment(arg, "--dim");
    // The flag that set it, for errors: --dim, or the --dims list of a sweep.
    std::string flag = "--dim " + sym, who = "--dim " + arg;
    for (const std::string& l : spec.swept)
      if (split_assignment(l, "--dims").first == sym) flag = "--dims " + l, who = flag + " (at " + arg + ")";
    int64_t size = parse_size(text, "--dim " + sym);
    if (!symbols.count(sym)) {
      std::string names;
      for (const auto& [s, _] : symbols) names += (names.empty() ? "" : ", ") + s;
      throw Error(flag + ": the model's inputs have no dimension named '" + sym +
                  "' (symbols: " + (names.empty() ? "none" : names) + ")");
    }
    auto [it, fresh] = bound.emplace(sym, std::pair{size, who});
    if (!fresh && it->second.first != size)
      throw Error(who + " conflicts with " + it->second.second + ", which sets '" + sym +
                  "' to " + std::to_string(it->second.first));
  }
  std::pair<int, int> roles{-1, -1};
  if (spec.seed_inputs == "vits") roles = vits_roles(g);
  else if (!spec.seed_inputs.empty())
    throw Error("--seed-inputs '" + spec.seed_inputs + "' is unknown (known: vits)");
  TensorMap all = given;
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const Value& v = g.values[g.inputs[k]];
    if (all.count(v.name)) continue;
    Shape shape = generated_shape(v, bound);
    // The tensor and the float64 values it is generated from: refused, naming the input and its
    // dims, before either is made (--dim T=100000000 on a decoder).
    require_memory(checked_bytes(checked_numel(shape), 8 + static_cast<int64_t>(dtype_size(v.type.dtype))),
                   "generating input '" + v.name + "' " + TypeInfo{v.type.dtype, true, shape}.str());
    int role = int(k) == roles.first ? 0 : int(k) == roles.second ? 1 : -1;
    all[v.name] = role >= 0 ? vits_input(v, shape, role) : random_input(v, shape, spec.seed, k);
  }
  bind_inputs(g, all);  // the model's own check of the whole set
  return all;
}

}  // namespace lockstep::cli
