// `lockstep bench`: how fast a compiled model runs on a target, end to end and per kernel,
// with the output bytes of every run compared (a fast wrong answer is not a result).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "backend/registry.h"
#include "cli/cli.h"
#include "cli/report.h"
#include "core/error.h"
#include "core/files.h"
#include "frontend/npy.h"
#include "runtime/target.h"
#include "verify/parity.h"

namespace lockstep::cli {

namespace {

struct BenchFlags {
  std::string model, target = default_target(), json;
  InputSpec inputs;
  std::vector<std::string> sweep;  // --dims
  CompileFlags compile;
  int runs = 20, warmup = 3, top = 15;
  bool per_kernel = false;
};

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Stats {
  double min = 0, median = 0, mean = 0, p90 = 0, max = 0;
};

Stats stats_of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.p90 = v[std::min(v.size() - 1, static_cast<size_t>(0.9 * static_cast<double>(v.size())))];
  for (double x : v) s.mean += x / static_cast<double>(v.size());
  return s;
}

std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

std::string joined_sha(const std::vector<Tensor>& outs) {
  std::string s;
  for (const Tensor& t : outs) s += (s.empty() ? "" : ",") + tensor_sha256(t);
  return s;
}

// Each kind of kernel's time, share, and the rates its counted work and bytes achieved.
void print_kinds(const std::vector<Program::KernelTime>& times, double total) {
  struct Sum {
    int kernels = 0;
    double ms = 0, flops = 0, bytes = 0;
  };
  std::map<std::string, Sum> kinds;
  for (const auto& t : times) {
    Sum& s = kinds[t.kind];
    ++s.kernels, s.ms += t.ms, s.flops += t.flops, s.bytes += t.bytes;
  }
  std::cout << "  kind          kernels  ms        share   GFLOP/s   GB/s (bytes read once, written once)\n";
  for (const auto& [kind, s] : kinds) {
    double sec = s.ms / 1e3;
    std::string name = kind + std::string(kind.size() < 12 ? 12 - kind.size() : 0, ' ');
    std::cout << "  " << name << "  " << fmt("%7.0f", s.kernels) << "  " << fmt("%-9.3f", s.ms) << " "
              << fmt("%5.1f%%", total > 0 ? 100 * s.ms / total : 0) << "  " << fmt("%8.1f", sec > 0 ? s.flops / sec / 1e9 : 0)
              << "  " << fmt("%8.1f", sec > 0 ? s.bytes / sec / 1e9 : 0) << "\n";
  }
}

// The `top` slowest kernels of one profiled run, with their share of the total.
nlohmann::json print_kernels(const std::vector<Program::KernelTime>& times, int top) {
  double total = 0;
  for (const auto& t : times) total += t.ms;
  std::vector<size_t> order(times.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return times[a].ms > times[b].ms; });
  std::cout << "kernels (one profiled run): " << times.size() << " kernels, " << fmt("%.3f", total) << " ms in all\n";
  std::cout << "  ms        share   kernel  nodes\n";
  nlohmann::json j = nlohmann::json::array();
  for (size_t r = 0; r < order.size(); ++r) {
    const auto& t = times[order[r]];
    j.push_back({{"kernel", t.kernel}, {"launch", order[r]}, {"nodes", t.nodes}, {"ms", t.ms}, {"kind", t.kind}, {"flops", t.flops},
                 {"bytes", t.bytes}});
    if (static_cast<int>(r) >= top) continue;
    std::string name = t.kernel + std::string(t.kernel.size() < 6 ? 6 - t.kernel.size() : 0, ' ');
    std::cout << "  " << fmt("%-9.3f", t.ms) << " " << fmt("%5.1f%%", total > 0 ? 100 * t.ms / total : 0) << "  " << name
              << "  " << brief_list(t.nodes, 3) << "\n";
  }
  print_kinds(times, total);
  return j;
}

// --dims: every length in turn on one program, one row each: whether it compiled or only bound
// the symbolic program, the time of that, and the runs.
int bench_sweep(const BenchFlags& f) {
  std::vector<InputSpec> steps = sweep_specs(f.inputs, f.sweep);
  std::unique_ptr<Program> p;
  std::cout << "bench: " << f.model << " on " << f.target << ", " << steps.size() << " lengths in one process\n";
  std::cout << "  length      prepare     how                      median run   outputs (sha256)\n";
  nlohmann::json rows = nlohmann::json::array();
  bool all_same = true;
  for (const InputSpec& step : steps) {
    VerifySubject s = load_subject(f.model, step);
    if (!p) p = compile(s.graph, f.target, f.compile.options);
    Program::CompileStats before = p->stats();
    auto t = Clock::now();
    p->prepare(s.inputs);
    double prepare_ms = ms_since(t);
    Program::CompileStats cs = p->stats();
    std::string how = cs.compiles > before.compiles ? "compiled"
                      : cs.grows > before.grows    ? "bound (symbolic), grew"
                      : cs.binds > before.binds    ? "bound (symbolic)"
                                                   : "already prepared";
    std::string sha = joined_sha(p->run(s.inputs));
    for (int k = 0; k < f.warmup; ++k) all_same &= joined_sha(p->run(s.inputs)) == sha;
    std::vector<double> ms;
    for (int k = 0; k < f.runs; ++k) {
      t = Clock::now();
      std::vector<Tensor> outs = p->run(s.inputs);
      ms.push_back(ms_since(t));
      all_same &= joined_sha(outs) == sha;
    }
    std::string label = sweep_label(step, f.sweep);
    std::cout << "  " << label << std::string(label.size() < 10 ? 10 - label.size() : 0, ' ') << "  "
              << fmt("%10.3f", prepare_ms) << " ms  " << how << std::string(how.size() < 22 ? 22 - how.size() : 0, ' ')
              << fmt("%10.3f", stats_of(ms).median) << " ms  " << sha.substr(0, 16) << "\n";
    rows.push_back({{"dims", label}, {"prepare_ms", prepare_ms}, {"how", how}, {"median_ms", stats_of(ms).median},
                    {"run_ms", ms}, {"outputs_sha256", sha}});
  }
  Program::CompileStats cs = p->stats();
  std::cout << "compiles: " << cs.compiles << " for " << steps.size() << " lengths" << (cs.note.empty() ? "" : " (" + cs.note + ")")
            << "\noutputs: " << (all_same ? "every run of each length gave the same bytes" : "DIFFER between runs of one length")
            << "\n";
  nlohmann::json j = {{"model", f.model}, {"target", f.target}, {"lengths", rows}, {"compiles", cs.compiles},
                      {"symbolic", cs.symbolic}, {"note", cs.note}, {"bit_identical", all_same}};
  if (!f.json.empty())
    write_file_atomic(f.json, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return all_same ? kExitOk : kExitMismatch;
}

int bench(const BenchFlags& f) {
  refuse_input_as_output(f.json, input_paths(f.model, f.inputs), "--json");
  if (!f.sweep.empty()) return bench_sweep(f);
  VerifySubject s = load_subject(f.model, f.inputs);
  auto t = Clock::now();
  std::unique_ptr<Program> p = compile(s.graph, f.target, f.compile.options);
  p->prepare(s.inputs);
  double compile_ms = ms_since(t);
  t = Clock::now();
  std::string sha = joined_sha(p->run(s.inputs));
  double first_ms = ms_since(t);
  int same = 1;
  for (int k = 0; k < f.warmup; ++k) same += joined_sha(p->run(s.inputs)) == sha;
  std::vector<double> ms;
  for (int k = 0; k < f.runs; ++k) {
    t = Clock::now();
    std::vector<Tensor> outs = p->run(s.inputs);
    ms.push_back(ms_since(t));
    same += joined_sha(outs) == sha;  // hashed outside the timed span
  }
  std::vector<double> prep;  // the per-run check that the compiled program fits these inputs
  for (int k = 0; k < 5; ++k) {
    t = Clock::now();
    p->prepare(s.inputs);
    prep.push_back(ms_since(t));
  }
  double prepare_ms = stats_of(prep).median;
  Stats st = stats_of(ms);
  int all = 1 + f.warmup + f.runs;
  std::cout << "bench: " << f.model << " on " << f.target << "\n";
  std::cout << "compile: " << fmt("%.1f", compile_ms) << " ms (pipeline, code generation, native compile or cache)\n";
  Program::CompileStats cs = p->stats();
  std::cout << "  of which: " << compile_phases(cs) << "\n";
  std::cout << "first run: " << fmt("%.3f", first_ms) << " ms\n";
  std::cout << "runs: " << f.runs << " after " << f.warmup << " warm-up, per run (inputs in, outputs out): min "
            << fmt("%.3f", st.min) << " ms, median " << fmt("%.3f", st.median) << " ms, mean " << fmt("%.3f", st.mean)
            << " ms, p90 " << fmt("%.3f", st.p90) << " ms, max " << fmt("%.3f", st.max) << " ms\n";
  std::cout << "of which input binding (shapes, and values that decide them): " << fmt("%.3f", prepare_ms) << " ms\n";
  std::cout << "outputs: " << (same == all ? "bit-identical in all " : "DIFFER: ") << (same == all ? all : all - same)
            << (same == all ? " runs" : " of " + std::to_string(all) + " runs gave other bytes") << " (sha256 "
            << sha.substr(0, 16) << ")\n";
  nlohmann::json j = {{"model", f.model},           {"target", f.target},   {"compile_ms", compile_ms},
                      {"first_run_ms", first_ms},   {"runs", f.runs},       {"warmup", f.warmup},
                      {"run_ms", ms},               {"min_ms", st.min},     {"median_ms", st.median},
                      {"mean_ms", st.mean},         {"p90_ms", st.p90},     {"max_ms", st.max},
                      {"prepare_ms", prepare_ms},   {"outputs_sha256", sha},      {"bit_identical", same == all}};
  j["compile_phases_ms"] = nlohmann::json::array();
  for (const auto& [phase, t] : cs.phases_ms) j["compile_phases_ms"].push_back({{"phase", phase}, {"ms", t}});
  j["device_ms"] = cs.device_ms;
  if (f.per_kernel) j["kernels"] = print_kernels(p->profile(s.inputs), f.top);
  if (!f.json.empty())
    write_file_atomic(f.json, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return same == all ? kExitOk : kExitMismatch;
}

}  // namespace

Action add_bench(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  app.add_option("model", f->model, "ONNX model file, or a folder in ONNX's backend-test layout")->required();
  app.add_option("--target", f->target, targets_help("The target to time"))->capture_default_str();
  add_input_flags(app, f->inputs);
  add_sweep_flag(app, f->sweep);
  add_int_option(app, "--runs", f->runs, 1, 1000000, "Timed runs");
  add_int_option(app, "--warmup", f->warmup, 0, 1000000, "Untimed runs before them");
  app.add_flag("--per-kernel", f->per_kernel, "Time each kernel in one more run and list the slowest");
  add_int_option(app, "--top", f->top, 1, 1000000, "Kernels listed with --per-kernel");
  app.add_option("--json", f->json, "Write every figure as JSON to this file");
  add_compile_flags(app, f->compile);
  app.footer(
      "Times `compile` (the shared pipeline, code generation and the native compiler, or the\n"
      "kernel cache), the first run, then --runs runs after --warmup, each end to end as a user\n"
      "calls it: inputs copied in, every kernel, outputs copied out. Wall clock (steady_clock).\n"
      "Every run's output bytes are hashed and compared with the first run's.\n"
      "--per-kernel: one more run with each kernel timed by the device's own clock where it has\n"
      "one (GPU events around each launch, plain launches, no replay), else the wall clock.\n"
      "--dims T=173,64,1: each length in turn on one program; `prepare` is the compile for the\n"
      "first and, for a symbolic program, the bind of each later one (no code generation).\n\n"
      "Exit status: 0 every run gave the same bytes, 1 a run gave other bytes, 2 bad model,\n"
      "input, option or file, 3 internal error (a lockstep bug).");
  return [f] { return bench(*f); };
}

}  // namespace lockstep::cli
