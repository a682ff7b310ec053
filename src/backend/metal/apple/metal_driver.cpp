// The machine's Metal device through metal-cpp: metal_api.h over MTLDevice, shared-storage
// MTLBuffers, MTLLibrary from MSL with fast math off, compute pipelines, one MTLCommandQueue
// per device and command buffers with compute and blit encoders. Built only on macOS (CMake
// puts it in place of no_driver.cpp). NEVER COMPILED OR RUN by lockstep's developers, who have
// no Mac: written against metal-cpp's headers for a Mac user to build (docs/metal.md).
#define NS_PRIVATE_IMPLEMENTATION
#define MTL_PRIVATE_IMPLEMENTATION
#include <Foundation/Foundation.hpp>
#include <Metal/Metal.hpp>

#include <algorithm>
#include <cstring>

#include "backend/metal/metal_api.h"
#include "core/error.h"

namespace lockstep::metal {

namespace {

std::string text(const NS::String* s) { return s ? s->utf8String() : ""; }
std::string error_text(const NS::Error* e) { return e ? text(e->localizedDescription()) : "no error given"; }
NS::String* ns(const std::string& s) { return NS::String::string(s.c_str(), NS::UTF8StringEncoding); }

// Autoreleased objects (strings, command buffers, encoders) go when the scope ends.
struct Pool {
  NS::AutoreleasePool* p = NS::AutoreleasePool::alloc()->init();
  ~Pool() { p->release(); }
};

class AppleBuffer : public MetalBuffer {
 public:
  AppleBuffer(NS::SharedPtr<MTL::Buffer> b, size_t length) : b_(std::move(b)), length_(length) {}
  unsigned char* contents() override { return static_cast<unsigned char*>(b_->contents()); }
  size_t length() const override { return length_; }
  void write(size_t at, const void* src, size_t bytes) override { std::memcpy(contents() + at, src, bytes); }
  MTL::Buffer* get() const { return b_.get(); }

 private:
  NS::SharedPtr<MTL::Buffer> b_;
  size_t length_;
};

MTL::Buffer* apple(const std::shared_ptr<MetalBuffer>& b) {
  auto* a = dynamic_cast<AppleBuffer*>(b.get());
  if (!a) throw InternalError("internal: metal: a buffer of another device");
  return a->get();
}

class ApplePipeline : public MetalPipeline {
 public:
  ApplePipeline(std::string name, NS::SharedPtr<MTL::ComputePipelineState> s) : name_(std::move(name)), s_(std::move(s)) {}
  const std::string& name() const override { return name_; }
  size_t max_total_threads_per_threadgroup() const override { return s_->maxTotalThreadsPerThreadgroup(); }
  size_t static_threadgroup_memory_length() const override { return s_->staticThreadgroupMemoryLength(); }
  MTL::ComputePipelineState* get() const { return s_.get(); }

 private:
  std::string name_;
  NS::SharedPtr<MTL::ComputePipelineState> s_;
};

class AppleLibrary : public MetalLibrary {
 public:
  AppleLibrary(MTL::Device* d, NS::SharedPtr<MTL::Library> lib) : d_(d), lib_(std::move(lib)) {}
  std::shared_ptr<MetalPipeline> pipeline(const std::string& name) override {
    Pool pool;
    NS::SharedPtr<MTL::Function> fn = NS::TransferPtr(lib_->newFunction(ns(name)));
    if (!fn) throw Error("metal: the library has no kernel function '" + name + "'");
    NS::Error* err = nullptr;
    NS::SharedPtr<MTL::ComputePipelineState> s = NS::TransferPtr(d_->newComputePipelineState(fn.get(), &err));
    if (!s) throw InternalError("internal: metal: no compute pipeline for " + name + ": " + error_text(err));
    return std::make_shared<ApplePipeline>(name, std::move(s));
  }

 private:
  MTL::Device* d_;
  NS::SharedPtr<MTL::Library> lib_;
};

// One encoder open at a time: switching between dispatches and blits ends the other.
class AppleCommandBuffer : public MetalCommandBuffer {
 public:
  explicit AppleCommandBuffer(MTL::CommandQueue* q) {
    Pool pool;
    cb_ = NS::RetainPtr(q->commandBuffer());
  }
  ~AppleCommandBuffer() override { end_encoder(); }
  void dispatch(const std::shared_ptr<MetalPipeline>& p, const std::vector<Binding>& buffers, size_t groups,
                size_t threads) override {
    auto* ap = dynamic_cast<ApplePipeline*>(p.get());
    if (!ap) throw InternalError("internal: metal: a pipeline of another device");
    MTL::ComputeCommandEncoder* e = compute();
    e->setComputePipelineState(ap->get());
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].buffer) e->setBuffer(apple(buffers[i].buffer), buffers[i].offset, i);
    e->dispatchThreadgroups(MTL::Size(groups, 1, 1), MTL::Size(threads, 1, 1));
  }
  void copy(const std::shared_ptr<MetalBuffer>& from, size_t from_at, const std::shared_ptr<MetalBuffer>& to,
            size_t to_at, size_t bytes) override {
    blit()->copyFromBuffer(apple(from), from_at, apple(to), to_at, bytes);
  }
  void fill(const std::shared_ptr<MetalBuffer>& b, size_t at, size_t bytes, unsigned char value) override {
    blit()->fillBuffer(apple(b), NS::Range::Make(at, bytes), value);
  }
  void commit() override {
    end_encoder();
    cb_->commit();
  }
  void wait_until_completed() override { cb_->waitUntilCompleted(); }
  Status status() const override {
    switch (cb_->status()) {
      case MTL::CommandBufferStatusNotEnqueued: return Status::Encoding;
      case MTL::CommandBufferStatusCompleted: return Status::Completed;
      case MTL::CommandBufferStatusError: return Status::Error;
      default: return Status::Committed;
    }
  }
  std::string error() const override { return "command buffer: " + error_text(cb_->error()); }

 private:
  MTL::ComputeCommandEncoder* compute() {
    if (!compute_) {
      end_encoder();
      Pool pool;
      compute_ = NS::RetainPtr(cb_->computeCommandEncoder());
    }
    return compute_.get();
  }
  MTL::BlitCommandEncoder* blit() {
    if (!blit_) {
      end_encoder();
      Pool pool;
      blit_ = NS::RetainPtr(cb_->blitCommandEncoder());
    }
    return blit_.get();
  }
  void end_encoder() {
    if (compute_) compute_->endEncoding(), compute_.reset();
    if (blit_) blit_->endEncoding(), blit_.reset();
  }

  NS::SharedPtr<MTL::CommandBuffer> cb_;
  NS::SharedPtr<MTL::ComputeCommandEncoder> compute_;
  NS::SharedPtr<MTL::BlitCommandEncoder> blit_;
};

class AppleQueue : public MetalQueue {
 public:
  explicit AppleQueue(MTL::Device* d) : q_(NS::TransferPtr(d->newCommandQueue())) {
    if (!q_) throw Error("metal: cannot make a command queue");
  }
  std::shared_ptr<MetalCommandBuffer> command_buffer() override { return std::make_shared<AppleCommandBuffer>(q_.get()); }

 private:
  NS::SharedPtr<MTL::CommandQueue> q_;
};

// The code the kernel cache keeps is the MSL itself, checked by a build: Metal builds it again
// when it is loaded (a binary archive would save that build).
class AppleDriver : public MetalDriver {
 public:
  explicit AppleDriver(MTL::Device* d) : d_(NS::TransferPtr(d)) {}
  std::string device_name() const override { return text(d_->name()); }
  std::string key() const override { return "metal:" + device_name(); }
  size_t max_threads_per_threadgroup() const override { return d_->maxThreadsPerThreadgroup().width; }
  size_t max_threadgroup_memory_length() const override { return d_->maxThreadgroupMemoryLength(); }
  std::shared_ptr<MetalBuffer> new_buffer(size_t bytes) override {
    NS::SharedPtr<MTL::Buffer> b = NS::TransferPtr(d_->newBuffer(std::max<size_t>(bytes, 1), MTL::ResourceStorageModeShared));
    if (!b) throw Error("metal: cannot allocate " + std::to_string(bytes) + " bytes");
    std::memset(b->contents(), 0, std::max<size_t>(bytes, 1));
    return std::make_shared<AppleBuffer>(std::move(b), bytes);
  }
  std::unique_ptr<MetalQueue> new_queue() override { return std::make_unique<AppleQueue>(d_.get()); }
  std::string compiler_identity() override {
    Pool pool;
    return "metal " + device_name() + "; " + text(NS::ProcessInfo::processInfo()->operatingSystemVersionString()) +
           "; fastMathEnabled NO";
  }
  std::string build(const std::string& source) override {
    compile(source);
    return source;
  }
  std::shared_ptr<MetalLibrary> library(const std::string& code) override {
    return std::make_shared<AppleLibrary>(d_.get(), compile(code));
  }

 private:
  NS::SharedPtr<MTL::Library> compile(const std::string& source) {
    Pool pool;
    NS::SharedPtr<MTL::CompileOptions> o = NS::TransferPtr(MTL::CompileOptions::alloc()->init());
    o->setFastMathEnabled(false);  // IEEE semantics: no reassociation, subnormals kept, NaN and inf honoured
    NS::Error* err = nullptr;
    NS::SharedPtr<MTL::Library> lib = NS::TransferPtr(d_->newLibrary(ns(source), o.get(), &err));
    if (!lib)
      throw InternalError("internal: the Metal compiler rejected the generated MSL:\n" + error_text(err).substr(0, 4000));
    return lib;
  }

  NS::SharedPtr<MTL::Device> d_;
};

}  // namespace

MetalDriver* metal_driver(std::string* why) {
  static AppleDriver* d = [] {
    MTL::Device* dev = MTL::CreateSystemDefaultDevice();
    return dev ? new AppleDriver(dev) : nullptr;  // never destroyed: buffers may outlive statics
  }();
  if (!d && why) *why = "this Mac has no Metal device (MTLCreateSystemDefaultDevice gave none)";
  return d;
}

}  // namespace lockstep::metal
