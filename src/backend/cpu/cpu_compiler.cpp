#include "backend/cpu/cpu_compiler.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/error.h"
#include "core/sha256.h"

namespace lockstep::cpu {

namespace fs = std::filesystem;

namespace {

// Reproducible float code: no contraction into FMA (same sums on every host), wrapping ints.
const char* kFlags = "-std=c++17 -O3 -march=native -fopenmp -fPIC -shared -ffp-contract=off -fwrapv -fno-math-errno";

std::string compiler() {
  const char* c = std::getenv("LOCKSTEP_CXX");
  return c && *c ? c : "c++";
}

std::string run_capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) throw Error("cannot run '" + cmd + "'");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  int rc = pclose(f);
  if (status) *status = rc;
  return out;
}

const std::string& compiler_identity() {
  static const std::string id = [] {
    int rc = 0;
    std::string v = run_capture(compiler() + " --version", &rc);
    if (rc != 0) throw Error("target 'cpu' needs a C++ compiler; '" + compiler() + " --version' failed: " + v);
    return compiler() + "\n" + v;
  }();
  return id;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_atomic(const fs::path& p, const std::string& bytes) {
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << bytes;
    if (!out) throw Error("cannot write '" + tmp.string() + "'");
  }
  fs::rename(tmp, p);
}

// Compiles into `so` (written atomically next to it).
void build(const std::string& source, const fs::path& so) {
  fs::create_directories(so.parent_path());
  fs::path tmp_src = so;
  tmp_src += ".tmp" + std::to_string(getpid()) + ".cpp";
  fs::path tmp_so = so;
  tmp_so += ".tmp" + std::to_string(getpid());
  write_atomic(tmp_src, source);
  int rc = 0;
  std::string log = run_capture(compiler() + " " + kFlags + " '" + tmp_src.string() + "' -o '" + tmp_so.string() + "'", &rc);
  fs::remove(tmp_src);
  if (rc != 0) {
    fs::remove(tmp_so);
    throw Error("cpu: the system compiler rejected generated code (a lockstep bug):\n" + log.substr(0, 4000));
  }
  fs::rename(tmp_so, so);
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

std::string cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home && *home ? home : "/tmp") / ".cache";
  return (base / "lockstep" / "cpu").string();
}

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

std::shared_ptr<Module> load_by_content(const std::string& source, const CompilerOptions& opts) {
  static std::mutex mu;
  // Keyed by content, never by name. Modules stay loaded for the process (RTLD_NODELETE), so
  // a key is opened at most once: dlopen would hand back the first mapping of a path anyway.
  static std::map<std::string, std::shared_ptr<Module>> loaded;
  std::string key = sha256_hex((source + "\n" + compiler_identity() + "\n" + kFlags).data(),
                               source.size() + compiler_identity().size() + std::string(kFlags).size() + 2);
  std::lock_guard<std::mutex> lock(mu);
  if (opts.use_cache)
    if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  fs::path dir = opts.use_cache ? fs::path(cache_dir()) : fs::temp_directory_path() / ("lockstep-nocache-" + std::to_string(getpid()));
  fs::path so = dir / (key + ".so"), sum = dir / (key + ".sha256");
  if (opts.use_cache && fs::exists(so)) {
    std::string bytes = read_file(so);
    if (fs::exists(sum) && read_file(sum) == sha256_hex(bytes.data(), bytes.size())) {
      if (auto m = open_module(so, key)) return loaded[key] = m, m;
    }
    std::cerr << "warning: cpu cache entry '" << so.string() << "' is corrupt; rebuilding it\n";
    fs::remove(so);
  }
  static int uncached = 0;  // a fresh path per uncached build: dlopen would reuse a loaded path
  if (!opts.use_cache) so = dir / (key + "-" + std::to_string(++uncached) + ".so");
  build(source, so);
  std::string bytes = read_file(so);
  if (opts.use_cache) write_atomic(sum, sha256_hex(bytes.data(), bytes.size()));
  auto m = open_module(so, key);
  if (!m) throw Error("cpu: cannot load compiled module '" + so.string() + "': " + std::string(dlerror() ? dlerror() : "missing symbols"));
  if (!opts.use_cache) fs::remove_all(dir);  // the loaded mapping stays valid
  if (opts.use_cache) loaded[key] = m;
  return m;
}

}  // namespace

}  // namespace lockstep::cpu
