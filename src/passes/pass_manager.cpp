#include "passes/pass_manager.h"

namespace lockstep {

bool PassManager::request(const std::string& pass, const std::string& what, std::vector<std::string> nodes) {
  return request(pass, what, NodeList(std::move(nodes)));
}

bool PassManager::request(const std::string& pass, const std::string& what, NodeList nodes) {
  PassRecord r;
  r.number = static_cast<int>(log_.size()) + 1;
  r.pass = pass;
  r.what = what;
  r.nodes = std::move(nodes);
  r.applied = limit_ < 0 || r.number <= limit_;
  log_.push_back(std::move(r));
  return log_.back().applied;
}

void PassManager::finished() {
  if (after_each && !log_.empty()) after_each(log_.back());
}

void PassManager::required(const std::string& pass, const std::string& what) {
  PassRecord r;
  r.number = static_cast<int>(log_.size()) + 1;
  r.pass = pass;
  r.what = what;
  r.applied = true;
  log_.push_back(std::move(r));
  finished();
}

int PassManager::applied_count() const {
  int n = 0;
  for (const PassRecord& r : log_) n += r.applied;
  return n;
}

std::string format_record(const PassRecord& r) {
  std::string s = "#" + std::to_string(r.number) + " " + r.pass + ": " + r.what;
  if (!r.nodes.empty()) {
    size_t len = s.size() + 2 * r.nodes.size() + 32;
    for (const std::string& n : r.nodes) len += n.size();
    s.reserve(len);
    s += " (";
    for (size_t k = 0; k < r.nodes.size(); ++k) {
      if (k) s += ", ";
      s += r.nodes[k];
    }
    s += ")";
  }
  if (!r.applied) s += " [skipped by --pass-limit]";
  return s;
}

}  // namespace lockstep
