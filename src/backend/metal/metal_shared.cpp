#include "backend/metal/metal_shared.h"

#include <map>
#include <mutex>

#include "backend/metal/metal_device.h"
#include "core/sha256.h"
#include "runtime/kernel_cache.h"

namespace lockstep::metal {

namespace {

class DriverCompiler : public CodeCompiler {
 public:
  explicit DriverCompiler(MetalDriver* d) : d_(d) {}
  std::string identity() override { return d_ ? d_->compiler_identity() : "MSL source, unbuilt: no Metal compiler here"; }
  std::string compile(const std::string& source) override { return d_ ? d_->build(source) : source; }

 private:
  MetalDriver* d_;
};

constexpr const char* kByteKernels = R"(// lockstep's byte copies and fills, where a blit's offsets or size are not multiples of 4.
#include <metal_stdlib>
using namespace metal;
kernel void ls_copy_bytes(device uchar* to [[buffer(0)]], device const uchar* from [[buffer(1)]], constant ulong* n [[buffer(2)]],
                          uint i [[thread_position_in_grid]], uint all [[threads_per_grid]]) {
  for (ulong k = i; k < n[0]; k += all) to[k] = from[k];
}
kernel void ls_fill_bytes(device uchar* to [[buffer(0)]], constant ulong* n [[buffer(1)]],
                          uint i [[thread_position_in_grid]], uint all [[threads_per_grid]]) {
  for (ulong k = i; k < n[0]; k += all) to[k] = (uchar)n[1];
}
)";

struct Staging {
  std::mutex mu;
  std::map<const unsigned char*, std::shared_ptr<MetalBuffer>> by_data;
};
Staging& staging() {
  static auto* s = new Staging;  // never destroyed: the staging pools are not either
  return *s;
}

}  // namespace

std::unique_ptr<CodeCompiler> make_compiler(MetalDriver* d) { return std::make_unique<DriverCompiler>(d); }

std::string content_key(const std::string& code) { return sha256_hex(code.data(), code.size()); }

std::shared_ptr<MetalLibrary> library_of(MetalDriver& d, const std::string& code) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<MetalLibrary>> built;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = built[d.key() + "/" + content_key(code)];
  std::shared_ptr<MetalLibrary> lib = slot.lock();
  if (!lib) slot = lib = d.library(code);
  return lib;
}

std::shared_ptr<MetalPipeline> pipeline_of(MetalDriver& d, MetalLibrary& lib, const std::string& key,
                                           const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<MetalPipeline>> made;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = made[d.key() + "/" + key + "/" + name];
  std::shared_ptr<MetalPipeline> p = slot.lock();
  if (!p) slot = p = lib.pipeline(name);
  return p;
}

std::shared_ptr<MetalLibrary> byte_kernels(MetalDriver& d, const std::string& target) {
  DriverCompiler c(&d);
  return library_of(d, cached_code(c, {target, kByteKernels, true, nullptr})->bytes);
}

void add_staging(const std::shared_ptr<MetalBuffer>& b) {
  std::lock_guard<std::mutex> lock(staging().mu);
  staging().by_data[b->contents()] = b;
}

void drop_staging(unsigned char* data) {
  std::lock_guard<std::mutex> lock(staging().mu);
  staging().by_data.erase(data);
}

std::pair<std::shared_ptr<MetalBuffer>, size_t> staged(const void* p, size_t bytes) {
  auto* at = static_cast<const unsigned char*>(p);
  std::lock_guard<std::mutex> lock(staging().mu);
  auto it = staging().by_data.upper_bound(at);
  if (it == staging().by_data.begin()) return {nullptr, 0};
  --it;
  size_t off = static_cast<size_t>(at - it->first);
  if (off + bytes > it->second->length()) return {nullptr, 0};
  return {it->second, off};
}

}  // namespace lockstep::metal
