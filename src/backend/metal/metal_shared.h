// What every metal device of a process shares: libraries and pipelines by content, the staging
// buffers by host address (the staging pool outlives the devices that made its blocks), and the
// byte kernels that stand in for blits macOS refuses.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "backend/metal/metal_api.h"

namespace lockstep::metal {

// The SHA-256 of `code`: what libraries and pipelines are cached by.
std::string content_key(const std::string& code);
std::shared_ptr<MetalLibrary> library_of(MetalDriver& d, const std::string& code);
std::shared_ptr<MetalPipeline> pipeline_of(MetalDriver& d, MetalLibrary& lib, const std::string& key,
                                           const std::string& name);

// ls_copy_bytes(to [[buffer(0)]], from [[buffer(1)]], n [[buffer(2)]]) and
// ls_fill_bytes(to [[buffer(0)]], n [[buffer(1)]]): n[0] bytes, n[1] the fill value; built once
// through the kernel cache of `target`.
std::shared_ptr<MetalLibrary> byte_kernels(MetalDriver& d, const std::string& target);

// Staging buffers: registered by host_alloc, dropped by the block's release.
void add_staging(const std::shared_ptr<MetalBuffer>& b);
void drop_staging(unsigned char* data);
// The staging buffer holding [p, p + bytes), and p's offset in it; null when there is none.
std::pair<std::shared_ptr<MetalBuffer>, size_t> staged(const void* p, size_t bytes);

}  // namespace lockstep::metal
