// Folders lockstep writes code into. Generated code is only ever compiled and loaded from a
// folder lockstep created itself and that nobody else can write: a fresh private temporary
// folder, or a cache folder owned by this user with no group or other write permission.
#pragma once
#include <filesystem>
#include <string>

namespace lockstep {

// A fresh folder (mkdtemp, mode 0700) under $TMPDIR or /tmp, removed with what it holds when
// this object goes. Never an existing path, so a planted link or folder is never followed.
class PrivateTempDir {
 public:
  explicit PrivateTempDir(const std::string& prefix);
  ~PrivateTempDir();
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// "$XDG_CACHE_HOME/lockstep/<target>" (or ~/.cache/lockstep/<target>), created 0700 if absent.
std::filesystem::path cache_dir_path(const std::string& target);

// The cache folder for `target` if it can be trusted and written: a real folder (not a link),
// owned by this user, not writable by group or others. Otherwise an empty path and, in `why`,
// the reason (the caller then compiles without the cache and says so once).
std::filesystem::path usable_cache_dir(const std::string& target, std::string* why);

// Reads a cache entry into `bytes` without following a link: "" when it is a regular file owned
// by this user and writable by nobody else, else why not ("absent" when there is none).
std::string read_cache_entry(const std::filesystem::path& file, std::string* bytes);

}  // namespace lockstep
