#include "core/file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace lockstep {

FileReader::FileReader(const std::string& path, std::string what) : what_(std::move(what)) {
  if (path.find('\0') != std::string::npos) throw Error(what_ + ": the path contains a NUL byte");
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    int err = errno;
    if (err == ENOENT) throw Error(what_ + " does not exist");
    throw Error("cannot open " + what_ + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw Error("cannot inspect " + what_ + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw Error(what_ + " is a directory");
  }
  regular_ = S_ISREG(st.st_mode);
  if (regular_) size_ = st.st_size;
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::string FileReader::read_up_to(uint64_t n) {
  std::string out;
  // Grown as bytes arrive, never allocated ahead from a count a file declares.
  const uint64_t chunk = 1 << 20;
  while (out.size() < n) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(chunk, n - out.size()));
    size_t at = out.size();
    out.resize(at + want);
    ssize_t got = ::read(fd_, out.data() + at, want);
    if (got < 0 && errno == EINTR) {
      out.resize(at);
      continue;
    }
    if (got < 0) throw Error("cannot read " + what_ + ": " + std::strerror(errno));
    out.resize(at + static_cast<size_t>(got));
    if (got == 0) break;
  }
  return out;
}

bool FileReader::at_end() { return read_up_to(1).empty(); }

}  // namespace lockstep
