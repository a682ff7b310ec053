// A program cut into translation units that its compiler builds at once, one a core: the
// printers put kUnitBreak between the prelude, each kernel and the epilogue.
#pragma once
#include <string>
#include <vector>

namespace lockstep::codegen {

// Between the prelude, each kernel and the epilogue of a program: the target's compiler may
// build the pieces as several translation units, each headed by the prelude.
inline constexpr const char* kUnitBreak = "// lockstep: a translation unit may start here\n";
// Kernels per translation unit at least, below which a program is not split further.
inline constexpr size_t kPiecesPerUnit = 8;

// `source` cut at its unit breaks into at most `most` units of about equal size, each the
// prelude (the text before the first break) and a run of the pieces after it, in order.
std::vector<std::string> translation_units(const std::string& source, size_t most);

}  // namespace lockstep::codegen
