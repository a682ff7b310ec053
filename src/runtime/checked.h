// Byte patterns of checked execution (--checked), the same on every target.
#pragma once
#include <cstddef>

#include "passes/pipeline.h"
#include "runtime/program.h"

namespace lockstep {

constexpr unsigned char kSentinelByte = 0xA5;  // guards around buffers, checked after a run
constexpr unsigned char kPoisonByte = 0xFF;    // all-ones: NaN for every float type
constexpr size_t kGuardBytes = 4096;

// The pipeline part of a target's compile options.
inline PipelineOptions pipeline_options(const CompileOptions& o) {
  PipelineOptions p;
  p.pass_limit = o.pass_limit;
  p.verify_each = o.verify_each;
  p.dump_ir_dir = o.dump_ir_dir;
  p.fault = o.fault;  // kernel:NODE and pass:N are planted by the shared pipeline
  return p;
}

}  // namespace lockstep
