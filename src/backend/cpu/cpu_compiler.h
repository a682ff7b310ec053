// Turns generated C++ into a loaded shared object: system compiler, on-disk cache keyed by a
// hash of everything that affects the binary, in-memory cache keyed the same way.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace lockstep::cpu {

using KernelFn = void (*)(void* const*);

struct Module {
  void* handle = nullptr;
  std::string key;   // sha256 of source, compiler identity and flags
  std::vector<KernelFn> kernels;
  void (*set_threads)(int) = nullptr;
  ~Module();
};

struct CompilerOptions {
  bool use_cache = true;  // --no-cache: neither read nor write the disk cache
  bool key_by_name = false;  // test aid (--inject-fault cache-by-name): in-process cache keyed by a fixed name
};

// Compiles (or finds in a cache) and loads `source`. Throws Error with the compiler's
// message when compilation fails.
std::shared_ptr<Module> load_module(const std::string& source, const CompilerOptions& opts);

// "$XDG_CACHE_HOME/lockstep/cpu" (or ~/.cache/lockstep/cpu).
std::string cache_dir();

}  // namespace lockstep::cpu
