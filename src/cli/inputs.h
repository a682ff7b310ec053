// Model inputs for `run` and the tools that follow it: .npy files the user gives, and
// deterministic generated values for the rest.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/random.h"
#include "graph/bind.h"
#include "graph/graph.h"

namespace lockstep::cli {

// Runs `load` (load_onnx, import_model), holding back what it writes to std::cerr (the
// libonnx checker's warnings) until it succeeds: a model that fails gives one error line.
Graph load_quietly(const std::function<Graph()>& load);

// How inputs the user did not give are filled.
struct InputSpec {
  std::vector<std::string> files;      // "NAME=FILE.npy", as on the command line
  std::vector<std::string> dims;       // "SYMBOL=N"
  uint64_t seed = 0;
  std::string seed_inputs;             // "" (random) or "vits"
  std::vector<std::string> swept;      // a sweep's step: the --dims lists its dims came from, for errors
};

// load_onnx through load_quietly, with the spec's --seed as the seed of random nodes without one.
Graph load_model(const std::string& file, const InputSpec& spec);

// --input, --seed, --seed-inputs and --dim, as every model-running subcommand spells them.
void add_input_flags(CLI::App& app, InputSpec& spec);

// --dims SYMBOL=N1,N2,...: a sweep of lengths (repeatable for several symbols, lists of equal
// length taken together).
void add_sweep_flag(CLI::App& app, std::vector<std::string>& lists);
// One InputSpec per step of the sweep (`spec` with each step's --dim set); {spec} when the
// sweep is empty. Throws Error for a malformed list (every length is checked here, so a bad one
// fails before the first step runs); a symbol the model lacks fails in make_inputs, naming --dims.
std::vector<InputSpec> sweep_specs(const InputSpec& spec, const std::vector<std::string>& lists);
// "T=64" for a step's dims.
std::string sweep_label(const InputSpec& step, const std::vector<std::string>& lists);

// The --help text that says exactly how inputs are generated.
extern const char* const kInputGenerationHelp;

// The files a command reads: the model (a bundle folder's model.onnx and test data too), then
// the .npy files of --input. Nothing the command writes may be one of them.
std::vector<std::string> input_paths(const std::string& model, const InputSpec& spec);

// A size given on the command line; `what` ("--dim T") names it in errors.
int64_t parse_size(const std::string& text, const std::string& what);

// Splits "KEY=VALUE"; `option` ("--input") names the flag in errors.
std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& option);

// Every input of `g`, by name: the given files (checked against the model, errors name the
// file), the rest generated. Throws Error for an unknown name, a symbol without a size, ...
TensorMap make_inputs(const Graph& g, const InputSpec& spec);

uint64_t input_stream_seed(uint64_t seed, size_t input_index);

}  // namespace lockstep::cli
