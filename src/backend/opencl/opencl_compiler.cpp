#include "backend/opencl/opencl_compiler.h"

#include "backend/opencl/opencl_codegen.h"
#include "core/error.h"

namespace lockstep::opencl {

namespace {

constexpr size_t kShownLog = 4000;  // of a build log, in the error

std::string build_log(Context& c, cl_program program) {
  size_t n = 0;
  c.api.clGetProgramBuildInfo(program, c.device.id, kProgramBuildLog, 0, nullptr, &n);
  std::string log(n, '\0');
  if (n) c.api.clGetProgramBuildInfo(program, c.device.id, kProgramBuildLog, n, log.data(), nullptr);
  log = log.c_str();
  return log.size() > kShownLog ? log.substr(0, kShownLog) + "\n...(" + std::to_string(log.size()) + " bytes)" : log;
}

// Releases a program when the scope ends (an error while building leaves nothing behind).
struct ProgramHolder {
  const Api& a;
  cl_program p;
  ~ProgramHolder() {
    if (p) a.clReleaseProgram(p);
  }
};

}  // namespace

void build(Context& c, cl_program program, const std::string& options) {
  cl_int e = c.api.clBuildProgram(program, 1, &c.device.id, options.c_str(), nullptr, nullptr);
  if (e == kBuildProgramFailure)
    throw InternalError("internal: the OpenCL compiler of " + c.device.name + " rejected the generated source:\n" +
                        build_log(c, program));
  check(e, "clBuildProgram(" + c.device.name + ")");
}

const std::string kSourceMark = "lockstep-opencl-source\n";

bool keeps_source(const DeviceInfo& d) { return d.platform_name.find("Portable Computing Language") != std::string::npos; }

cl_program program_from_code(Context& c, const std::string& code) {
  cl_int status = kSuccess, e = kSuccess;
  cl_program p = nullptr;
  if (code.rfind(kSourceMark, 0) == 0) {
    const char* text = code.c_str() + kSourceMark.size();
    size_t length = code.size() - kSourceMark.size();
    p = c.api.clCreateProgramWithSource(c.ctx, 1, &text, &length, &e);
    check(e, "clCreateProgramWithSource");
  } else {
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(code.data());
    size_t size = code.size();
    p = c.api.clCreateProgramWithBinary(c.ctx, 1, &c.device.id, &size, &bytes, &status, &e);
    check(e != kSuccess ? e : status, "clCreateProgramWithBinary");
  }
  ProgramHolder hold{c.api, p};
  build(c, p, build_options(c.device.correctly_rounded_divide_sqrt));
  hold.p = nullptr;
  return p;
}

ClCompiler::ClCompiler(Context& c) : c_(c), options_(build_options(c.device.correctly_rounded_divide_sqrt)) {}

std::string ClCompiler::identity() {
  return c_.device.identity() + "; options " + options_ + (keeps_source(c_.device) ? "; kept as source" : "");
}

std::string ClCompiler::compile(const std::string& source) {
  const char* text = source.c_str();
  size_t length = source.size();
  cl_int e = kSuccess;
  ProgramHolder p{c_.api, c_.api.clCreateProgramWithSource(c_.ctx, 1, &text, &length, &e)};
  check(e, "clCreateProgramWithSource");
  build(c_, p.p, options_);  // a source that does not build fails here, not at load
  if (keeps_source(c_.device)) return kSourceMark + source;
  size_t size = 0;
  check(c_.api.clGetProgramInfo(p.p, kProgramBinarySizes, sizeof size, &size, nullptr), "clGetProgramInfo(binary size)");
  std::string binary(size, '\0');
  unsigned char* out = reinterpret_cast<unsigned char*>(binary.data());
  check(c_.api.clGetProgramInfo(p.p, kProgramBinaries, sizeof out, &out, nullptr), "clGetProgramInfo(binary)");
  if (binary.empty()) throw Error("opencl: " + c_.device.name + " gave an empty program binary");
  return binary;
}

}  // namespace lockstep::opencl
