// Numbers every application of every pass within one compile, so a compile can stop after
// application N (--pass-limit N) and a divergence can be bisected to one application.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel/fault_hooks.h"

namespace lockstep {

// The ONNX nodes of one application. A fusion names every node merged so far, so along a
// chain of n nodes the applications name 2, 3, ..., n nodes: they share one growing list, each
// record holding a prefix of it (names already in the list never change).
class NodeList {
 public:
  NodeList() = default;
  explicit NodeList(std::vector<std::string> nodes)
      : list_(std::make_shared<const std::vector<std::string>>(std::move(nodes))), size_(list_->size()) {}
  NodeList(std::shared_ptr<const std::vector<std::string>> list, size_t size) : list_(std::move(list)), size_(size) {}
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::string& operator[](size_t k) const { return (*list_)[k]; }
  const std::string* begin() const { return size_ ? list_->data() : nullptr; }
  const std::string* end() const { return size_ ? list_->data() + size_ : nullptr; }
  std::vector<std::string> vector() const { return std::vector<std::string>(begin(), end()); }

 private:
  std::shared_ptr<const std::vector<std::string>> list_;
  size_t size_ = 0;
};

struct PassRecord {
  int number = 0;                  // 1-based, in application order
  std::string pass;                // "fuse-epilogue"
  std::string what;                // one line: what it did
  NodeList nodes;                  // ONNX nodes involved
  bool applied = false;            // false: skipped by the limit
};

class PassManager {
 public:
  // limit < 0: apply everything.
  explicit PassManager(int limit = -1) : limit_(limit) {}
  // Numbering on from `earlier` (a symbolic plan's steps follow its first probe's pipeline).
  PassManager(int limit, std::vector<PassRecord> earlier) : limit_(limit), log_(std::move(earlier)) {}
  // Numbers the next application and says whether to carry it out.
  bool request(const std::string& pass, const std::string& what, std::vector<std::string> nodes);
  bool request(const std::string& pass, const std::string& what, NodeList nodes);
  // Marks the last granted application as carried out; runs after_each on it.
  void finished();
  // Numbers an application that always runs, whatever the limit (the schedule), and finishes it.
  void required(const std::string& pass, const std::string& what);
  const std::vector<PassRecord>& log() const { return log_; }
  int applied_count() const;
  // Called after each applied application (IR verifier, IR dump); may throw.
  std::function<void(const PassRecord&)> after_each;
  // Test aid (--inject-fault pass:N): the planted bug, or null.
  const FaultHooks* fault = nullptr;
  // Whether the application just granted is the one with the planted bug.
  bool faulty() const { return fault && !log_.empty() && log_.back().applied && fault->corrupts_pass(log_.back().number); }

 private:
  int limit_;
  std::vector<PassRecord> log_;
};

// "#12 fuse-epilogue: merged k7 into k9 (/flow/flows.0/post/Conv, /flow/flows.0/Mul_1)"
std::string format_record(const PassRecord& r);

}  // namespace lockstep
