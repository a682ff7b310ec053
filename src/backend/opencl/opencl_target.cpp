#include "backend/opencl/opencl_target.h"

#include "backend/opencl/opencl_codegen.h"
#include "backend/opencl/opencl_compiler.h"
#include "backend/opencl/opencl_device.h"
#include "core/error.h"

namespace lockstep::opencl {

TargetInfo target_info() {
  TargetInfo t;
  t.name = "opencl";
  t.summary = "OpenCL 1.2 devices (PoCL, NVIDIA, ...): OpenCL C built by the platform, run through the ICD loader";
  t.desc = target_desc();
  t.program_source = program_source;
  t.source_files = source_files;
  t.make_compiler = [](const CompileOptions& o, const Device*) -> std::unique_ptr<CodeCompiler> {
    return std::make_unique<ClCompiler>(context(o.device));
  };
  t.devices = [] {
    std::vector<std::string> lines;
    for (const DeviceInfo& d : opencl::devices()) lines.push_back(d.describe());
    return lines;
  };
  t.make_device = [](const CompileOptions& o, std::string* why) -> std::unique_ptr<Device> {
    if (std::string no = unavailable(o.device); !no.empty()) {
      if (why) *why = no;
      return nullptr;
    }
    return make_device(context(o.device), o.device);
  };
  return t;
}

}  // namespace lockstep::opencl
