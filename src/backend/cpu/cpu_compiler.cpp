#include "backend/cpu/cpu_compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/dirs.h"
#include "core/error.h"
#include "core/process.h"
#include "frontend/npy.h"
#include "core/sha256.h"

namespace lockstep::cpu {

namespace fs = std::filesystem;

namespace {

// Reproducible float code: no contraction into FMA (same sums on every host), wrapping ints.
const char* kFlags = "-std=c++17 -O3 -march=native -fopenmp -fPIC -shared -ffp-contract=off -fwrapv -fno-math-errno";

std::vector<std::string> compiler() {
  const char* c = std::getenv("LOCKSTEP_CXX");
  std::vector<std::string> words = split_words(c && *c ? c : "c++");
  return words.empty() ? std::vector<std::string>{"c++"} : words;
}

std::string spelled(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

const std::string& compiler_identity() {
  static const std::string id = [] {
    std::vector<std::string> argv = compiler();
    argv.push_back("--version");
    ProcessResult r;
    try {
      r = run_process(argv);
    } catch (const Error& e) {
      throw Error("target 'cpu' needs a C++ compiler: " + std::string(e.what()));
    }
    if (r.exit_code != 0) throw Error("target 'cpu' needs a C++ compiler; '" + spelled(argv) + "' failed: " + r.output);
    return spelled(compiler()) + "\n" + r.output;
  }();
  return id;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ".tmp<pid>-<n>": distinct across processes and across builds in one process.
std::string unique_tag() {
  static std::atomic<int> n{0};
  return ".tmp" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

// Writes a file that must not exist yet (never through a link), every byte checked.
void write_new_file(const fs::path& p, const std::string& bytes) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw Error("cannot create '" + p.string() + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(p.c_str());
      throw Error("cannot write '" + p.string() + "': " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(p.c_str());
    throw Error("cannot write '" + p.string() + "': " + std::strerror(err));
  }
}

// Temporary files of one build, removed however the build ends.
struct Scratch {
  std::vector<fs::path> files;
  ~Scratch() {
    std::error_code ec;
    for (const fs::path& f : files) fs::remove(f, ec);
  }
};

// Compiles into `so` (renamed into place once complete) inside a folder only lockstep writes.
void build(const std::string& source, const fs::path& so) {
  std::string tag = unique_tag();
  Scratch scratch;
  fs::path tmp_src = so.string() + tag + ".cpp", tmp_so = so.string() + tag;
  scratch.files = {tmp_src, tmp_so};
  write_new_file(tmp_src, source);
  std::vector<std::string> argv = compiler();
  for (const std::string& f : split_words(kFlags)) argv.push_back(f);
  for (const std::string& f : {tmp_src.string(), std::string("-o"), tmp_so.string()}) argv.push_back(f);
  ProcessResult r = run_process(argv);
  if (r.exit_code != 0)
    throw InternalError("cpu: the system compiler failed on generated code:\n" + r.output.substr(0, 4000));
  std::error_code ec;
  fs::rename(tmp_so, so, ec);
  if (ec) throw Error("cannot rename '" + tmp_so.string() + "': " + ec.message());
}

std::shared_ptr<Module> open_module(const fs::path& so, const std::string& key) {
  auto m = std::make_shared<Module>();
  m->key = key;
  // Never unloaded: the OpenMP runtime it brings in has worker threads that outlive any run.
  m->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!m->handle) return nullptr;
  auto table = reinterpret_cast<const KernelFn*>(dlsym(m->handle, "ls_kernels"));
  auto count = reinterpret_cast<const int*>(dlsym(m->handle, "ls_kernel_count"));
  m->set_threads = reinterpret_cast<void (*)(int)>(dlsym(m->handle, "ls_set_threads"));
  if (!table || !count || !m->set_threads) return nullptr;
  m->kernels.assign(table, table + *count);
  return m;
}

}  // namespace

Module::~Module() {
  if (handle) dlclose(handle);  // RTLD_NODELETE keeps the code mapped
}

std::string cache_dir() { return cache_dir_path("cpu").string(); }

namespace {
std::shared_ptr<Module> load_by_content(const std::string& source, const CompilerOptions& opts);
}  // namespace

// The planted bug of --inject-fault cache-by-name: one slot for every program, so the first
// module loaded is handed to every later compile in the process (held, as a real cache would).
std::shared_ptr<Module> load_module(const std::string& source, const CompilerOptions& opts) {
  if (!opts.key_by_name || !opts.use_cache) return load_by_content(source, opts);
  static std::mutex mu;
  static std::shared_ptr<Module> by_name;
  std::lock_guard<std::mutex> lock(mu);
  if (!by_name) by_name = load_by_content(source, opts);
  return by_name;
}

namespace {

// The module of `key` from the cache folder, or null when absent; a corrupt entry is removed.
std::shared_ptr<Module> load_cached(const fs::path& dir, const std::string& key) {
  fs::path so = dir / (key + ".so"), sum = dir / (key + ".sha256");
  std::error_code ec;
  if (!fs::is_regular_file(so, ec)) return nullptr;
  std::string bytes = read_file(so);
  if (fs::is_regular_file(sum, ec) && read_file(sum) == sha256_hex(bytes.data(), bytes.size()))
    if (auto m = open_module(so, key)) return m;
  std::cerr << "warning: cpu cache entry '" << so.string() << "' is corrupt; rebuilding it\n";
  fs::remove(so, ec);
  return nullptr;
}

std::shared_ptr<Module> build_cached(const std::string& source, const fs::path& dir, const std::string& key) {
  if (auto m = load_cached(dir, key)) return m;
  fs::path so = dir / (key + ".so"), sum = dir / (key + ".sha256");
  build(source, so);
  std::string bytes = read_file(so);
  write_file_atomic(sum.string(), sha256_hex(bytes.data(), bytes.size()));
  auto m = open_module(so, key);
  if (!m) throw Error("cpu: cannot load compiled module '" + so.string() + "'");
  return m;
}

// Built in a fresh private folder that is gone once the module is loaded.
std::shared_ptr<Module> build_uncached(const std::string& source, const std::string& key) {
  PrivateTempDir dir("lockstep-cpu");
  fs::path so = dir.path() / (key + ".so");
  build(source, so);
  auto m = open_module(so, key);
  if (!m) throw Error("cpu: cannot load compiled module '" + so.string() + "': " + std::string(dlerror() ? dlerror() : "missing symbols"));
  return m;  // the loaded mapping outlives the file
}

std::shared_ptr<Module> load_by_content(const std::string& source, const CompilerOptions& opts) {
  static std::mutex mu;
  // Keyed by content, never by name. Modules stay loaded for the process (RTLD_NODELETE), so
  // a key is opened at most once: dlopen would hand back the first mapping of a path anyway.
  static std::map<std::string, std::shared_ptr<Module>> loaded;
  std::string key = sha256_hex((source + "\n" + compiler_identity() + "\n" + kFlags).data(),
                               source.size() + compiler_identity().size() + std::string(kFlags).size() + 2);
  std::lock_guard<std::mutex> lock(mu);
  if (!opts.use_cache) return build_uncached(source, key);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  std::string why;
  if (fs::path dir = usable_cache_dir("cpu", &why); !dir.empty()) {
    try {
      return loaded[key] = build_cached(source, dir, key);
    } catch (const Error& e) {
      why = e.what();
    }
  }
  // A cache that cannot be used (read-only, a file, full) costs speed, never the run.
  std::cerr << "warning: cpu: the kernel cache was not used (" << why.substr(0, why.find('\n')) << "); building without it\n";
  return loaded[key] = build_uncached(source, key);
}

}  // namespace

}  // namespace lockstep::cpu
