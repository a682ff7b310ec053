// `lockstep compile`: runs the pipeline for a target without running the model, and writes the
// generated source (one readable file per kernel, ONNX node names in comments).
#include <filesystem>
#include <iostream>
#include <optional>

#include "backend/registry.h"
#include "cli/cli.h"
#include "cli/compile_options.h"
#include "cli/inputs.h"
#include "cli/report.h"
#include "core/error.h"
#include "core/files.h"
#include "frontend/npy.h"
#include "frontend/onnx_import.h"
#include "runtime/target.h"

namespace lockstep::cli {

namespace fs = std::filesystem;

namespace {

struct CompileCmd {
  std::string model, target = default_target(), emit_source;
  InputSpec inputs;
  CompileFlags compile;
};

int compile_model(const CompileCmd& o) {
  if (const TargetInfo* t = find_target(o.target); t && t->make_program)
    throw Error("target '" + o.target + "' is not compiled: there is nothing to compile");
  // A new or empty folder, made and probed before any work; removed again if the command fails.
  std::optional<OutputDir> out_dir;
  if (!o.emit_source.empty()) out_dir.emplace(o.emit_source, "--emit-source folder", true);
  Graph g = load_model(o.model, o.inputs);
  TensorMap inputs = make_inputs(g, o.inputs);  // shapes (and shape values) to specialise on
  std::unique_ptr<Program> program = compile(g, o.target, o.compile.options);
  program->prepare(inputs);
  auto files = program->sources();
  std::cout << "compiled " << o.model << " for " << o.target << ": " << program->pass_log().size()
            << " pass applications, " << (files.size() > 2 ? files.size() - 2 : 0) << " kernels\n";
  std::cout << "time: " << compile_phases(program->stats()) << "\n";
  if (o.compile.print_pass_log) print_pass_log(*program);
  if (!out_dir) return kExitOk;
  StagedFiles staged;  // every file or none
  for (const auto& [name, text] : files) staged.add((fs::path(o.emit_source) / name).string(), text);
  staged.commit();
  out_dir->keep();
  std::cout << "wrote " << files.size() << " files to " << o.emit_source << "\n";
  return kExitOk;
}

}  // namespace

Action add_compile(CLI::App& app) {
  auto o = std::make_shared<CompileCmd>();
  app.add_option("model", o->model, "ONNX model file")->required();
  app.add_option("--target", o->target, targets_help("Target to compile for"))->capture_default_str();
  app.add_option("--emit-source", o->emit_source, "Folder to write the generated source into, one file per kernel (a new or empty "
                 "folder; all files or none are written)");
  add_input_flags(app, o->inputs);
  add_compile_flags(app, o->compile);
  app.footer(
      "A program is compiled for concrete input shapes, taken from --input/--dim as with `run`.\n"
      "Exit status: 0 success, 2 bad model, input, option or file, 3 internal error (a lockstep bug).");
  return [o] { return compile_model(*o); };
}

}  // namespace lockstep::cli
