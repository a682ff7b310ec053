#include "core/dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace lockstep {

namespace fs = std::filesystem;

PrivateTempDir::PrivateTempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / (prefix + "-XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw Error("cannot create a private temporary folder '" + pattern + "': " + std::strerror(errno));
  path_ = buf.data();
}

PrivateTempDir::~PrivateTempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

namespace {

fs::path home_dir() {
  const char* home = std::getenv("HOME");
  return home && *home == '/' ? fs::path(home) : fs::path("/tmp");
}

}  // namespace

fs::path cache_dir_path(const std::string& target) {
  // The XDG spec: a relative XDG_CACHE_HOME is invalid and is ignored.
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  fs::path base = xdg && *xdg == '/' ? fs::path(xdg) : home_dir() / ".cache";
  return base.lexically_normal() / "lockstep" / target;
}

namespace {

// Creates each missing folder of `dir` with mode 0700; existing ones are left as they are.
bool make_dirs(const fs::path& dir, std::string* why) {
  fs::path at;
  for (const fs::path& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) {
      *why = "cannot create '" + at.string() + "': " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

}  // namespace

namespace {

// "" when `dir` is a real folder that only this user (or, above the user's home, root) can
// change; else why not. A folder writable by others is trusted only with the sticky bit and
// root as owner (/tmp), where nobody else can rename what is in it.
std::string untrusted_folder(const fs::path& dir, bool own) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return "cannot inspect '" + dir.string() + "': " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "'" + dir.string() + "' is not a folder";
  bool mine = st.st_uid == ::geteuid(), root = st.st_uid == 0;
  if (!mine && !(root && !own)) return "'" + dir.string() + "' belongs to another user";
  bool shared = st.st_mode & (S_IWGRP | S_IWOTH);
  if (shared && !(root && !own && (st.st_mode & S_ISVTX))) return "'" + dir.string() + "' is writable by other users";
  return "";
}

}  // namespace

fs::path usable_cache_dir(const std::string& target, std::string* why) {
  fs::path dir = cache_dir_path(target);
  if (!make_dirs(dir, why)) return {};
  // lockstep's own folders (lockstep/<target>) must be this user's; every folder above them
  // this user's or root's, and writable by nobody else unless root's and sticky (/tmp):
  // whoever can rename a folder on the way could hand lockstep code of their choosing.
  int level = 0;
  for (fs::path at = dir; !at.empty(); at = at.parent_path(), ++level) {
    if (std::string no = untrusted_folder(at, level < 2); !no.empty()) return *why = no, fs::path();
    if (at == at.parent_path()) break;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    *why = "'" + dir.string() + "' is not writable: " + std::strerror(errno);
    return {};
  }
  return dir;
}

std::string read_cache_entry(const fs::path& file, std::string* bytes) {
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno == ENOENT ? "absent" : errno == ELOOP ? "a symbolic link" : std::strerror(errno);
  struct stat st {};
  std::string no;
  if (::fstat(fd, &st) != 0) no = std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) no = "not a regular file";
  else if (st.st_uid != ::geteuid()) no = "owned by another user";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) no = "writable by other users";
  if (no.empty()) {
    bytes->resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < bytes->size()) {
      ssize_t r = ::read(fd, bytes->data() + done, bytes->size() - done);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      done += static_cast<size_t>(r);
    }
    if (done != bytes->size()) no = "cannot be read";
  }
  ::close(fd);
  return no;
}

}  // namespace lockstep
