// The narrow interface a target implements to run programs: compile source, then allocate,
// copy, fill, launch and wait, all queued in order on one queue per program. Optional members
// (a timer on the device's own clock, capture and replay of a queued sequence) have defaults
// that say "not supported"; the program falls back to plain launches and host timing.
// Modelled on ggml's backend function table: everything a new backend must write, nothing more.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel/kernel.h"
#include "kernel/target_desc.h"

namespace lockstep {

// An address in a device's memory (a host address on the cpu).
using DevicePtr = uint64_t;

// Turns generated source into loadable code. Separate from the device: a GPU target still
// compiles (and is cached and tested) on a machine without that GPU.
class CodeCompiler {
 public:
  virtual ~CodeCompiler() = default;
  // Everything besides the source that decides the code's bytes (compiler, version, flags,
  // architecture): part of the kernel cache's key.
  virtual std::string identity() = 0;
  // The code for `source`. Generated code the compiler rejects is an InternalError.
  virtual std::string compile(const std::string& source) = 0;
};

// All work queued before it completed; waiting stays valid after the device is gone.
class Fence {
 public:
  virtual ~Fence() = default;
  virtual void wait() = 0;
};

// Host memory a device copies from after upload() returns (pinned on CUDA).
struct HostBlock {
  unsigned char* data = nullptr;
  size_t bytes = 0;
  std::function<void(unsigned char*)> release;
};

// The device's own clock: one mark queued after the work before it.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void mark() = 0;
  // Milliseconds between consecutive marks, once the queue has been synchronised.
  virtual std::vector<double> intervals_ms() = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  // Names the device and its memory space: staging pools are shared per key.
  virtual std::string key() const = 0;

  // --- code ---
  // Loads code compiled for `plan`, in which `entries[k]` is the function that runs kernel k
  // (codegen::ProgramSource); throws when it was built for another plan (a stale cache entry)
  // or a kernel is missing.
  virtual void load(const std::string& code, const kir::Plan& plan, const std::vector<std::string>& entries) = 0;
  // Kernel arguments: buffer b of the plan lives at `address[b]` (0: nowhere). Checks every
  // launch against the device's limits, naming the kernel and its nodes.
  virtual void bind(const std::vector<DevicePtr>& address) = 0;

  // --- memory ---
  virtual DevicePtr allocate(size_t bytes) = 0;
  virtual void free(DevicePtr p) = 0;
  // A block of `bytes` in place of `p`, whose contents need not be kept (a symbolic program's
  // block growing at a longer length): free, then allocate, unless the device can do better.
  virtual DevicePtr reallocate(DevicePtr p, size_t bytes) {
    free(p);
    return allocate(bytes);
  }
  virtual HostBlock host_alloc(size_t bytes);
  // Writes a staging block before its upload (a test device poisons a reused block here).
  virtual void host_write(HostBlock& block, const void* src, size_t bytes);

  // --- the queue: in order; host memory given to upload stays unchanged until a fence
  // recorded after it has completed; download's destination is valid after synchronize ---
  virtual void upload(DevicePtr dst, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, DevicePtr src, size_t bytes) = 0;
  virtual void copy(DevicePtr dst, DevicePtr src, size_t bytes) = 0;
  virtual void fill(DevicePtr dst, unsigned char byte, size_t bytes) = 0;
  virtual void launch(int kernel) = 0;
  virtual std::shared_ptr<Fence> fence() = 0;
  virtual void synchronize() = 0;

  // --- optional ---
  // Lowers the target's description to what this device has (a device without fp64 clears
  // has_f64, so lowering rewrites or refuses what needs it before code is generated).
  virtual void narrow(kir::TargetDesc& d) const {}
  // The device's memory is the host's (cpu, an OpenCL CPU device, Metal's unified memory): a
  // program's blocks are checked against what the process may use before they are allocated.
  virtual bool host_memory() const { return false; }
  virtual std::unique_ptr<Timer> timer() { return nullptr; }
  // Records what is queued until end_capture as one replayable sequence; false: unsupported.
  virtual bool begin_capture() { return false; }
  virtual void end_capture() {}
  virtual void replay() {}
};

}  // namespace lockstep
