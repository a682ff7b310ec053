// Fuzzes the .npy reader: any bytes must parse or give lockstep::Error, and a parsed array
// must survive a write/read round trip unchanged. The streaming file reader (header first, then
// only the bytes it declares) must agree with the in-memory parser on every input.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "frontend/npy.h"

namespace {

// read_npy on the bytes as a file (a memfd, so no disk is touched): the tensor, or "" and the error.
bool read_as_file(const std::string& bytes, lockstep::Tensor* t) {
  static int fd = memfd_create("npy_fuzz", 0);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) std::abort();
  try {
    *t = lockstep::read_npy("/proc/self/fd/" + std::to_string(fd));
    return true;
  } catch (const lockstep::Error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  lockstep::Tensor from_file;
  bool file_ok = read_as_file(bytes, &from_file);
  bool parsed_ok = false;
  try {
    lockstep::Tensor t = lockstep::parse_npy(bytes, "fuzz.npy");
    parsed_ok = true;
    if (!file_ok || from_file.dtype != t.dtype || from_file.shape != t.shape || from_file.bytes != t.bytes) std::abort();
    if (t.dtype == lockstep::DType::bf16) return 0;  // no .npy spelling to write back
    lockstep::Tensor back = lockstep::parse_npy(lockstep::encode_npy(t), "round trip");
    if (back.dtype != t.dtype || back.shape != t.shape || back.bytes != t.bytes) std::abort();
  } catch (const lockstep::Error&) {
  }
  if (file_ok && !parsed_ok) std::abort();
  return 0;
}
