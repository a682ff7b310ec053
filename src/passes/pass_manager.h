// Numbers every application of every pass within one compile, so a compile can stop after
// application N (--pass-limit N) and a divergence can be bisected to one application.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace lockstep {

struct PassRecord {
  int number = 0;                  // 1-based, in application order
  std::string pass;                // "fuse-epilogue"
  std::string what;                // one line: what it did
  std::vector<std::string> nodes;  // ONNX nodes involved
  bool applied = false;            // false: skipped by the limit
};

class PassManager {
 public:
  // limit < 0: apply everything.
  explicit PassManager(int limit = -1) : limit_(limit) {}
  // Numbers the next application and says whether to carry it out.
  bool request(const std::string& pass, const std::string& what, std::vector<std::string> nodes);
  // Marks the last granted application as carried out; runs after_each on it.
  void finished();
  const std::vector<PassRecord>& log() const { return log_; }
  int applied_count() const;
  // Called after each applied application (IR verifier, IR dump); may throw.
  std::function<void(const PassRecord&)> after_each;
  // Test aid (--inject-fault pass:N): application N carries a planted bug.
  int fault_at = -1;
  // Whether the application just granted is the one with the planted bug.
  bool faulty() const { return fault_at > 0 && !log_.empty() && log_.back().applied && log_.back().number == fault_at; }

 private:
  int limit_;
  std::vector<PassRecord> log_;
};

// "#12 fuse-epilogue: merged k7 into k9 (/flow/flows.0/post/Conv, /flow/flows.0/Mul_1)"
std::string format_record(const PassRecord& r);

}  // namespace lockstep
