#include "backend/metal/metal_target.h"

#include "backend/metal/metal_codegen.h"
#include "backend/metal/metal_device.h"

namespace lockstep::metal {

TargetInfo target_info() {
  TargetInfo t;
  t.name = "metal";
  t.summary = "Apple GPUs through Metal: MSL built with fast math off, shared-storage buffers, staged uploads";
  t.desc = target_desc();
  t.program_source = program_source;
  t.source_files = source_files;
  t.make_compiler = [](const CompileOptions&, const Device*) {
    std::string why;
    return make_compiler(metal_driver(&why));
  };
  t.devices = [] {
    std::string why;
    MetalDriver* d = metal_driver(&why);
    return d ? std::vector<std::string>{d->device_name()} : std::vector<std::string>{};
  };
  t.make_device = [](const CompileOptions&, std::string* why) -> std::unique_ptr<Device> {
    MetalDriver* d = metal_driver(why);
    return d ? make_device(*d, "metal") : nullptr;
  };
  t.skips = {{"Conformance", "3 cases compute in f64, which Metal lacks: MetalConformance (tests/metal_sim_test.cpp) "
                             "runs the suite with those named"}};
  return t;
}

TargetInfo sim_target_info() {
  TargetInfo t = target_info();
  t.name = "metal-sim";
  t.summary = "the metal target's MSL and runtime over a simulated Metal device: kernels built by the host C++ "
              "compiler, late copies, guarded buffers";
  t.desc.name = t.name;
  t.make_compiler = [](const CompileOptions&, const Device*) { return make_compiler(&sim_driver()); };
  t.devices = [] { return std::vector<std::string>{sim_driver().device_name()}; };
  t.make_device = [](const CompileOptions&, std::string*) -> std::unique_ptr<Device> {
    return make_device(sim_driver(), "metal-sim");
  };
  return t;
}

}  // namespace lockstep::metal
