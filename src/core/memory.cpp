#include "core/memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace lockstep {

namespace {

constexpr int64_t kUnchecked = int64_t{64} << 20;  // below this an allocation is never checked

int64_t read_number(const std::string& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word) || word == "max") return -1;
  try {
    return std::stoll(word);
  } catch (const std::exception&) {
    return -1;
  }
}

// Field `key` of /proc/meminfo or /proc/self/status, in bytes (they give kB); -1 if absent.
int64_t proc_kb(const char* file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::atoll(line.c_str() + key.size() + 1) * 1024;
  return -1;
}

void consider(MemoryRoom& r, int64_t room, const std::string& limit) {
  if (room >= 0 && room < r.bytes) r = {room, limit};
}

// `path` ("/a/b") and each folder above it ("/a", "").
std::vector<std::string> with_parents(std::string path) {
  std::vector<std::string> all;
  if (!path.empty() && path.back() == '/') path.pop_back();
  for (;;) {
    all.push_back(path);
    size_t slash = path.rfind('/');
    if (path.empty() || slash == std::string::npos) break;
    path = path.substr(0, slash);
  }
  return all;
}

// The least limit - usage of this process's memory cgroup and those above it, v2 (memory.max)
// and v1 (memory.limit_in_bytes); a container that sees its own cgroup as the root has it there.
void cgroup_room(MemoryRoom& r) {
  std::ifstream in("/proc/self/cgroup");
  std::string v2, v1;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
    if (size_t at = line.find(":memory:"); at != std::string::npos) v1 = line.substr(at + 8);
  }
  auto check = [&](const std::string& dir, const char* max_file, const char* used_file) {
    int64_t max = read_number(dir + "/" + max_file), used = read_number(dir + "/" + used_file);
    if (max > 0 && max < (int64_t{1} << 60) && used >= 0)
      consider(r, std::max<int64_t>(max - used, 0), std::string("the cgroup's ") + max_file + " " + bytes_text(max));
  };
  for (const std::string& p : with_parents(v2)) check("/sys/fs/cgroup" + p, "memory.max", "memory.current");
  for (const std::string& p : with_parents(v1))
    check("/sys/fs/cgroup/memory" + p, "memory.limit_in_bytes", "memory.usage_in_bytes");
}

}  // namespace

MemoryRoom memory_room() {
  MemoryRoom r;
  cgroup_room(r);
  struct rlimit rl {};
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    int64_t used = proc_kb("/proc/self/status", "VmSize");
    int64_t cap = static_cast<int64_t>(rl.rlim_cur);
    consider(r, std::max<int64_t>(cap - std::max<int64_t>(used, 0), 0), "RLIMIT_AS (ulimit -v) " + bytes_text(cap));
  }
  int64_t avail = proc_kb("/proc/meminfo", "MemAvailable");
  if (avail >= 0) consider(r, avail, "the system's MemAvailable");
  if (const char* cap = std::getenv("LOCKSTEP_MAX_MEMORY"); cap && *cap) {
    int64_t max = parse_memory_size(cap, "--max-memory (LOCKSTEP_MAX_MEMORY)");
    int64_t used = std::max<int64_t>(proc_kb("/proc/self/status", "VmRSS"), 0);
    consider(r, std::max<int64_t>(max - used, 0), "--max-memory " + bytes_text(max));
  }
  return r;
}

void require_memory(int64_t bytes, const std::string& what) {
  if (bytes >= 0 && bytes < kUnchecked) return;
  if (bytes < 0) throw MemoryRefused(what + " needs more than 2^63 bytes");
  MemoryRoom r = memory_room();
  if (bytes <= r.bytes) return;
  throw MemoryRefused(what + " needs " + bytes_text(bytes) + ", more than this process may use now (" +
                      bytes_text(r.bytes) + ": " + r.limit + ")");
}

int64_t checked_bytes(int64_t n, int64_t size) {
  int64_t b = 0;
  return n < 0 || size < 0 || __builtin_mul_overflow(n, size, &b) ? -1 : b;
}

int64_t checked_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)  // a negative dim is no size at all: refused as an overflow is
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

std::string bytes_text(int64_t bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.2f GiB (%lld bytes)", static_cast<double>(bytes) / (1 << 30),
                static_cast<long long>(bytes));
  return b;
}

int64_t parse_memory_size(const std::string& text, const std::string& option) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  std::string unit = text.substr(std::min(used, text.size()));
  int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : unit == "T" ? 40 : -1;
  if (v < 1 || shift < 0 || v > (INT64_MAX >> shift))
    throw Error(option + ": '" + text + "' is not a size (a positive number, optionally K, M, G or T)");
  return v << shift;
}

}  // namespace lockstep
