// The public execution contract every target implements: Graph -> compile -> Program -> run.
#pragma once
#include <map>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "graph/bind.h"
#include "graph/graph.h"
#include "kernel/fault_hooks.h"

namespace lockstep {

// More would only add waiting: no host lockstep runs on has this many cores per process.
inline constexpr int kMaxThreads = 1024;

struct CompileOptions {
  int threads = 0;            // host targets: 0 for all cores; at most kMaxThreads
  int device = 0;             // which of the target's devices (info --targets lists them)
  int pass_limit = -1;        // apply only pass applications 1..N (-1: all)
  bool verify_each = false;   // IR verifiers after every pass application
  std::string dump_ir_dir;    // IR after each pass application
  bool use_cache = true;      // on-disk kernel cache
  bool checked = false;       // sentinels around buffers, poisoned free memory, planner proof
  bool replay = true;             // capture the plan once and replay it, where the device can
  // One compile for every value of the model's named symbolic dims ("T"), where the plan
  // allows (passes/generalise.h); false: one compile per input shape.
  bool symbolic = true;
  bool verify_constants = false;  // read every constant back after upload and compare SHA-256
  // Symbolic programs: device memory sized at the first bind for these symbol values too (a
  // profile's longest lengths), so binding any length up to them allocates nothing.
  std::map<std::string, int64_t> reserve;
  int staging_slots = 64;         // host staging buffers for uploads (tests shrink it)
  size_t staging_slot_bytes = size_t{4} << 20;
  // Test aid: a deliberate fault (verify/planted_fault.h makes one from a spec such as
  // "kernel:Relu#1"); null for none. The compiler and devices only call its hooks.
  std::shared_ptr<const FaultHooks> fault;
};

class Program {
 public:
  virtual ~Program() = default;
  virtual const std::string& target() const = 0;
  // Outputs in graph output order, in the model's dtypes. Throws Error on bad inputs.
  virtual std::vector<Tensor> run(const TensorMap& inputs) = 0;
  // Compiles for inputs like these (shapes, and values where shapes depend on them) without
  // running; run() does it on demand.
  virtual void prepare(const TensorMap& inputs) {}
  // How the program got its code: pipeline and native compiles so far, and binds of a new
  // length to a symbolic program (with the last one's time).
  struct CompileStats {
    int compiles = 0;        // pipeline + code generation + native compile (or cache hit)
    int binds = 0;           // new lengths served by the symbolic program, without compiling
    bool symbolic = false;   // the last run used the symbolic program
    double last_bind_ms = 0; // time of the last bind (shapes checked, plan, memory, arguments)
    int grows = 0;           // binds that allocated a larger block (none up to --reserve)
    std::string note;        // why the program is not symbolic, or why a length was compiled apart
    double device_ms = 0;    // opening the device (driver, context, queue), once per program
    bool device_alongside = false;  // it opened on a thread during the first compile ("device" phase: the wait)
    // Where the last compile's time went, in order: pipeline, source, native (the native
    // compiler or the cache), and with a device load (modules), memory and constants.
    std::vector<std::pair<std::string, double>> phases_ms;
  };
  virtual CompileStats stats() const { return {}; }
  // What the last compile made, as one SHA-256 over the device it is for, the compiler's
  // identity and the generated code; "" for a program that is not compiled. A fresh process
  // given the same options must make the same.
  virtual std::string identity() const { return ""; }
  // Numbered pass applications of the last compile ("#N pass: what (nodes)").
  virtual std::vector<std::string> pass_log() const { return {}; }
  // Generated source of the last compile: (file name, text), one file per kernel.
  virtual std::vector<std::pair<std::string, std::string>> sources() const { return {}; }

  // --- Introspection for verification (check, bisect); optional per target. ---
  // The value of every fusion-group output of the program as compiled, in execution order.
  struct GroupValue {
    std::string kernel;              // "k12"
    std::vector<std::string> nodes;  // ONNX nodes the group computes
    std::string value;               // the graph value it holds
    Tensor data;
  };
  virtual std::vector<GroupValue> run_capture(const TensorMap& inputs);
  // SHA-256 of each constant as resident on the target, by value name, read back from where
  // kernels read it (the device, for GPUs), next to the host bytes' SHA-256.
  struct ConstantCheck {
    std::string value, host_sha256, resident_sha256;
  };
  virtual std::vector<ConstantCheck> check_constants();
  // One run with each kernel timed (the device's own clock on GPUs), in execution order.
  struct KernelTime {
    std::string kernel;
    std::vector<std::string> nodes;
    double ms = 0;
    // From the plan: "reduction" (a sum over terms: conv, matmul) or "elementwise" (one value
    // per output: activations, pads, slices); the arithmetic counted from the reduction's
    // extents (a product and a sum per term); bytes as each buffer read once and the output
    // written once (a lower bound on the memory traffic).
    std::string kind;
    double flops = 0, bytes = 0;
  };
  virtual std::vector<KernelTime> profile(const TensorMap& inputs);
};

// Throws Error for options out of range (threads, pass limit).
void validate_options(const CompileOptions& o);

}  // namespace lockstep
