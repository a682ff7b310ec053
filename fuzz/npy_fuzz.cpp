// Fuzzes the .npy reader: any bytes must parse or give lockstep::Error, and a parsed array
// must survive a write/read round trip unchanged.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "frontend/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    lockstep::Tensor t = lockstep::parse_npy(bytes, "fuzz.npy");
    if (t.dtype == lockstep::DType::bf16) return 0;  // no .npy spelling to write back
    lockstep::Tensor back = lockstep::parse_npy(lockstep::encode_npy(t), "round trip");
    if (back.dtype != t.dtype || back.shape != t.shape || back.bytes != t.bytes) std::abort();
  } catch (const lockstep::Error&) {
  }
  return 0;
}
