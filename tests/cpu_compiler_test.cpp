// The cpu target's system compiler builds a large program as several translation units, each
// headed by the prelude, and links them.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_compiler.h"
#include "codegen/host_printer.h"

namespace lockstep {
namespace {

std::string program(int pieces) {
  std::string s = "prelude\n";
  for (int k = 0; k < pieces; ++k) s += std::string(codegen::kUnitBreak) + "piece " + std::to_string(k) + "\n";
  return s;
}

TEST(CpuCompiler, ALargeProgramIsCutIntoUnitsEachHeadedByThePrelude) {
  std::string src = program(40);
  std::vector<std::string> units = codegen::translation_units(src, 3);
  ASSERT_EQ(units.size(), 3u);
  std::string joined;
  for (const std::string& u : units) {
    ASSERT_EQ(u.rfind("prelude\n" + std::string(codegen::kUnitBreak), 0), 0u) << u;
    joined += u.substr(8);
  }
  EXPECT_EQ("prelude\n" + joined, src);  // every piece once, in order
  EXPECT_GE(units[0].size(), units[2].size() / 2);
}

TEST(CpuCompiler, SmallProgramsAndOneCoreStayOneUnit) {
  EXPECT_EQ(codegen::translation_units(program(40), 1), std::vector<std::string>{program(40)});
  EXPECT_EQ(codegen::translation_units(program(codegen::kPiecesPerUnit * 2 - 1), 8).size(), 1u);
  EXPECT_EQ(codegen::translation_units(program(codegen::kPiecesPerUnit * 2), 8).size(), 2u);
  EXPECT_EQ(codegen::translation_units("no breaks", 8), std::vector<std::string>{"no breaks"});
}

}  // namespace
}  // namespace lockstep
