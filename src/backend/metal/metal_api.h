// lockstep's own thin interface over Metal: what a metal-cpp implementation wraps (MTLDevice,
// MTLBuffer in shared storage, MTLLibrary from MSL source with fast math off,
// MTLComputePipelineState, MTLCommandQueue, MTLCommandBuffer with compute and blit encoders)
// and what the simulated device (sim/) implements on the CPU. metal_device.cpp, the runtime of
// both targets, is written against this alone.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace lockstep::metal {

// An MTLBuffer in shared storage: memory the host and the GPU both see, zeroed when made.
class MetalBuffer {
 public:
  virtual ~MetalBuffer() = default;
  virtual unsigned char* contents() = 0;
  virtual size_t length() const = 0;
  // The host writes `bytes` at `at` (into contents()). The sim first poisons the whole buffer
  // when a committed copy that reads it has not run yet: the staging race made visible.
  virtual void write(size_t at, const void* src, size_t bytes) = 0;
};

// An MTLComputePipelineState: one kernel function, ready to dispatch.
class MetalPipeline {
 public:
  virtual ~MetalPipeline() = default;
  virtual const std::string& name() const = 0;
  virtual size_t max_total_threads_per_threadgroup() const = 0;
  virtual size_t static_threadgroup_memory_length() const = 0;
};

// An MTLLibrary: the kernel functions of one MSL translation unit.
class MetalLibrary {
 public:
  virtual ~MetalLibrary() = default;
  // The pipeline of kernel function `name`; throws Error when the library has none.
  virtual std::shared_ptr<MetalPipeline> pipeline(const std::string& name) = 0;
};

// setBuffer:offset:atIndex: for index = position in the list. `bytes` is what the kernel may
// touch from `offset` (0: unknown): Metal has no such argument and ignores it; the sim checks
// the binding against it and guards it.
struct Binding {
  std::shared_ptr<MetalBuffer> buffer;
  size_t offset = 0;
  size_t bytes = 0;
};

// An MTLCommandBuffer: dispatches and blits run in order once committed, after every command
// buffer committed before it on the same queue.
class MetalCommandBuffer {
 public:
  enum class Status { Encoding, Committed, Completed, Error };
  virtual ~MetalCommandBuffer() = default;
  // dispatchThreadgroups: `groups` threadgroups of `threads` threads each.
  virtual void dispatch(const std::shared_ptr<MetalPipeline>& p, const std::vector<Binding>& buffers, size_t groups,
                        size_t threads) = 0;
  // Blits. macOS wants offsets and sizes that are multiples of 4 (the sim refuses others).
  virtual void copy(const std::shared_ptr<MetalBuffer>& from, size_t from_at, const std::shared_ptr<MetalBuffer>& to,
                    size_t to_at, size_t bytes) = 0;
  virtual void fill(const std::shared_ptr<MetalBuffer>& b, size_t at, size_t bytes, unsigned char value) = 0;
  virtual void commit() = 0;
  virtual void wait_until_completed() = 0;
  virtual Status status() const = 0;
  // Why the status is Error: the failing command, its kernel function and what went wrong.
  virtual std::string error() const = 0;
};

// An MTLCommandQueue: command buffers run in the order they are committed.
class MetalQueue {
 public:
  virtual ~MetalQueue() = default;
  virtual std::shared_ptr<MetalCommandBuffer> command_buffer() = 0;
};

// An MTLDevice with the compiler that makes its libraries.
class MetalDriver {
 public:
  virtual ~MetalDriver() = default;
  virtual std::string device_name() const = 0;
  // Names the device and its memory space: the staging pool is shared per key.
  virtual std::string key() const = 0;
  virtual size_t max_threads_per_threadgroup() const = 0;
  virtual size_t max_threadgroup_memory_length() const = 0;
  // A shared-storage buffer of `bytes` (at least one), zeroed.
  virtual std::shared_ptr<MetalBuffer> new_buffer(size_t bytes) = 0;
  virtual std::unique_ptr<MetalQueue> new_queue() = 0;
  // What decides the bytes build() makes (compiler, version, options): part of the cache key.
  virtual std::string compiler_identity() = 0;
  // The code for MSL `source`, built with fast math off: what the kernel cache keeps. Source
  // the compiler rejects is an InternalError carrying the compiler's log.
  virtual std::string build(const std::string& source) = 0;
  // The library of code build() made.
  virtual std::shared_ptr<MetalLibrary> library(const std::string& code) = 0;
};

// The machine's Metal device; null, with the reason in `why`, where this build has none (every
// build but the macOS one, apple/).
MetalDriver* metal_driver(std::string* why);

// The simulated Metal device (sim/): on every host.
MetalDriver& sim_driver();

}  // namespace lockstep::metal
