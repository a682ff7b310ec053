// OpenCL C to a program binary on the chosen device, through the platform's own compiler
// (clBuildProgram): the binary is what the kernel cache keeps, keyed by the source and the
// platform, device, driver and build options.
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
// The program from a binary ClCompiler made, built and ready for clCreateKernel.
cl_program program_from_binary(Context& c, const std::string& binary);

}  // namespace lockstep::opencl
