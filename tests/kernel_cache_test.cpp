// The one kernel cache every target compiles through (runtime/kernel_cache.h), with a compiler
// made here that counts its compiles: keyed by content and compiler identity, never by name;
// entries on disk checksummed and rebuilt when corrupt; a planted by-name key stays in memory.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "backend/registry.h"
#include "core/dirs.h"
#include "runtime/kernel_cache.h"
#include "verify/planted_fault.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// "Compiles" by reversing the source; its identity is whatever the test says.
class CountingCompiler : public CodeCompiler {
 public:
  explicit CountingCompiler(std::string id) : id_(std::move(id)) {}
  std::string identity() override { return id_; }
  std::string compile(const std::string& source) override {
    ++compiles;
    return std::string(source.rbegin(), source.rend());
  }
  int compiles = 0;

 private:
  std::string id_;
};

// XDG_CACHE_HOME pointed at a fresh folder for one test; sources unique to this process, so
// the process-wide memory cache of other tests cannot answer.
struct TempCache {
  fs::path dir = fs::temp_directory_path() / ("lockstep-kcache-" + std::to_string(::getpid()));
  std::string old;
  bool had = false;
  TempCache() {
    if (const char* v = std::getenv("XDG_CACHE_HOME")) old = v, had = true;
    fs::remove_all(dir);
    setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~TempCache() {
    had ? setenv("XDG_CACHE_HOME", old.c_str(), 1) : unsetenv("XDG_CACHE_HOME");
    fs::remove_all(dir);
  }
  std::string source(const std::string& body) const { return body + " // " + dir.string(); }
};

TEST(KernelCache, KeyedByContentAndCompilerIdentityNotName) {
  TempCache tc;
  CountingCompiler c("compiler 1 --flags");
  std::string a = tc.source("kernel k0 { a }"), b = tc.source("kernel k0 { b }");  // same name
  auto ca = cached_code(c, {"test-target", a});
  auto cb = cached_code(c, {"test-target", b});
  EXPECT_NE(ca->key, cb->key);
  EXPECT_EQ(ca->bytes, std::string(a.rbegin(), a.rend()));
  EXPECT_EQ(cached_code(c, {"test-target", a})->bytes, ca->bytes);
  EXPECT_EQ(c.compiles, 2) << "the second request for a is answered from memory";
  CountingCompiler other("compiler 2 --flags");
  EXPECT_NE(cached_code(other, {"test-target", a})->key, ca->key) << "the compiler's identity is in the key";
  EXPECT_NE(code_key(c, "another-target", a), ca->key) << "the target is in the key";
  EXPECT_TRUE(fs::exists(cache_dir_path("test-target") / (ca->key + ".bin")));
}

// Reuse across processes and corrupt entries: CpuBackend.CorruptCacheEntryIsRebuilt runs the
// CLI in fresh processes over one cache folder.
TEST(KernelCache, WithoutTheCacheEveryRequestCompiles) {
  TempCache tc;
  CountingCompiler c("uncached compiler");
  std::string src = tc.source("kernel k0 { uncached }");
  for (int k = 0; k < 2; ++k)
    EXPECT_EQ(cached_code(c, {"test-target", src, false})->bytes, std::string(src.rbegin(), src.rend()));
  EXPECT_EQ(c.compiles, 2);
  EXPECT_FALSE(fs::exists(cache_dir_path("test-target") / (code_key(c, "test-target", src) + ".bin")));
}

TEST(KernelCache, APlantedByNameKeySharesOneSlotInMemoryAndNeverReachesTheDisk) {
  TempCache tc;
  CountingCompiler c("by-name compiler");
  auto fault = plant_fault("cache-by-name");
  std::string a = tc.source("kernel k0 { first }"), b = tc.source("kernel k0 { second }");
  auto ca = cached_code(c, {"fault-target", a, true, fault.get()});
  auto cb = cached_code(c, {"fault-target", b, true, fault.get()});
  EXPECT_EQ(cb->bytes, ca->bytes) << "the stale code of the first program";
  EXPECT_FALSE(fs::exists(cache_dir_path("fault-target") / (code_key(c, "fault-target", a) + ".bin")));
  EXPECT_EQ(cached_code(c, {"fault-target", b})->bytes, std::string(b.rbegin(), b.rend()))
      << "without the fault, content keys keep them apart";
}

}  // namespace
}  // namespace lockstep
