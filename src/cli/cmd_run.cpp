// `lockstep run`: one model, one target, outputs printed (SHA-256, statistics) and saved as .npy;
// with --dims, one program taken through a sweep of lengths.
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "backend/registry.h"
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
  std::vector<std::string> sweep;  // --dims
  CompileFlags compile;
};

// "T=7 U=3" -> ".T=7.U=3", for a file name: characters outside [A-Za-z0-9._=-] become '_'.
std::string label_suffix(const std::string& label) {
  std::string s = "." + label;
  for (char& c : s) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                c == '-' || c == '=';
    if (c == ' ') c = '.';
    else if (!keep) c = '_';
  }
  return s;
}

// File for each output, in output order, per step: DIR/NAME.npy for one run (labels {""}),
// DIR/NAME.T=7.npy for the step of a sweep labelled "T=7". Two that coincide are an error.
std::vector<std::vector<std::string>> output_paths(const Graph& g, const std::string& dir,
                                                   const std::vector<std::string>& labels) {
  std::map<std::string, std::pair<std::string, std::string>> owner;  // file -> output, label
  std::vector<std::vector<std::string>> paths;
  for (const std::string& label : labels) {
    paths.emplace_back();
    for (int v : g.outputs) {
      const std::string& name = g.values[v].name;
      std::string file = output_file_name(name);
      if (!label.empty()) file.insert(file.size() - 4, label_suffix(label));
      auto [it, fresh] = owner.emplace(file, std::pair{name, label});
      const auto& [other, other_label] = it->second;
      if (!fresh && other == name && other_label == label && !label.empty())
        throw Error("--dims: " + label + " comes twice in the sweep; with --out its files would overwrite each other");
      if (!fresh && (other != name || other_label != label))
        throw Error("outputs '" + other + "'" + (label.empty() ? "" : " at " + other_label) + " and '" + name + "'" +
                    (label.empty() ? "" : " at " + label) + " would both be written to '" + file + "'");
      paths.back().push_back((fs::path(dir) / file).string());
    }
  }
  return paths;
}

// bfloat16 has no .npy dtype; float32 holds every bfloat16 value exactly.
Tensor npy_compatible(const Tensor& t) {
  return t.dtype == DType::bf16 ? from_ref(cast_ref(to_ref(t), DType::f32)) : t;
}

// The output lines of one run; each output staged into `files` when it has a path.
std::vector<std::string> output_lines(const Graph& g, const std::vector<Tensor>& outs,
                                      const std::vector<std::string>& paths, StagedFiles& files) {
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
  return lines;
}

int run(const RunOpts& o) {
  // The sweep's steps first: a malformed --dims list fails before anything is made.
  std::vector<InputSpec> steps = sweep_specs(o.inputs, o.sweep);
  bool sweep = !o.sweep.empty();
  // The --out folder is made and probed before any work, so a bad one fails first; folders made
  // here are removed again (if still empty) when the run fails, so a failure leaves nothing.
  // A sweep writes files of its own naming (NAME.T=7.npy): only into a new or empty folder.
  std::optional<OutputDir> out_dir;
  if (!o.out.empty()) out_dir.emplace(o.out, "output folder", sweep);
  Graph g = load_model(o.model, o.inputs);
  check_fault_applies(fault_spec(o.compile.options.fault), g);
  std::vector<std::string> labels;
  for (const InputSpec& step : steps) labels.push_back(sweep ? sweep_label(step, o.sweep) : "");
  std::vector<std::vector<std::string>> paths =
      o.out.empty() ? std::vector<std::vector<std::string>>(steps.size()) : output_paths(g, o.out, labels);
  for (const std::vector<std::string>& step : paths)
    for (const std::string& p : step) refuse_input_as_output(p, input_paths(o.model, o.inputs), "--out");
  TensorMap inputs = make_inputs(g, steps[0]);  // the first length's: an unknown symbol fails here
  std::unique_ptr<Program> program = compile(g, o.target, o.compile.options);
  // All outputs or none: each goes to a temporary beside its file first; only when every one
  // (of every length) is written are they renamed into place (an earlier run's files stay as
  // they were otherwise). Without --out a sweep prints each length as it is done; with it,
  // everything once the files are in place.
  StagedFiles files;
  std::ostringstream held;
  std::ostream& os = o.out.empty() ? std::cout : held;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (k > 0) inputs = make_inputs(g, steps[k]);
    int compiles = program->stats().compiles;
    std::vector<Tensor> outs = program->run(inputs);
    check_pass_fault(fault_spec(o.compile.options.fault), program->pass_log());
    if (sweep) os << "== " << labels[k] << "\n";
    // The pass log of each compile: the first, and any length compiled apart (--specialise).
    if (o.compile.print_pass_log && (k == 0 || program->stats().compiles > compiles))
      for (const std::string& line : program->pass_log()) os << line << "\n";
    for (const std::string& line : output_lines(g, outs, paths[k], files)) os << line << "\n";
    os.flush();
  }
  files.commit();
  if (out_dir) out_dir->keep();
  Program::CompileStats cs = program->stats();
  if (sweep && cs.compiles > 0)  // (ref interprets, it does not compile)
    os << "compiles: " << cs.compiles << " for " << steps.size() << " lengths" << (cs.note.empty() ? "" : " (" + cs.note + ")")
       << "\n";
  std::cout << held.str();
  return kExitOk;
}

}  // namespace

Action add_run(CLI::App& app) {
  auto o = std::make_shared<RunOpts>();
  app.add_option("model", o->model, "ONNX model file")->required();
  app.add_option("--target", o->target, targets_help("Target to run on; ref is the float64 reference interpreter"))
      ->capture_default_str();
  add_input_flags(app, o->inputs);
  add_sweep_flag(app, o->sweep);
  app.add_option("--out", o->out, "Folder to write one .npy per output into (created if missing)");
  add_compile_flags(app, o->compile);
  app.footer(std::string(
      "Prints one line per output: name, dtype[shape], sha256 of the data bytes (as in the\n"
      ".npy after its header), min/max/RMS over non-NaN values. With --out, each output is\n"
      "written to DIR/NAME.npy (.npy 1.0, little-endian, C order), NAME being the output's name\n"
      "with every character outside [A-Za-z0-9._-] replaced by '_'; files are written whole or\n"
      "not at all, and all of them or none: a failed write leaves the folder as it was.\n"
      "bfloat16 outputs are written as float32 (exact).\n"
      "--dims T=1,7,64: one program (one compile where the model allows) runs each length in\n"
      "turn; per length a line '== T=N', then its output lines, then the number of compiles.\n"
      "With --out, the files are DIR/NAME.T=N.npy, and DIR must be new or empty.\n\n") +
      kInputGenerationHelp +
      "\n\nExit status: 0 success, 2 bad model, input, option or file, 3 internal error (a lockstep bug).");
  return [o] { return run(*o); };
}

}  // namespace lockstep::cli
