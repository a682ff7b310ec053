// Spelling tables: what a C-style target writes differently. A target folder fills one in;
// the printers read it and never name a target (as tinygrad's cstyle renderers differ from a
// C base by a dozen attributes).
#pragma once
#include <string>

namespace lockstep::codegen {

// Spellings every C-style target has.
struct CDialect {
  std::string header;       // first lines: a comment, includes or typedefs, INFINITY, NAN, INT64_MIN
  std::string fn;           // qualifier of the prelude's helper functions: "static inline"
  std::string restrict_kw;  // C99 restrict on buffer pointers: "__restrict"
  std::string math_suffix;  // the target's float sqrt/fabs/floor/fmod: "f" (sqrtf) in C, "" if overloaded
  std::string int_suffix = "LL";  // of 64-bit integer literals: "L" in MSL, which has no long long
  // Helpers whose bodies differ per target: float <-> IEEE half (ls_h2f, ls_f2h, ls_round_h)
  // and float bits (ls_as_float, ls_as_uint; with f64 also ls_as_double); the shared prelude
  // builds bf16 and the canonical NaN on the latter.
  std::string conversions;
  bool f64 = true;  // the target has double (its TargetDesc's has_f64): the prelude's f64 helpers
};

// A GPU target: one function per kernel, launched as work items in groups.
struct GpuDialect : CDialect {
  std::string kernel_qualifier;  // before the name: "extern \"C\" __global__ void"
  std::string launch_bounds;     // after the qualifier; "{group}": threads per group
  std::string written_space;     // address space of the buffer a kernel writes ("" or "device ")
  std::string read_space;        // ... and of those it reads ("const ", "device const ")
  std::string param_suffix;      // after each buffer parameter; "{n}": its position (a binding slot)
  std::string extra_params;      // after the buffers: the thread position where it is a parameter
  std::string thread_index;      // index of the thread in its group: "threadIdx.x"
  std::string group_index;       // index of the group: "blockIdx.x"
  std::string group_size;        // threads per group: "blockDim.x"
  std::string group_count;       // groups launched: "gridDim.x"
  std::string unroll_pragma;     // "#pragma unroll"
  std::string barrier;           // group barrier, for kernels that share memory
  // Declaration of the array `ls_stage` a group shares, of {type} and {n} elements (a target
  // whose launch sizes it may ignore {n}).
  std::string shared_array;
  std::string device_global;     // qualifier of the epilogue's globals the runtime reads; ""
                                 // where there are none (OpenCL 1.2): a kernel writes them instead
  std::string constant_space;    // program-scope constant data: "__constant"
  // Parameters of ls_plan_info where a scalar cannot be a kernel parameter (MSL: a reference
  // into a bound buffer); "": WRITTEN_SPACE int64_t* out, const int64_t room.
  std::string plan_info_params;
  // Buffers are handles, not addresses (OpenCL's cl_mem): each buffer parameter "bN_base" is
  // followed by its byte offset "bN_at", and the kernel forms bN from the two.
  bool offset_params = false;
};

}  // namespace lockstep::codegen
