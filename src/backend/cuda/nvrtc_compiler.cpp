#include "backend/cuda/nvrtc_compiler.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "backend/cuda/cuda_api.h"
#include "core/dirs.h"
#include "core/error.h"
#include "core/sha256.h"
#include "frontend/npy.h"

namespace lockstep::cuda {

namespace fs = std::filesystem;

namespace {

const char* kMagic = "lockstep-cuda-1\n";

const Nvrtc& need_nvrtc() {
  std::string why;
  const Nvrtc* n = nvrtc(&why);
  if (!n) throw Error("target 'cuda' is unavailable: " + why);
  return *n;
}

std::vector<int> supported_archs(const Nvrtc& n) {
  int count = 0;
  if (n.nvrtcGetNumSupportedArchs(&count) != 0 || count <= 0) return {};
  std::vector<int> archs(static_cast<size_t>(count));
  n.nvrtcGetSupportedArchs(archs.data());
  return archs;
}

std::string sha(const std::string& s) { return sha256_hex(s.data(), s.size()); }

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One file per entry: magic, kind, arch, sha256 of the image, then the image.
std::string encode_entry(const DeviceCode& c) {
  return kMagic + std::string(c.is_cubin ? "cubin" : "ptx") + "\n" + c.arch + "\n" + sha(c.image) + "\n" + c.image;
}

bool decode_entry(const std::string& bytes, DeviceCode& c) {
  std::istringstream in(bytes);
  std::string magic, kind, arch, sum;
  if (!std::getline(in, magic) || magic + "\n" != kMagic) return false;
  if (!std::getline(in, kind) || !std::getline(in, arch) || !std::getline(in, sum)) return false;
  auto at = in.tellg();
  if (at < 0) return false;
  c.image = bytes.substr(static_cast<size_t>(at));
  c.is_cubin = kind == "cubin";
  c.arch = arch;
  return sha(c.image) == sum;
}

std::string cache_key(const std::string& source, int cc) {
  std::string text = source + "\n--\n";
  for (const std::string& o : nvrtc_options(cc)) text += o + "\n";
  text += "nvrtc " + need_nvrtc().version + "\ncc " + std::to_string(cc) + "\n";
  return sha(text);
}

}  // namespace

std::vector<std::string> nvrtc_options(int cc, bool* cubin) {
  std::vector<int> archs = supported_archs(need_nvrtc());
  bool native = std::find(archs.begin(), archs.end(), cc) != archs.end();
  int ptx_cc = archs.empty() ? cc : *std::max_element(archs.begin(), archs.end());
  if (!native && cc < ptx_cc) ptx_cc = cc;  // an older device: PTX for itself
  if (cubin) *cubin = native;
  std::string arch = native ? "sm_" + std::to_string(cc) : "compute_" + std::to_string(ptx_cc);
  return {"--gpu-architecture=" + arch, "--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true",
          "-std=c++17"};
}

DeviceCode nvrtc_compile(const std::string& source, int cc) {
  const Nvrtc& n = need_nvrtc();
  bool cubin = true;
  std::vector<std::string> opts = nvrtc_options(cc, &cubin);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  nvrtcProgram prog = nullptr;
  if (nvrtcResult r = n.nvrtcCreateProgram(&prog, source.c_str(), "lockstep.cu", 0, nullptr, nullptr))
    throw Error(std::string("cuda: nvrtcCreateProgram failed: ") + n.nvrtcGetErrorString(r));
  nvrtcResult rc = n.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  n.nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) n.nvrtcGetProgramLog(prog, log.data());
  if (rc != 0) {
    n.nvrtcDestroyProgram(&prog);
    throw Error("cuda: NVRTC rejected generated code (a lockstep bug): " + std::string(n.nvrtcGetErrorString(rc)) +
                "\n" + log.substr(0, 4000));
  }
  DeviceCode c;
  c.is_cubin = cubin;
  c.arch = opts[0].substr(opts[0].find('=') + 1);
  size_t size = 0;
  if (cubin ? n.nvrtcGetCUBINSize(prog, &size) : n.nvrtcGetPTXSize(prog, &size)) size = 0;
  c.image.assign(size, '\0');
  if (size) cubin ? n.nvrtcGetCUBIN(prog, c.image.data()) : n.nvrtcGetPTX(prog, c.image.data());
  n.nvrtcDestroyProgram(&prog);
  if (c.image.empty()) throw Error("cuda: NVRTC produced no device code");
  c.key = cache_key(source, cc);
  return c;
}

std::string cuda_cache_dir() {
  return cache_dir_path("cuda").string();
}

int default_compute_capability() {
  const char* a = std::getenv("LOCKSTEP_CUDA_ARCH");
  if (a && *a) {
    try {
      return std::stoi(a);
    } catch (const std::exception&) {
      throw Error("LOCKSTEP_CUDA_ARCH must be a compute capability such as 90, not '" + std::string(a) + "'");
    }
  }
  return 90;
}

std::shared_ptr<const DeviceCode> cached_device_code(const std::string& source, int cc, bool use_cache,
                                                     bool key_by_name) {
  if (key_by_name && use_cache) {  // the first program's code is handed to every later compile
    static std::mutex mu;
    static std::shared_ptr<const DeviceCode> by_name;
    std::lock_guard<std::mutex> lock(mu);
    if (!by_name) by_name = cached_device_code(source, cc, use_cache);
    return by_name;
  }
  if (!use_cache) return std::make_shared<const DeviceCode>(nvrtc_compile(source, cc));
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const DeviceCode>> memory;  // by content, never by name
  std::string key = cache_key(source, cc);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = memory.find(key); it != memory.end()) return it->second;
  std::string why;
  fs::path dir = usable_cache_dir("cuda", &why);
  if (dir.empty()) {  // a cache that cannot be used costs speed, never the run
    std::cerr << "warning: cuda: the kernel cache was not used (" << why << "); building without it\n";
    return memory[key] = std::make_shared<const DeviceCode>(nvrtc_compile(source, cc));
  }
  fs::path file = dir / (key + ".bin");
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    DeviceCode c;
    if (decode_entry(read_all(file), c)) {
      c.key = key;
      return memory[key] = std::make_shared<const DeviceCode>(std::move(c));
    }
    std::cerr << "warning: cuda cache entry '" << file.string() << "' is corrupt; rebuilding it\n";
  }
  auto code = std::make_shared<const DeviceCode>(nvrtc_compile(source, cc));
  try {
    write_file_atomic(file.string(), encode_entry(*code));
  } catch (const std::exception& e) {
    std::cerr << "warning: cannot write the cuda cache: " << e.what() << "\n";  // the result still stands
  }
  return memory[key] = code;
}

}  // namespace lockstep::cuda
