// StagedFiles and write_file_atomic: all or nothing, every write checked, temporaries that
// cannot be pre-planted, and an old file put back when a later rename fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "frontend/npy.h"
#include "test_util.h"

using namespace lockstep;
using lockstep::testing::error_of;
namespace fs = std::filesystem;

namespace {

class Files : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::temp_directory_path() / ("lockstep_files_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> listing(const fs::path& d) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_F(Files, NothingLandsUntilCommit) {
  std::ofstream(dir / "a") << "old a";
  {
    StagedFiles f;
    f.add((dir / "a").string(), "new a");
    f.add((dir / "b").string(), "new b");
    EXPECT_EQ(slurp(dir / "a"), "old a");
    EXPECT_FALSE(fs::exists(dir / "b"));
  }  // never committed: the temporaries go
  EXPECT_EQ(listing(dir), std::vector<std::string>{"a"});
  StagedFiles f;
  f.add((dir / "a").string(), "new a");
  f.add((dir / "b").string(), "new b");
  f.commit();
  EXPECT_EQ(slurp(dir / "a"), "new a");
  EXPECT_EQ(slurp(dir / "b"), "new b");
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"a", "b"}));
}

TEST_F(Files, AFailedRenamePutsTheEarlierFilesBack) {
  fs::create_directories(dir / "one");
  fs::create_directories(dir / "two");
  std::ofstream(dir / "one" / "a") << "old a";
  StagedFiles f;
  f.add((dir / "one" / "a").string(), "new a");
  f.add((dir / "one" / "fresh").string(), "new fresh");
  f.add((dir / "two" / "b").string(), "new b");
  // The third file's folder goes away (with its temporary) before the commit: its rename
  // fails after the first two succeeded, and those are undone.
  fs::rename(dir / "two", dir / "moved");
  std::string e = error_of([&] { f.commit(); });
  EXPECT_NE(e.find((dir / "two" / "b").string()), std::string::npos) << e;
  EXPECT_NE(e.find("No such file or directory"), std::string::npos) << e;
  EXPECT_EQ(slurp(dir / "one" / "a"), "old a");
  EXPECT_EQ(listing(dir / "one"), std::vector<std::string>{"a"});
}

TEST_F(Files, AFolderInTheWayFailsBeforeAnythingIsReplaced) {
  std::ofstream(dir / "a") << "old a";
  fs::create_directories(dir / "b");
  StagedFiles f;
  f.add((dir / "a").string(), "new a");
  f.add((dir / "b").string(), "new b");
  std::string e = error_of([&] { f.commit(); });
  EXPECT_NE(e.find((dir / "b").string()), std::string::npos) << e;
  EXPECT_EQ(slurp(dir / "a"), "old a");
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"a", "b"}));
}

TEST_F(Files, PlantedTemporaryNamesDoNotBlockOrRedirectAWrite) {
  // The names an earlier version used (".NAME.tmp-PID-N"), planted as symlinks to a victim.
  std::ofstream(dir / "victim") << "victim";
  for (int k = 0; k < 100; ++k)  // ctest runs each test in a process of its own
    fs::create_symlink(dir / "victim", dir / (".out.npy.tmp-" + std::to_string(getpid()) + "-" + std::to_string(k)));
  EXPECT_EQ(error_of([&] { write_file_atomic((dir / "out.npy").string(), "data"); }), "");
  EXPECT_EQ(slurp(dir / "out.npy"), "data");
  EXPECT_EQ(slurp(dir / "victim"), "victim");
  EXPECT_EQ(listing(dir).size(), 102u);  // the plants, the victim, the file: nothing else
}

TEST_F(Files, AWriteThatDoesNotFitIsAnErrorAndLeavesNothing) {
  // In a child whose files may not grow past 4 KiB (a disk that fills up).
  std::string path = (dir / "big").string();
  std::ofstream(path) << "old";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &lim);
    std::string e = error_of([&] {
      StagedFiles f;
      f.add((dir / "small").string(), "fits");
      f.add(path, std::string(100000, 'x'));
      f.commit();
    });
    bool ok = e.find(path) != std::string::npos && e.find("File too large") != std::string::npos;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the error did not name the file and EFBIG";
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(listing(dir), std::vector<std::string>{"big"});
}

TEST_F(Files, OutputDirRefusesANonEmptyFolderAndRemovesWhatItMade) {
  std::ofstream(dir / "mine") << "mine";
  std::string e = error_of([&] { OutputDir d(dir.string(), "test folder", true); });
  EXPECT_NE(e.find("not empty"), std::string::npos) << e;
  { OutputDir d((dir / "x" / "y").string(), "test folder", true); }  // not kept: removed
  EXPECT_EQ(listing(dir), std::vector<std::string>{"mine"});
  {
    OutputDir d((dir / "x" / "y").string(), "test folder", true);
    d.keep();
  }
  EXPECT_TRUE(fs::is_directory(dir / "x" / "y"));
}

// A file name too long for the file system: the temporary (named from its first 96 bytes) is
// written, then the destination cannot be looked at. The error names the file; it read the name
// after the entries were freed (found by valgrind on `run` of an output named 300 characters).
TEST_F(Files, ANameTooLongIsAnErrorNamingItAndLeavesNothing) {
  std::string name = (dir / std::string(300, 'n')).string();
  StagedFiles f;
  f.add(name, "bytes");
  std::string e = error_of([&] { f.commit(); });
  EXPECT_NE(e.find(name), std::string::npos) << e;
  EXPECT_NE(e.find("too long"), std::string::npos) << e;
  EXPECT_TRUE(listing(dir).empty());
}
