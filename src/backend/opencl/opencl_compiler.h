// OpenCL C to a program binary on the chosen device, through the platform's own compiler
// (clBuildProgram): the binary is what the kernel cache keeps, keyed by the source and the
// platform, device, driver and build options (for PoCL, the checked source: see keeps_source).
#pragma once
#include <string>

#include "backend/opencl/opencl_platform.h"
#include "runtime/device.h"

namespace lockstep::opencl {

class ClCompiler : public CodeCompiler {
 public:
  explicit ClCompiler(Context& c);
  std::string identity() override;
  std::string compile(const std::string& source) override;

 private:
  Context& c_;
  std::string options_;
};

// Builds `program` for the context's device; throws InternalError with the build log when the
// compiler rejects it (generated code that does not build is lockstep's bug).
void build(Context& c, cl_program program, const std::string& options);
// The program from code ClCompiler made, built and ready for clCreateKernel.
cl_program program_from_code(Context& c, const std::string& code);
// Whether ClCompiler keeps the source rather than the program binary for this device: PoCL's
// binaries, reloaded in another process, have failed an assertion inside PoCL
// (pocl_binary.c: `len > 0`), which aborts the process; PoCL keeps its own build cache.
bool keeps_source(const DeviceInfo& d);

}  // namespace lockstep::opencl
