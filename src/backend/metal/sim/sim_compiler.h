// metal-sim's compiler: the MSL text, unchanged, built as C++17 by the host compiler against
// the sim's <metal_stdlib>, with a generated launcher that calls each kernel function for every
// thread of every threadgroup with its position. No fast-math option, no FMA contraction.
#pragma once
#include <string>
#include <vector>

namespace lockstep::metal::sim {

// What the launcher passes each parameter of one kernel function, in order: a bound buffer
// ("ls_sim::Buf{2}") or a position attribute ("ls_sim::Tid{}").
struct Signature {
  std::string name;
  std::vector<std::string> args;
};
// Every `kernel void` function of `msl`; throws InternalError naming a parameter the sim
// cannot bind (no [[buffer(i)]] and no position attribute it knows).
std::vector<Signature> signatures(const std::string& msl);
// The launcher translation unit: includes program.metal, then one entry per kernel function
// and the table ls_sim_kernels / ls_sim_kernel_count.
std::string launcher_source(const std::string& msl);

std::string compiler_identity();
// The shared object for `msl`; InternalError with the compiler's output when it does not build.
std::string build(const std::string& msl);

}  // namespace lockstep::metal::sim
