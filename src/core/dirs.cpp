#include "core/dirs.h"

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

fs::path cache_dir_path(const std::string& target) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home && *home ? home : "/tmp") / ".cache";
  return base / "lockstep" / target;
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

fs::path usable_cache_dir(const std::string& target, std::string* why) {
  fs::path dir = cache_dir_path(target);
  if (!make_dirs(dir, why)) return {};
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    *why = "cannot inspect '" + dir.string() + "': " + std::strerror(errno);
    return {};
  }
  if (!S_ISDIR(st.st_mode)) *why = "'" + dir.string() + "' is not a folder";
  else if (st.st_uid != ::geteuid()) *why = "'" + dir.string() + "' belongs to another user";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) *why = "'" + dir.string() + "' is writable by other users";
  else if (::access(dir.c_str(), W_OK | X_OK) != 0) *why = "'" + dir.string() + "' is not writable: " + std::strerror(errno);
  else return dir;
  return {};
}

}  // namespace lockstep
