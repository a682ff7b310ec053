// TensorProto -> Tensor: raw_data, the typed repeated fields, and external data files.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "frontend/onnx_import.h"

namespace lockstep {

namespace fs = std::filesystem;

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
  if (location.empty()) throw Error(what + ": external data has no location");
  fs::path rel(location);
  if (rel.is_absolute() || rel.lexically_normal().string().rfind("..", 0) == 0)
    throw Error(what + ": external data location '" + location +
                "' must be a relative path inside the model's folder");
  fs::path file = fs::path(base_dir) / rel;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(what + ": cannot open external data file '" + file.string() + "'");
  in.seekg(0, std::ios::end);
  int64_t size = static_cast<int64_t>(in.tellg());
  if (length >= 0 && length != need)
    throw Error(what + ": external data length " + std::to_string(length) + " but shape needs " +
                std::to_string(need) + " bytes");
  if (offset < 0 || offset + need > size)
    throw Error(what + ": external data file '" + file.string() + "' is too short (" +
                std::to_string(size) + " bytes, need " + std::to_string(offset + need) + ")");
  Tensor out(dt, shape);
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(out.bytes.data()), need);
  if (!in) throw Error(what + ": reading external data file '" + file.string() + "' failed");
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
