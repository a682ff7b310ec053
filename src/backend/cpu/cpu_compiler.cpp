#include "backend/cpu/cpu_compiler.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backend/cpu/thread_pool.h"
#include "codegen/host_printer.h"

#include "core/dirs.h"
#include "core/error.h"
#include "core/files.h"
#include "core/process.h"
#include "frontend/npy.h"

namespace lockstep::cpu {

namespace fs = std::filesystem;

namespace {

// Reproducible float code: no contraction into FMA (same sums on every host), wrapping ints.
// -fno-trapping-math: nothing reads the floating-point exception flags, so the compiler may
// compute both sides of a select, which lets it vectorise loops over the math library
// (codegen/math_library.h); it changes no value (no reassociation, contraction or finite-only
// assumptions come with it).
// -fopenmp-simd: the `omp simd` hints only; threads are lockstep's own (thread_pool.h), so the
// module does not bring in an OpenMP runtime.
// -mprefer-vector-width=512: on a CPU with AVX-512, 16 lanes where GCC would take 8 (the
// decoder 14% faster on the development machine); lanes are outputs, so no value changes.
// -fschedule-insns -fsched-pressure: GCC's scheduling before register allocation, which it
// leaves off on x86, bounded by register pressure; the math library's long dependent chains
// then interleave (a gated tanh * sigmoid kernel 16% faster on a Zen 3). Order of
// instructions only: the same operations, so the same bits.
// -fno-loop-interchange: GCC 12's -O3 interchanged a tile's two reduction loops (a transposed
// conv phase's 16 channels and 2 taps, summed into the tile's array at a 5-column length),
// which reorders every output's float sum: other bits than the other targets' and the symbolic
// program's. The sums run in the loops' order as printed.
const char* kFlags =
    "-std=c++17 -O3 -march=native -mprefer-vector-width=512 -fopenmp-simd -fPIC -shared -ffp-contract=off "
    "-fno-trapping-math -fwrapv -fno-math-errno";
// GCC's spelling only: clang refuses -fsched-pressure and has no loop interchange to turn off.
const char* kGccFlags = "-fschedule-insns -fsched-pressure -fno-loop-interchange";

// -march=native makes the code the host CPU's: its model and feature flags are part of the
// cache key, so a cache folder shared between machines never hands one another's code.
std::string host_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
  }
  return model + "\n" + flags;
}

// The compiler's --version decides the flags (and keys the cache).
std::string flags() {
  bool clang = system_cxx_version("cpu").find("clang") != std::string::npos;
  return clang ? std::string(kFlags) : std::string(kFlags) + " " + kGccFlags;
}

// The compiler and its flags, then `args`.
std::vector<std::string> command(const std::vector<std::string>& args) {
  std::vector<std::string> argv = system_cxx();
  for (const std::string& f : split_words(flags())) argv.push_back(f);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void fail_unless_built(const ProcessResult& r) {
  if (r.exit_code != 0)
    throw InternalError("cpu: the system compiler failed on generated code:\n" + r.output.substr(0, 4000));
}

}  // namespace

SystemCompiler::SystemCompiler() {
  static const std::string id =
      spelled(system_cxx()) + "\n" + system_cxx_version("cpu") + "\n" + flags() + "\n" + host_cpu();
  identity_ = id;
}

// Built in a fresh private folder that is gone once the bytes are read: a large program as
// several translation units compiled at once (one a core) and then linked.
std::string SystemCompiler::compile(const std::string& source) {
  PrivateTempDir dir("lockstep-cpu");
  fs::path so = dir.path() / "program.so";
  std::vector<std::string> units = codegen::translation_units(source, static_cast<size_t>(available_cores()));
  std::vector<std::string> objects;
  std::vector<std::vector<std::string>> jobs;
  for (size_t u = 0; u < units.size(); ++u) {
    fs::path src = dir.path() / ("unit" + std::to_string(u) + ".cpp");
    write_file_atomic(src.string(), units[u]);
    if (units.size() == 1) {
      jobs.push_back(command({src.string(), "-o", so.string()}));
    } else {
      objects.push_back((dir.path() / ("unit" + std::to_string(u) + ".o")).string());
      jobs.push_back(command({"-c", src.string(), "-o", objects.back()}));
    }
  }
  std::vector<ProcessResult> results(jobs.size());
  run_on_threads(jobs.size(), [&](size_t j) { results[j] = run_process(jobs[j]); });
  for (const ProcessResult& r : results) fail_unless_built(r);
  if (!objects.empty()) {
    objects.insert(objects.end(), {"-o", so.string()});
    fail_unless_built(run_process(command(objects)));
  }
  std::string bytes = read_own_file(so.string());
  if (bytes.empty()) throw InternalError("cpu: the system compiler wrote no shared object");
  return bytes;
}

}  // namespace lockstep::cpu
