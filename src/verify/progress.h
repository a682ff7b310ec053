// Progress of a long verification on stderr: a bar redrawn in place on a terminal, one
// timestamped line per event otherwise (logs and CI keep every line).
#pragma once
#include <string>

namespace lockstep {

class ProgressBar {
 public:
  explicit ProgressBar(int total);
  ~ProgressBar();  // a terminal's bar line is cleared
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  // What is running now ("cpu: fresh process 2/8"); the bar does not move.
  void note(const std::string& what);
  // One of the `total` steps finished.
  void advance(const std::string& what);

 private:
  void draw(const std::string& what);
  int total_, done_ = 0;
  double start_;
  bool tty_;
};

}  // namespace lockstep
