// Writing what the user asked for to disk: all or nothing, every write checked, errors that
// name the file and the reason (strerror), and nothing the user had there overwritten or lost
// unless the command says it replaces it.
#pragma once
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

// A set of files written all or nothing. add() writes each one to a new temporary file in its
// destination folder (O_CREAT|O_EXCL with a random name, so nothing can be pre-planted there;
// every write checked, size checked, fsync-ed, closed); commit() then renames them all into
// place, keeping hard links to the files they replace until every rename succeeded so a failed
// rename puts the old files back. On any failure, and when commit() is never reached, every
// temporary is removed and the destinations are as they were. Errors are lockstep::Error.
class StagedFiles {
 public:
  StagedFiles() = default;
  ~StagedFiles();
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  // `mode` (before the umask) of the file written; the cache writes its entries 0600.
  void add(const std::string& path, std::string_view bytes, mode_t mode = 0666);
  void commit();

 private:
  struct Entry {
    std::string path, tmp, backup;  // backup: a hard link to the file `path` replaced, if any
    bool had_old = false;
  };
  void discard() noexcept;
  std::vector<Entry> entries_;
};

// A folder to write output into, made (with its missing parents) and probed for writability
// when constructed, so a bad one fails before any work. `what` names it in errors ("output
// folder", "--emit-source folder"). With `must_be_empty`, an existing folder must be empty:
// commands that write many files of their own naming refuse to mix them with files already
// there. Folders made here are removed again (when still empty) unless keep() is called.
class OutputDir {
 public:
  OutputDir(const std::string& dir, const std::string& what, bool must_be_empty);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  void keep() { kept_ = true; }
  const std::string& path() const { return dir_; }

 private:
  void remove_made() noexcept;
  std::string dir_;
  std::vector<std::string> made_;
  bool kept_ = false;
};

// Writes to a temporary file in the same folder and renames it over `path`, so readers see
// either the old file or the complete new one, never a part. Throws Error naming the file.
void write_file_atomic(const std::string& path, std::string_view bytes, mode_t mode = 0666);

// Throws Error when `out` is the same file as one of `inputs` (the command's model and input
// files): what `option` writes there would replace what the user gave.
void refuse_input_as_output(const std::string& out, const std::vector<std::string>& inputs, const std::string& option);

// For a folder written piecemeal over a process's life (--dump-ir): the first call for `dir`
// makes it as OutputDir(dir, what, true) does and keeps it; later calls in the same process
// accept it as it is, so a process may rewrite its own files there.
void claim_output_dir(const std::string& dir, const std::string& what);

// The bytes of a file lockstep wrote itself (a kernel-cache entry, a compiled object); empty
// when it cannot be read. User files go through FileReader, which bounds what it reads.
std::string read_own_file(const std::string& path);

}  // namespace lockstep
