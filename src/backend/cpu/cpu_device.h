// The cpu target's device: memory is host memory, the queue runs each call as it is made,
// and a kernel is a function of the loaded shared object, called with every buffer's address.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/target.h"

namespace lockstep::cpu {

class CpuDevice : public Device {
 public:
  explicit CpuDevice(int threads) : threads_(threads) {}
  std::string key() const override { return "cpu"; }
  bool host_memory() const override { return true; }
  void load(const std::string& code, const kir::Plan& plan, const std::vector<std::string>& entries) override;
  void bind(const std::vector<DevicePtr>& address) override;
  DevicePtr allocate(size_t bytes) override;
  void free(DevicePtr p) override;
  DevicePtr reallocate(DevicePtr p, size_t bytes) override;
  void upload(DevicePtr dst, const void* src, size_t bytes) override;
  void download(void* dst, DevicePtr src, size_t bytes) override;
  void copy(DevicePtr dst, DevicePtr src, size_t bytes) override;
  void fill(DevicePtr dst, unsigned char byte, size_t bytes) override;
  void launch(int kernel) override;
  std::shared_ptr<Fence> fence() override;
  void synchronize() override {}

  struct Module;

 private:
  int threads_;
  std::shared_ptr<const Module> module_;
  std::vector<void*> args_;
};

// The cpu entry of the target registry.
TargetInfo target_info();

}  // namespace lockstep::cpu
