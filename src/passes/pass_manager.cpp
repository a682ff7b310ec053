#include "passes/pass_manager.h"

namespace lockstep {

bool PassManager::request(const std::string& pass, const std::string& what, std::vector<std::string> nodes) {
  PassRecord r;
  r.number = static_cast<int>(log_.size()) + 1;
  r.pass = pass;
  r.what = what;
  r.nodes = std::move(nodes);
  r.applied = limit_ < 0 || r.number <= limit_;
  log_.push_back(r);
  return r.applied;
}

void PassManager::finished() {
  if (after_each && !log_.empty()) after_each(log_.back());
}

int PassManager::applied_count() const {
  int n = 0;
  for (const PassRecord& r : log_) n += r.applied;
  return n;
}

std::string format_record(const PassRecord& r) {
  std::string s = "#" + std::to_string(r.number) + " " + r.pass + ": " + r.what;
  if (!r.nodes.empty()) {
    s += " (";
    for (size_t k = 0; k < r.nodes.size(); ++k) s += (k ? ", " : "") + r.nodes[k];
    s += ")";
  }
  if (!r.applied) s += " [skipped by --pass-limit]";
  return s;
}

}  // namespace lockstep
