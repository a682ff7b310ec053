#include "backend/cpu/cpu_device.h"

#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "backend/cpu/cpu_codegen.h"
#include "backend/cpu/cpu_compiler.h"
#include "backend/cpu/thread_pool.h"
#include "core/dirs.h"
#include "core/error.h"
#include "core/files.h"
#include "core/memory.h"
#include "core/sha256.h"
#include "frontend/npy.h"
#include "runtime/device_toolkit.h"

namespace lockstep::cpu {

using KernelFn = void (*)(void* const*);

struct CpuDevice::Module {
  std::vector<KernelFn> kernels;
  void (*set_threads)(int) = nullptr;
  const long long* buffer_bytes = nullptr;
  int buffer_count = 0;
};

namespace {

void* sym(void* handle, const char* name) { return dlsym(handle, name); }

// Loads a shared object from its bytes: written to a private folder, opened, and the file
// removed; its kernels run their iterations on the process's thread pool. Never unloaded.
std::shared_ptr<const CpuDevice::Module> open_module(const std::string& code) {
  PrivateTempDir dir("lockstep-cpu");
  std::string so = (dir.path() / "program.so").string();
  write_file_atomic(so, code);
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!h) throw InternalError("cpu: cannot load compiled code: " + std::string(dlerror() ? dlerror() : "?"));
  auto m = std::make_shared<CpuDevice::Module>();
  auto table = reinterpret_cast<const KernelFn*>(sym(h, "ls_kernels"));
  auto count = reinterpret_cast<const int*>(sym(h, "ls_kernel_count"));
  m->set_threads = reinterpret_cast<void (*)(int)>(sym(h, "ls_set_threads"));
  m->buffer_bytes = reinterpret_cast<const long long*>(sym(h, "ls_buffer_bytes"));
  auto buffers = reinterpret_cast<const int*>(sym(h, "ls_buffer_count"));
  auto set_parallel = reinterpret_cast<void (*)(decltype(&parallel_for))>(sym(h, "ls_set_parallel"));
  if (!table || !count || !m->set_threads || !m->buffer_bytes || !buffers || !set_parallel)
    throw InternalError("cpu: compiled code lacks the kernel table lockstep generates");
  set_parallel(&parallel_for);
  m->kernels.assign(table, table + *count);
  m->buffer_count = *buffers;
  return m;
}

// One load per distinct code in the process (dlopen would hand back the first mapping anyway).
std::shared_ptr<const CpuDevice::Module> module_of(const std::string& code) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const CpuDevice::Module>> loaded;  // by content
  std::string key = sha256_hex(code.data(), code.size());
  std::lock_guard<std::mutex> lock(mu);
  auto& m = loaded[key];
  if (!m) m = open_module(code);
  return m;
}

unsigned char* at(DevicePtr p) { return reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(p)); }

class DoneFence : public Fence {
 public:
  void wait() override {}
};

}  // namespace

// The module must be the one built for this plan: a wrong one would index past buffers.
// The table holds the kernels' entries in plan order, so `entries` (their names) is not needed.
void CpuDevice::load(const std::string& code, const kir::Plan& plan, const std::vector<std::string>&) {
  std::shared_ptr<const Module> m = module_of(code);
  std::vector<int64_t> got;  // none where even the kernel count differs
  if (m->kernels.size() == plan.kernels.size()) {
    got.push_back(m->buffer_count);
    got.insert(got.end(), m->buffer_bytes, m->buffer_bytes + std::max(m->buffer_count, 0));
  }
  check_loaded_plan("cpu", got, plan);
  module_ = std::move(m);
}

void CpuDevice::bind(const std::vector<DevicePtr>& address) {
  args_.clear();
  for (DevicePtr a : address) args_.push_back(at(a));
}

// Anonymous mappings: zero pages handed out on first touch, so memory starts as zeros and a
// symbolic program growing its arena at a new length binds at once (clearing 300 MB up front
// took 38 ms). A page in front records the mapping's size for munmap.
constexpr size_t kMapHead = 4096;

DevicePtr CpuDevice::allocate(size_t bytes) {
  // The mapping is lazy: without this check a block too large would be taken page by page
  // and the process killed, not refused.
  require_memory(static_cast<int64_t>(std::min<size_t>(bytes, INT64_MAX)), "cpu: a block of the program's memory");
  size_t total = kMapHead + bytes;
  void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw Error("cpu: cannot allocate " + std::to_string(bytes) + " bytes");
  *static_cast<size_t*>(p) = total;
  return reinterpret_cast<uintptr_t>(p) + kMapHead;
}

void CpuDevice::free(DevicePtr p) {
  if (!p) return;
  void* base = reinterpret_cast<void*>(p - kMapHead);
  size_t total = *static_cast<size_t*>(base);
  // Unmapping a large arena's touched pages takes most of a millisecond: a grown arena's
  // old block goes on another thread, off the bind's path.
  if (total < (size_t{1} << 20)) munmap(base, total);
  else std::thread([base, total] { munmap(base, total); }).detach();
}

// Linux moves the mapping's pages (no unmapping of the touched ones, which takes the address
// space's lock for most of a millisecond) and maps zero pages after them.
DevicePtr CpuDevice::reallocate(DevicePtr p, size_t bytes) {
#ifdef MREMAP_MAYMOVE
  if (p) {
    void* base = reinterpret_cast<void*>(p - kMapHead);
    size_t total = kMapHead + bytes;
    void* q = mremap(base, *static_cast<size_t*>(base), total, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) {  // p is gone either way, as with free then allocate
      free(p);
      throw Error("cpu: cannot allocate " + std::to_string(bytes) + " bytes");
    }
    *static_cast<size_t*>(q) = total;
    return reinterpret_cast<uintptr_t>(q) + kMapHead;
  }
#endif
  free(p);
  return allocate(bytes);
}

void CpuDevice::upload(DevicePtr dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(at(dst), src, bytes);
}

void CpuDevice::download(void* dst, DevicePtr src, size_t bytes) {
  if (bytes) std::memcpy(dst, at(src), bytes);
}

void CpuDevice::copy(DevicePtr dst, DevicePtr src, size_t bytes) {
  if (bytes) std::memmove(at(dst), at(src), bytes);
}

void CpuDevice::fill(DevicePtr dst, unsigned char byte, size_t bytes) {
  if (bytes) std::memset(at(dst), byte, bytes);
}

// The module is shared by programs with different thread counts: set on every launch.
void CpuDevice::launch(int kernel) {
  module_->set_threads(threads_);
  module_->kernels[kernel](args_.data());
}

std::shared_ptr<Fence> CpuDevice::fence() { return std::make_shared<DoneFence>(); }

TargetInfo target_info() {
  TargetInfo t;
  t.name = "cpu";
  t.summary = "C++ on lockstep's thread pool, built by the system compiler";
  t.desc = target_desc();
  t.program_source = program_source;
  t.source_files = source_files;
  t.make_compiler = [](const CompileOptions&, const Device*) -> std::unique_ptr<CodeCompiler> {
    return std::make_unique<SystemCompiler>();
  };
  t.make_device = [](const CompileOptions& o, std::string*) -> std::unique_ptr<Device> {
    return std::make_unique<CpuDevice>(o.threads);
  };
  return t;
}

}  // namespace lockstep::cpu
