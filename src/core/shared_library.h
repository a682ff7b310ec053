// Entry points of a vendor library loaded with dlopen at run time (the CUDA driver, NVRTC, the
// OpenCL ICD loader): one build runs with or without the vendor's runtime installed.
#pragma once
#include <initializer_list>
#include <string>

namespace lockstep {

// One entry point to resolve: where its pointer goes, and its exported name.
struct LibrarySymbol {
  void* slot;
  const char* name;
};

template <class F>
LibrarySymbol library_symbol(F& fn, const char* name) {
  return {reinterpret_cast<void*>(&fn), name};
}

// Fills every slot from the dlopen handle `lib`; the name of the first symbol it lacks, or "".
std::string bind_library(void* lib, std::initializer_list<LibrarySymbol> symbols);

}  // namespace lockstep
