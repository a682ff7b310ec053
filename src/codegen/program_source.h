// What a printer makes of a plan: the one translation unit the target's compiler builds, and
// the function in it that runs each kernel (kernels whose code is the same but for their
// buffers share the first one's), so no runtime prints the program again to learn them.
#pragma once
#include <string>
#include <vector>

namespace lockstep::codegen {

struct ProgramSource {
  std::string text;
  std::vector<std::string> entries;  // per kernel of the plan, in order
};

}  // namespace lockstep::codegen
