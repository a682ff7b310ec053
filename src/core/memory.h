// Memory refused before it is taken: every large allocation lockstep makes for a model (tensors
// the reference computes, constants the compiler folds or probes, device blocks on the host,
// generated inputs, external data) is first checked against what this process may still use,
// so a model that asks for more is an error naming what it would allocate, never an
// out-of-memory kill.
#pragma once
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/shape.h"

namespace lockstep {

// An allocation refused: more than the process may use. Sites that know more (the node being
// folded) add it to the message.
class MemoryRefused : public Error {
 public:
  using Error::Error;
};

struct MemoryRoom {
  int64_t bytes = INT64_MAX;  // what the process may still allocate
  std::string limit;          // the limit that decides it ("the cgroup's memory.max", ...)
};

// The least of: the cgroup's memory.max less its memory.current, RLIMIT_AS less the process's
// virtual size, the system's MemAvailable, and --max-memory (LOCKSTEP_MAX_MEMORY) less the
// process's resident size.
MemoryRoom memory_room();

// Throws Error "WHAT needs N bytes (X GiB), more than this process may use now (Y: LIMIT)"
// when `bytes` exceed memory_room(); small requests are not checked (they cannot matter).
void require_memory(int64_t bytes, const std::string& what);

// Bytes of `n` elements of `size` bytes each, or -1 when that overflows int64.
int64_t checked_bytes(int64_t n, int64_t size);
// The element count of `s`, or -1 when it overflows int64 (unknown dims count as 0).
int64_t checked_numel(const Shape& s);

// "8.00 GiB (8589934592 bytes)".
std::string bytes_text(int64_t bytes);

// Parses a size such as "2G", "512M", "1000000" (K, M, G, T: powers of 1024); throws Error
// naming `option` otherwise.
int64_t parse_memory_size(const std::string& text, const std::string& option);

}  // namespace lockstep
