// Fuzzes external-data path resolution: any `location` (and offset) either resolves to a
// regular file inside the model's folder or gives lockstep::Error; a link, "..", an absolute
// path, a FIFO or a folder never lets bytes from outside through, and nothing blocks.
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "frontend/onnx_import.h"

namespace fs = std::filesystem;

namespace {

// model/ holds a.bin, sub/b.bin, a link inside (in -> a.bin), links out (out -> ../secret.bin,
// abs -> /etc/passwd, up -> ..), a FIFO and a folder. secret.bin sits beside model/.
const fs::path& fixture() {
  static const fs::path base = [] {
    char pattern[] = "/tmp/lockstep-extfuzz-XXXXXX";
    fs::path root = mkdtemp(pattern);
    fs::path m = root / "model";
    fs::create_directories(m / "sub");
    fs::create_directories(m / "d");
    std::ofstream(m / "a.bin", std::ios::binary) << std::string(64, 'a');
    std::ofstream(m / "sub" / "b.bin", std::ios::binary) << std::string(64, 'b');
    std::ofstream(root / "secret.bin", std::ios::binary) << std::string(64, 'S');
    fs::create_symlink("a.bin", m / "in");
    fs::create_symlink("../secret.bin", m / "out");
    fs::create_symlink("/etc/passwd", m / "abs");
    fs::create_symlink("..", m / "up");
    mkfifo((m / "pipe").c_str(), 0600);
    static fs::path made = root;
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(made, ec);
    });
    return fs::canonical(m);
  }();
  return base;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const fs::path& base = fixture();
  std::string location(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    fs::path file = lockstep::resolve_external_location(base.string(), location, "fuzz");
    auto rel = file.lexically_relative(base);
    struct stat st {};
    if (rel.empty() || *rel.begin() == ".." || lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) std::abort();
  } catch (const lockstep::Error&) {
  }
  // The same location through a whole TensorProto, with the first byte as the offset.
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = t.add_external_data();
  loc->set_key("location");
  loc->set_value(location);
  auto* off = t.add_external_data();
  off->set_key("offset");
  off->set_value(std::to_string(static_cast<int>(data[0]) - 16));
  try {
    lockstep::Tensor w = lockstep::tensor_from_proto(t, base.string(), "fuzz");
    for (uint8_t b : w.bytes)
      if (b == 'S') std::abort();  // bytes from outside the folder
  } catch (const lockstep::Error&) {
  }
  return 0;
}
