#include "core/shared_library.h"

#include <dlfcn.h>

#include <cstring>

namespace lockstep {

std::string bind_library(void* lib, std::initializer_list<LibrarySymbol> symbols) {
  for (const LibrarySymbol& s : symbols) {
    void* p = dlsym(lib, s.name);
    if (!p) return s.name;
    std::memcpy(s.slot, &p, sizeof p);  // a function pointer's bytes, as dlsym hands them out
  }
  return "";
}

}  // namespace lockstep
