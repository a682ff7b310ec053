// TensorProto -> Tensor: raw_data, the typed repeated fields, and external data files.
#include <onnx/onnx_pb.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "frontend/onnx_import.h"

namespace lockstep {

namespace fs = std::filesystem;

fs::path resolve_external_location(const std::string& base_dir, const std::string& location,
                                   const std::string& what) {
  if (location.empty()) throw Error(what + ": external data has no location");
  if (location.find('\0') != std::string::npos) throw Error(what + ": external data location contains a NUL byte");
  fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name())
    throw Error(what + ": external data location '" + location + "' must be a relative path inside the model's folder");
  std::error_code ec;
  fs::path base = fs::canonical(base_dir.empty() ? fs::path(".") : fs::path(base_dir), ec);
  if (ec) throw Error(what + ": cannot resolve the model's folder '" + base_dir + "': " + ec.message());
  fs::path file = fs::canonical(base / rel, ec);  // every link and ".." resolved
  if (ec) throw Error(what + ": cannot open external data file '" + (base / rel).string() + "': " + ec.message());
  if (std::mismatch(base.begin(), base.end(), file.begin(), file.end()).first != base.end() || file == base)
    throw Error(what + ": external data location '" + location + "' resolves to '" + file.string() +
                "', outside the model's folder '" + base.string() + "' (external data must stay inside the model's folder)");
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(what + ": external data file '" + file.string() + "' is not a regular file");
  return file;
}

namespace {

// Closes a descriptor however the read ends.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A regular file that holds `need` bytes at `offset`, opened: checked before anything is
// allocated for them (a 256-byte file may declare 16 GiB).
Fd open_external(const fs::path& file, int64_t offset, int64_t need, const std::string& what) {
  // No following a link swapped in since resolving; O_NONBLOCK so a FIFO can never block open.
  Fd f{::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) throw Error(what + ": cannot open external data file '" + file.string() + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(what + ": external data file '" + file.string() + "' is not a regular file");
  if (offset < 0 || offset > st.st_size || need > st.st_size - offset)
    throw Error(what + ": external data file '" + file.string() + "' is too short (" + std::to_string(st.st_size) +
                " bytes; the tensor needs " + std::to_string(need) + " bytes at offset " + std::to_string(offset) +
                ")");
  return f;
}

// Reads exactly `need` bytes at `offset` of the opened file, never more.
void read_exact(const Fd& f, const fs::path& file, int64_t offset, int64_t need, uint8_t* to, const std::string& what) {
  for (int64_t done = 0; done < need;) {
    ssize_t n = ::pread(f.fd, to + done, static_cast<size_t>(need - done), offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(what + ": reading external data file '" + file.string() + "' failed");
    done += n;
  }
}

}  // namespace

std::vector<std::string> external_data_locations(const onnx::TensorProto& t) {
  std::vector<std::string> out;
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return out;
  for (const auto& kv : t.external_data())
    if (kv.key() == "location") out.push_back(kv.value());
  return out;
}

// Reads the external bytes into a tensor of `dt` and `shape`, allocated only once the file
// is known to hold them.
static Tensor read_external(const onnx::TensorProto& t, const std::string& base_dir, const std::string& what,
                            DType dt, const Shape& shape, int64_t need) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      throw Error(what + ": external data field '" + kv.key() + "' is not a number");
    }
  }
  fs::path file = resolve_external_location(base_dir, location, what);
  if (length >= 0 && length != need)
    throw Error(what + ": external data length " + std::to_string(length) + " but shape needs " +
                std::to_string(need) + " bytes");
  if (offset < 0) throw Error(what + ": external data offset " + std::to_string(offset) + " is negative");
  Fd f = open_external(file, offset, need, what);
  Tensor out(dt, shape);  // checked against the memory this process may use
  read_exact(f, file, offset, need, out.bytes.data(), what);
  return out;
}

// How many values the typed field for `dt` holds (int32_data carries every type of 32 bits
// or fewer).
static int64_t field_values(const onnx::TensorProto& t, DType dt) {
  switch (dt) {
    case DType::f32: return t.float_data_size();
    case DType::f64: return t.double_data_size();
    case DType::i64: return t.int64_data_size();
    case DType::u32:
    case DType::u64: return t.uint64_data_size();
    default: return t.int32_data_size();
  }
}

// The caller has checked that `field` holds n values (field_values).
template <class Field, class Store>
static void copy_field(const Field& field, int64_t n, Store store) {
  for (int64_t k = 0; k < n; ++k) store(k, field[static_cast<int>(k)]);
}

Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& base_dir,
                         const std::string& what) {
  DType dt = dtype_from_onnx(t.data_type());
  if (dt == DType::undefined || dt == DType::string)
    throw Unsupported(what + ": element type " + std::to_string(t.data_type()) +
                (dt == DType::string ? " (string)" : "") + " is not supported");
  if (t.has_segment()) throw Error(what + ": segmented tensors are not supported");
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw Error(what + ": negative dimension in shape " + shape_str(shape));
  // The data must match the shape before anything is allocated: a corrupt file can declare
  // any dims.
  __int128 total = 1;
  for (int64_t d : shape) {
    total *= d;
    if (total > (static_cast<__int128>(1) << 40))
      throw Error(what + ": shape " + shape_str(shape) + " is too large");
  }
  int64_t n = static_cast<int64_t>(total), need = n * static_cast<int64_t>(dtype_size(dt));
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return read_external(t, base_dir, what, dt, shape, need);
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != need)
      throw Error(what + ": raw_data has " + std::to_string(t.raw_data().size()) +
                  " bytes, shape " + shape_str(shape) + " of " + dtype_name(dt) + " needs " +
                  std::to_string(need));
    Tensor out(dt, shape);
    copy_bytes(out.bytes.data(), t.raw_data().data(), out.bytes.size());
    if (dt == DType::boolean)
      for (auto& b : out.bytes) b = b != 0;
    return out;
  }
  if (field_values(t, dt) != n)
    throw Error(what + ": has " + std::to_string(field_values(t, dt)) + " values, shape " + shape_str(shape) +
                " needs " + std::to_string(n));
  Tensor out(dt, shape);
  switch (dt) {
    case DType::f32: copy_field(t.float_data(), n, [&](int64_t k, float v) { out.data<float>()[k] = v; }); break;
    case DType::f64: copy_field(t.double_data(), n, [&](int64_t k, double v) { out.data<double>()[k] = v; }); break;
    case DType::i64: copy_field(t.int64_data(), n, [&](int64_t k, int64_t v) { out.data<int64_t>()[k] = v; }); break;
    case DType::u32: copy_field(t.uint64_data(), n, [&](int64_t k, uint64_t v) { out.data<uint32_t>()[k] = static_cast<uint32_t>(v); }); break;
    case DType::u64: copy_field(t.uint64_data(), n, [&](int64_t k, uint64_t v) { out.data<uint64_t>()[k] = v; }); break;
    default: {  // int32_data carries every type of 32 bits or fewer, f16/bf16 as bit patterns
      size_t sz = dtype_size(dt);
      copy_field(t.int32_data(), n, [&](int64_t k, int32_t v) {
        if (dt == DType::boolean) v = v != 0;
        std::memcpy(out.bytes.data() + k * sz, &v, sz);  // little-endian host
      });
    }
  }
  return out;
}

Tensor load_tensor_pb(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open tensor file '" + path + "'");
  onnx::TensorProto t;
  if (!t.ParseFromIstream(&in)) throw Error("'" + path + "' is not a valid TensorProto file");
  return tensor_from_proto(t, fs::path(path).parent_path().string(), "tensor file '" + path + "'");
}

}  // namespace lockstep
