// Builds for hosts other than macOS (CMake leaves this file out on Apple, where apple/ defines
// metal_driver): the metal target compiles and prints MSL here but has no device to run on.
#include "backend/metal/metal_api.h"

namespace lockstep::metal {

MetalDriver* metal_driver(std::string* why) {
  if (why) *why = "Metal needs macOS with metal-cpp; this build has no Metal runtime";
  return nullptr;
}

}  // namespace lockstep::metal
