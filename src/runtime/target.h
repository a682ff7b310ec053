// What a target is: every target lockstep can compile for fills in a TargetInfo and registers
// it (backend/registry.h). A backend is one folder that fills in one of these.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/program_source.h"
#include "kernel/target_desc.h"
#include "runtime/device.h"
#include "runtime/program.h"

namespace lockstep {

struct TargetInfo {
  std::string name;     // what --target takes
  std::string summary;  // one line for help texts
  // Limits, types and schedule parameters: what the compiler may ask of the target.
  kir::TargetDesc desc;
  // The translation unit the compiler gets for a scheduled plan with the function that runs
  // each kernel, and the same as files for --emit-source (prelude, one per kernel, epilogue).
  std::function<codegen::ProgramSource(const kir::Plan&)> program_source;
  std::function<std::vector<std::pair<std::string, std::string>>(const kir::Plan&)> source_files;
  // The compiler for this machine, for device `o.device` of the target; `dev` is that device
  // where it opened (null: none here, or not yet known). Throws Error saying why when there is
  // no compiler.
  std::function<std::unique_ptr<CodeCompiler>(const CompileOptions& o, const Device* dev)> make_compiler;
  // The device programs run on; null, with `why` set, where this machine has none.
  std::function<std::unique_ptr<Device>(const CompileOptions&, std::string* why)> make_device;
  // The device leaves `desc` as it is (Device::narrow does nothing), so it may open on a
  // thread while the pipeline runs: a CUDA context takes about 0.2 s to make.
  bool opens_alongside = false;
  // Optional: the devices --device N picks from, a line each (platform, name, version).
  std::function<std::vector<std::string>()> devices;
  // Optional: a program that is not compiled (the reference interpreter).
  std::function<std::unique_ptr<Program>(const Graph&, const CompileOptions&)> make_program;
  // Suites of the per-target tests this target skips, each with the reason (as IREE's CTS
  // lists per backend): {"Conformance", "why"}.
  std::vector<std::pair<std::string, std::string>> skips;
};

// "" when `t` can compile and run here, else why not.
std::string unavailable_reason(const TargetInfo& t);

}  // namespace lockstep
