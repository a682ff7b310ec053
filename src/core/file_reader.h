// Reading user files with a bound: never more bytes than the caller expects, so a device or
// pipe (/dev/zero, a FIFO) given as a model or input cannot grow memory without limit.
#pragma once
#include <cstdint>
#include <string>

namespace lockstep {

class FileReader {
 public:
  // `what` names the file in errors ("model file 'x.onnx'"). Throws Error when it cannot open.
  FileReader(const std::string& path, std::string what);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  bool regular() const { return regular_; }
  int64_t size() const { return size_; }  // bytes of a regular file; -1 otherwise
  // Up to `n` bytes (fewer only at the end of the file).
  std::string read_up_to(uint64_t n);
  // True when nothing follows what was read (reads at most one byte to know).
  bool at_end();
  const std::string& what() const { return what_; }
  int fd() const { return fd_; }  // for a parser that reads the file itself

 private:
  int fd_ = -1;
  bool regular_ = false;
  int64_t size_ = -1;
  std::string what_;
};

}  // namespace lockstep
