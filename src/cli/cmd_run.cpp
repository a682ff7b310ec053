// `lockstep run`: one model, one target, outputs printed (SHA-256, statistics) and saved as .npy.
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "cli/cli.h"
#include "cli/compile_options.h"
#include "cli/inputs.h"
#include "cli/report.h"
#include "core/error.h"
#include "core/files.h"
#include "frontend/npy.h"
#include "frontend/onnx_import.h"
#include "runtime/program.h"
#include "verify/faults.h"
#include "verify/planted_fault.h"

namespace lockstep::cli {

namespace fs = std::filesystem;

namespace {

struct RunOpts {
  std::string model, target = "ref", out;
  InputSpec inputs;
  CompileFlags compile;
};

// File for each output, in output order; two outputs that sanitise to one name are an error.
std::vector<std::string> output_paths(const Graph& g, const std::string& dir) {
  std::map<std::string, std::string> owner;
  std::vector<std::string> paths;
  for (int v : g.outputs) {
    const std::string& name = g.values[v].name;
    std::string file = output_file_name(name);
    auto [it, fresh] = owner.emplace(file, name);
    if (!fresh && it->second != name)
      throw Error("outputs '" + it->second + "' and '" + name + "' would both be written to '" + file + "'");
    paths.push_back((fs::path(dir) / file).string());
  }
  return paths;
}

// bfloat16 has no .npy dtype; float32 holds every bfloat16 value exactly.
Tensor npy_compatible(const Tensor& t) {
  return t.dtype == DType::bf16 ? from_ref(cast_ref(to_ref(t), DType::f32)) : t;
}

int run(const RunOpts& o) {
  // The --out folder is made and probed before any work, so a bad one fails first; folders made
  // here are removed again (if still empty) when the run fails, so a failure leaves nothing.
  std::optional<OutputDir> out_dir;
  if (!o.out.empty()) out_dir.emplace(o.out, "output folder", false);
  Graph g = load_quietly([&] { return load_onnx(o.model); });
  check_fault_applies(fault_spec(o.compile.options.fault), g);
  std::vector<std::string> paths = o.out.empty() ? std::vector<std::string>{} : output_paths(g, o.out);
  TensorMap inputs = make_inputs(g, o.inputs);
  std::unique_ptr<Program> program = compile(g, o.target, o.compile.options);
  std::vector<Tensor> outs = program->run(inputs);
  check_pass_fault(fault_spec(o.compile.options.fault), program->pass_log());
  if (o.compile.print_pass_log) print_pass_log(*program);
  // All outputs or none: each goes to a temporary beside its file first; only when every one
  // is written are they renamed into place (an earlier run's files stay as they were otherwise).
  StagedFiles files;
  std::vector<std::string> lines;
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string& name = g.values[g.outputs[k]].name;
    Tensor t = npy_compatible(outs[k]);
    std::string line = output_line(name, t);
    if (outs[k].dtype == DType::bf16) line += "  (bfloat16 widened to float32)";
    if (!paths.empty()) {
      files.add(paths[k], encode_npy(t));
      line += "  -> " + paths[k];
    }
    lines.push_back(std::move(line));
  }
  files.commit();
  if (out_dir) out_dir->keep();
  for (const std::string& line : lines) std::cout << line << "\n";
  return kExitOk;
}

}  // namespace

Action add_run(CLI::App& app) {
  auto o = std::make_shared<RunOpts>();
  app.add_option("model", o->model, "ONNX model file")->required();
  app.add_option("--target", o->target, targets_help("Target to run on; ref is the float64 reference interpreter"))
      ->capture_default_str();
  add_input_flags(app, o->inputs);
  app.add_option("--out", o->out, "Folder to write one .npy per output into (created if missing)");
  add_compile_flags(app, o->compile);
  app.footer(std::string(
      "Prints one line per output: name, dtype[shape], sha256 of the data bytes (as in the\n"
      ".npy after its header), min/max/RMS over non-NaN values. With --out, each output is\n"
      "written to DIR/NAME.npy (.npy 1.0, little-endian, C order), NAME being the output's name\n"
      "with every character outside [A-Za-z0-9._-] replaced by '_'; files are written whole or\n"
      "not at all, and all of them or none: a failed write leaves the folder as it was.\n"
      "bfloat16 outputs are written as float32 (exact).\n\n") +
      kInputGenerationHelp +
      "\n\nExit status: 0 success, 2 bad model, input, option or file, 3 internal error (a lockstep bug).");
  return [o] { return run(*o); };
}

}  // namespace lockstep::cli
