// The one kernel cache of every target: compiled code keyed by the SHA-256 of the target, the
// source and the compiler's identity (compiler, version, flags, architecture), never by
// name. In memory for the process and on disk in $XDG_CACHE_HOME/lockstep/<target>: each
// entry written atomically with its checksum, checked on load, rebuilt when corrupt. A cache
// folder that cannot be trusted or written costs speed, never the run.
#pragma once
#include <memory>
#include <string>

#include "kernel/fault_hooks.h"
#include "runtime/device.h"

namespace lockstep {

struct CompiledCode {
  std::string key;    // the content key
  std::string bytes;  // what the compiler produced (a shared object, a cubin)
};

struct CacheRequest {
  std::string target;
  std::string source;
  bool use_cache = true;              // false: neither memory nor disk, always compile
  const FaultHooks* fault = nullptr;  // cache-by-name acts on the key
};

std::shared_ptr<const CompiledCode> cached_code(CodeCompiler& compiler, const CacheRequest& r);

// The content key cached_code uses for `source` (for tests and reports).
std::string code_key(CodeCompiler& compiler, const std::string& target, const std::string& source);

}  // namespace lockstep
