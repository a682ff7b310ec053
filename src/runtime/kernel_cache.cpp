#include "runtime/kernel_cache.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>

#include "core/dirs.h"
#include "core/error.h"
#include "core/files.h"
#include "core/sha256.h"
#include "core/text.h"
#include "frontend/npy.h"

namespace lockstep {

namespace fs = std::filesystem;

namespace {

const std::string kMagic = "lockstep-code-2\n";

std::string sha(const std::string& s) { return sha256_hex(s.data(), s.size()); }

// One file per entry: magic, the full key it was written for, the sha256 of the code, the code.
// An entry proves it belongs to its key: one copied over another's file is refused.
std::string encode_entry(const std::string& key, const std::string& code) {
  return kMagic + key + "\n" + sha(code) + "\n" + code;
}

// "" with the code, or why the entry cannot be used.
std::string decode_entry(const std::string& bytes, const std::string& key, std::string& code) {
  size_t head = kMagic.size() + 65 + 65;
  if (bytes.size() < head || bytes.compare(0, kMagic.size(), kMagic) != 0 || bytes[kMagic.size() + 64] != '\n' ||
      bytes[head - 1] != '\n')
    return "is corrupt";
  if (bytes.compare(kMagic.size(), 64, key) != 0) return "was written for another key";
  code = bytes.substr(head);
  return sha(code) == bytes.substr(kMagic.size() + 65, 64) ? "" : "is corrupt";
}

// The disk entry of `key`, or null when absent; one that cannot be used is reported and rebuilt.
std::shared_ptr<const CompiledCode> read_entry(const fs::path& file, const std::string& key, const std::string& target) {
  std::string bytes;
  std::string no = read_cache_entry(file, &bytes);
  if (no == "absent") return nullptr;
  CompiledCode c{key, ""};
  if (no.empty()) no = decode_entry(bytes, key, c.bytes);
  else no = "is " + no;
  if (no.empty()) return std::make_shared<const CompiledCode>(std::move(c));
  std::cerr << "warning: " << target << " cache entry '" << printable(file.string()) << "' " << no
            << "; rebuilding it\n";
  return nullptr;
}

std::shared_ptr<const CompiledCode> build(CodeCompiler& compiler, const CacheRequest& r, const std::string& key) {
  return std::make_shared<const CompiledCode>(CompiledCode{key, compiler.compile(r.source)});
}

std::shared_ptr<const CompiledCode> from_disk_or_build(CodeCompiler& compiler, const CacheRequest& r,
                                                       const std::string& key) {
  std::string why;
  fs::path dir = usable_cache_dir(r.target, &why);
  if (dir.empty()) {
    std::cerr << "warning: " << r.target << ": the kernel cache was not used (" << printable(why)
              << "); building without it\n";
    return build(compiler, r, key);
  }
  fs::path file = dir / (key + ".bin");
  if (auto c = read_entry(file, key, r.target)) return c;
  auto code = build(compiler, r, key);
  try {
    write_file_atomic(file.string(), encode_entry(key, code->bytes), 0600);
  } catch (const std::exception& e) {  // the result still stands
    std::cerr << "warning: " << r.target << ": cannot write the kernel cache: " << printable(e.what()) << "\n";
  }
  return code;
}

}  // namespace

std::string code_key(CodeCompiler& compiler, const std::string& target, const std::string& source) {
  return sha("target " + target + "\n" + compiler.identity() + "\n--\n" + source);
}

std::shared_ptr<const CompiledCode> cached_code(CodeCompiler& compiler, const CacheRequest& r) {
  std::string key = code_key(compiler, r.target, r.source);
  if (!r.use_cache) return build(compiler, r, key);
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const CompiledCode>> memory;
  std::string slot = r.fault ? r.fault->cache_key(key) : key;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = memory.find(r.target + "/" + slot); it != memory.end()) return it->second;
  // A key a fault changed stays in this process: the disk is always keyed by content.
  auto code = slot == key ? from_disk_or_build(compiler, r, key) : build(compiler, r, key);
  return memory[r.target + "/" + slot] = code;
}

}  // namespace lockstep
