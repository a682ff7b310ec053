#include "codegen/units.h"

#include <algorithm>

namespace lockstep::codegen {

// A program of fewer than 2 kPiecesPerUnit pieces stays one unit.
std::vector<std::string> translation_units(const std::string& source, size_t most) {
  const std::string mark = kUnitBreak;
  std::vector<std::string> pieces;
  size_t at = source.find(mark);
  if (at == std::string::npos) return {source};
  std::string prelude = source.substr(0, at);
  while (at != std::string::npos) {
    size_t next = source.find(mark, at + mark.size());
    pieces.push_back(source.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  size_t n = std::max<size_t>(1, std::min(most, pieces.size() / kPiecesPerUnit));
  size_t total = 0, done = 0;
  for (const std::string& p : pieces) total += p.size();
  std::vector<std::string> units(n, prelude);
  for (const std::string& p : pieces) {
    // The last piece (the epilogue, whose tables the runtimes read from the last unit) stays
    // last however large it is.
    size_t u = &p == &pieces.back() ? n - 1 : std::min(n - 1, done * n / std::max<size_t>(total, 1));
    units[u] += p;
    done += p.size();
  }
  return units;
}

}  // namespace lockstep::codegen
