// What `run` prints about each output: shape, dtype, SHA-256 of its bytes, value statistics.
#pragma once
#include <cstdint>
#include <string>

#include "core/tensor.h"
#include "runtime/program.h"

namespace lockstep::cli {

struct TensorStats {
  double min = 0, max = 0, rms = 0;  // over non-NaN elements
  int64_t nan = 0, inf = 0;
  int64_t counted = 0;               // elements that are not NaN
};

TensorStats tensor_stats(const Tensor& t);

// "NAME  float32[2,3]  sha256=HEX  min=.. max=.. rms=.." (plus nan=/inf= when present).
std::string output_line(const std::string& name, const Tensor& t);

// The output's name with every character outside [A-Za-z0-9._-] replaced by '_', plus ".npy".
std::string output_file_name(const std::string& output_name);

// Where a compile's time went: "device 150.2 ms; generalise 120.3, source 20.1, ... ms".
std::string compile_phases(const Program::CompileStats& s);

}  // namespace lockstep::cli
