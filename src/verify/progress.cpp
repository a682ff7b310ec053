#include "verify/progress.h"
#include "core/text.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

namespace lockstep {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr int kBarWidth = 24;
constexpr size_t kLineWidth = 110;  // the whole line, so it never wraps on an 80+ column terminal

}  // namespace

ProgressBar::ProgressBar(int total) : total_(std::max(total, 1)), start_(now_s()), tty_(isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (tty_) std::cerr << "\r\033[K" << std::flush;
}

void ProgressBar::note(const std::string& what) { draw(what); }

void ProgressBar::advance(const std::string& what) {
  done_ = std::min(done_ + 1, total_);
  draw(what);
}

void ProgressBar::draw(const std::string& raw) {
  std::string what = printable(raw);  // node and model names: never terminal control
  char head[64];
  std::snprintf(head, sizeof head, "%d/%d %.1fs", done_, total_, now_s() - start_);
  if (!tty_) {
    std::cerr << "[" << head << "] " << what << std::endl;
    return;
  }
  int filled = done_ * kBarWidth / total_;
  std::string line = "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "] " + head + " " + what;
  if (line.size() > kLineWidth) line = line.substr(0, kLineWidth - 3) + "...";
  std::cerr << "\r\033[K" << line << std::flush;
}

}  // namespace lockstep
