#include "runtime/device.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace lockstep {

HostBlock Device::host_alloc(size_t bytes) {
  HostBlock b;
  b.data = static_cast<unsigned char*>(std::malloc(bytes ? bytes : 1));
  if (!b.data) throw std::bad_alloc();
  b.bytes = bytes;
  b.release = [](unsigned char* p) { std::free(p); };
  return b;
}

void Device::host_write(HostBlock& block, const void* src, size_t bytes) {
  if (bytes) std::memcpy(block.data, src, bytes);
}

}  // namespace lockstep
