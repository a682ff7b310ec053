#include "core/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <sstream>
#include <fstream>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "core/error.h"

namespace lockstep {

namespace fs = std::filesystem;

namespace {

std::string why(int err) { return std::strerror(err); }

// 16 hex digits nobody can guess ahead, for names made with O_EXCL (or link()) and retried.
std::string random_hex() {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof r)) {
    static std::atomic<uint64_t> counter{0};
    r = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<uint64_t>(::getpid()) << 32) ^ (counter++ * 0x9E3779B97F4A7C15ull);
  }
  static const char* hex = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 0; i < 16; ++i) s[i] = hex[(r >> (4 * i)) & 15];
  return s;
}

// A hidden name beside `path` ending in `suffix`; the file name part is shortened so the result
// stays within NAME_MAX.
std::string sibling_name(const std::string& path, const char* suffix) {
  fs::path p(path);
  std::string base = p.filename().string().substr(0, 96);
  return (p.parent_path() / ("." + base + ".lockstep-" + random_hex() + suffix)).string();
}

std::string parent_dir(const std::string& path) {
  fs::path d = fs::path(path).parent_path();
  return d.empty() ? std::string(".") : d.string();
}

// Best effort: makes the renames in `dir` durable. The files are already in place either way.
void sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

// ---- StagedFiles ----

StagedFiles::~StagedFiles() { discard(); }

void StagedFiles::discard() noexcept {
  for (const Entry& e : entries_) {
    if (!e.tmp.empty()) ::unlink(e.tmp.c_str());
    if (!e.backup.empty()) ::unlink(e.backup.c_str());
  }
  entries_.clear();
}

void StagedFiles::add(const std::string& path, std::string_view bytes, mode_t mode) {
  if (fs::path(path).filename().empty()) throw Error("cannot write '" + path + "': not a file name");
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = sibling_name(path, ".tmp");
    // O_EXCL: never an existing file or a planted symlink; O_NOFOLLOW says so twice.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && (errno != EEXIST || attempt == 100)) throw Error("cannot write '" + path + "': " + why(errno));
  }
  auto fail = [&](const char* doing, int err, bool close_fd) {
    if (close_fd) ::close(fd);
    ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + doing + why(err));
  };
  for (size_t done = 0; done < bytes.size();) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail("", errno, true);
    if (w == 0) fail("", ENOSPC, true);
    done += static_cast<size_t>(w);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("", errno, true);
  if (static_cast<uint64_t>(st.st_size) != bytes.size()) fail("short file: ", EIO, true);
  if (::fsync(fd) != 0) fail("fsync: ", errno, true);
  if (::close(fd) != 0) fail("close: ", errno, false);
  try {
    entries_.push_back(Entry{path, tmp, "", false});
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

void StagedFiles::commit() {
  // Keep a hard link to every file about to be replaced, so a failed rename can put it back.
  for (Entry& e : entries_) {
    struct stat st {};
    if (::lstat(e.path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      int err = errno;
      std::string p = e.path;  // discard() frees the entries
      discard();
      throw Error("cannot write '" + p + "': " + why(err));
    }
    if (S_ISDIR(st.st_mode)) {
      std::string p = e.path;
      discard();
      throw Error("cannot write '" + p + "': it is a folder");
    }
    e.had_old = true;
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::string b = sibling_name(e.path, ".old");
      if (::link(e.path.c_str(), b.c_str()) == 0) {
        e.backup = b;
        break;
      }
      if (errno != EEXIST) break;  // no hard links here (vfat, some FUSE): no way back for this one
    }
  }
  // POSIX has no multi-file rename: a crash between the first and the last rename below (or a
  // rollback rename failing too) leaves some destinations new and others old.
  for (size_t k = 0; k < entries_.size(); ++k) {
    Entry& e = entries_[k];
    if (::rename(e.tmp.c_str(), e.path.c_str()) == 0) {
      e.tmp.clear();
      continue;
    }
    int err = errno;
    std::string failed = e.path;
    for (size_t j = 0; j < k; ++j) {
      Entry& d = entries_[j];
      if (!d.backup.empty()) {
        if (::rename(d.backup.c_str(), d.path.c_str()) == 0) d.backup.clear();
      } else if (!d.had_old) {
        ::unlink(d.path.c_str());
      }  // else: the old file could not be linked; the complete new one stays
    }
    discard();
    throw Error("cannot write '" + failed + "': rename: " + why(err));
  }
  std::set<std::string> dirs;
  for (Entry& e : entries_) {
    if (!e.backup.empty()) ::unlink(e.backup.c_str());
    e.backup.clear();
    dirs.insert(parent_dir(e.path));
  }
  entries_.clear();
  for (const std::string& d : dirs) sync_dir(d);
}

// ---- OutputDir ----

OutputDir::OutputDir(const std::string& dir, const std::string& what, bool must_be_empty) : dir_(dir) {
  if (dir.empty()) throw Error(what + ": empty path");
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (ec) throw Error(what + " '" + dir + "': " + ec.message());
  std::vector<fs::path> missing;
  struct stat st {};
  for (;;) {
    if (::stat(p.c_str(), &st) == 0) break;
    if ((errno != ENOENT && errno != ENOTDIR) || !p.has_parent_path() || p == p.parent_path())
      throw Error("cannot create " + what + " '" + dir + "': " + why(errno));
    missing.push_back(p);
    p = p.parent_path();
  }
  if (!S_ISDIR(st.st_mode))
    throw Error(what + " '" + dir + "': '" + p.string() + "' exists and is not a folder");
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) != 0) {
      int err = errno;
      if (err == EEXIST && fs::is_directory(*it, ec)) continue;  // made meanwhile by someone else
      remove_made();
      throw Error("cannot create " + what + " '" + dir + "': " + why(err));
    }
    made_.push_back(it->string());
  }
  if (must_be_empty && missing.empty()) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) throw Error("cannot read " + what + " '" + dir + "': " + why(errno));
    bool empty = true;
    while (dirent* ent = ::readdir(d))
      if (std::strcmp(ent->d_name, ".") != 0 && std::strcmp(ent->d_name, "..") != 0) empty = false;
    ::closedir(d);
    if (!empty)
      throw Error(what + " '" + dir + "' is not empty; give a new or empty folder (lockstep does not "
                  "overwrite or mix with files already there)");
  }
  // access() says yes to root even where nothing can be created; creating a file is the test.
  std::string probe = (fs::path(dir) / (".lockstep-probe-" + random_hex())).string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    remove_made();
    throw Error(what + " '" + dir + "' is not writable: " + why(err));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

OutputDir::~OutputDir() {
  if (!kept_) remove_made();
}

void OutputDir::remove_made() noexcept {
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) ::rmdir(it->c_str());  // only if empty
  made_.clear();
}

void claim_output_dir(const std::string& dir, const std::string& what) {
  static std::mutex mu;
  static std::set<std::string> claimed;
  std::error_code ec;
  std::string key = fs::absolute(dir, ec).lexically_normal().string();
  if (ec) key = dir;
  std::lock_guard<std::mutex> lock(mu);
  if (claimed.count(key)) return;
  OutputDir d(dir, what, true);
  d.keep();
  claimed.insert(key);
}

std::string read_own_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomic(const std::string& path, std::string_view bytes, mode_t mode) {
  StagedFiles f;
  f.add(path, bytes, mode);
  f.commit();
}

void refuse_input_as_output(const std::string& out, const std::vector<std::string>& inputs, const std::string& option) {
  if (out.empty()) return;
  std::error_code ec;
  fs::path o = fs::weakly_canonical(out, ec);
  for (const std::string& in : inputs) {
    if (in.empty()) continue;
    fs::path i = fs::weakly_canonical(in, ec);
    bool same = fs::exists(out, ec) && fs::exists(in, ec) ? fs::equivalent(out, in, ec) : o == i;
    if (same)
      throw Error(option + " '" + out + "': it is an input of this command ('" + in + "'), which it would replace");
  }
}

}  // namespace lockstep
