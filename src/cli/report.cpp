#include "cli/report.h"

#include <cmath>
#include <cstdio>

#include "core/sha256.h"
#include "core/text.h"
#include "graph/graph.h"

namespace lockstep::cli {

TensorStats tensor_stats(const Tensor& t) {
  RefTensor r = to_ref(t);
  TensorStats s;
  double sum_sq = 0;
  for (int64_t k = 0; k < r.numel(); ++k) {
    double v = r.get(k);
    if (std::isnan(v)) { ++s.nan; continue; }
    if (std::isinf(v)) ++s.inf;
    s.min = s.counted == 0 ? v : std::min(s.min, v);
    s.max = s.counted == 0 ? v : std::max(s.max, v);
    sum_sq += v * v;
    ++s.counted;
  }
  if (s.counted > 0) s.rms = std::sqrt(sum_sq / static_cast<double>(s.counted));
  return s;
}

static std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string output_line(const std::string& name, const Tensor& t) {
  std::string line = printable(name) + "  " + TypeInfo{t.dtype, true, t.shape}.str() +
                     "  sha256=" + sha256_hex(t.bytes.data(), t.bytes.size());
  TensorStats s = tensor_stats(t);
  if (s.counted > 0) line += "  min=" + num(s.min) + " max=" + num(s.max) + " rms=" + num(s.rms);
  else line += "  min=- max=- rms=-";
  if (s.nan) line += " nan=" + std::to_string(s.nan);
  if (s.inf) line += " inf=" + std::to_string(s.inf);
  return line;
}

std::string output_file_name(const std::string& output_name) {
  std::string f = output_name;
  for (char& c : f) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  return f + ".npy";
}

std::string compile_phases(const Program::CompileStats& s) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", s.device_ms);
  std::string line = std::string("device ") + ms + " ms" + (s.device_alongside ? " (alongside the compile)" : "") + ";";
  for (size_t k = 0; k < s.phases_ms.size(); ++k) {
    std::snprintf(ms, sizeof ms, "%.1f", s.phases_ms[k].second);
    line += (k ? ", " : " ") + s.phases_ms[k].first + " " + ms;
  }
  return line + (s.phases_ms.empty() ? "" : " ms");
}

}  // namespace lockstep::cli
