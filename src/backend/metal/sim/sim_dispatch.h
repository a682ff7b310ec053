// One dispatch on metal-sim: its bindings checked as Metal's API validation would at encode
// time, then run with each binding of known size on a guarded copy of its own (the first byte
// outside it faults; writes into the rest of its pages are found afterwards), written back
// when the kernel may write it.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/metal/metal_api.h"
#include "backend/metal/sim/sim_memory.h"

namespace lockstep::metal::sim {

class SimBuffer : public MetalBuffer {
 public:
  explicit SimBuffer(size_t bytes) : mem_(bytes, Guarded::Place::Start), length_(bytes) {}
  unsigned char* contents() override { return mem_.data(); }
  size_t length() const override { return length_; }
  void write(size_t at, const void* src, size_t bytes) override;
  const Guarded& memory() const { return mem_; }
  std::atomic<int> readers{0};  // copies encoded that read it and have not run yet

 private:
  Guarded mem_;
  size_t length_;
};

// The launcher's LsSimDispatch, field for field (sim_headers.cpp), and its entry points.
struct DispatchArgs {
  void* const* buffers;
  uint32_t groups, threads;
  char* error;
  unsigned char* scratch;
  size_t fibre_bytes;
};
using RunFn = int (*)(const DispatchArgs*);

class SimPipeline : public MetalPipeline {
 public:
  SimPipeline(std::string name, RunFn run, std::string access, bool barriers)
      : name_(std::move(name)), run_(run), access_(std::move(access)), barriers_(barriers) {}
  const std::string& name() const override { return name_; }
  size_t max_total_threads_per_threadgroup() const override;
  size_t static_threadgroup_memory_length() const override { return 0; }  // not simulated
  // 'w', 'r' or '-' (unused) for each [[buffer(i)]], i < 32.
  const std::string& access() const { return access_; }
  RunFn run() const { return run_; }
  bool barriers() const { return barriers_; }  // its threads run as fibres

 private:
  std::string name_;
  RunFn run_;
  std::string access_;
  bool barriers_;
};

// Throws Error naming the kernel when a binding the kernel uses is missing or lies outside its
// buffer, or the threadgroup is empty or larger than the pipeline allows.
void check_dispatch(const SimPipeline& p, const std::vector<Binding>& b, size_t groups, size_t threads);
// Runs it; "" or what went wrong ("kernel k3: an access 4 bytes past the end of buffer(1) ...").
std::string run_dispatch(const SimPipeline& p, const std::vector<Binding>& b, size_t groups, size_t threads);

}  // namespace lockstep::metal::sim
