#include "backend/cuda/nvrtc_compiler.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <thread>

#include "backend/cuda/cuda_api.h"
#include "codegen/units.h"
#include "core/error.h"
#include "core/process.h"

namespace lockstep::cuda {

namespace {

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

bool split_compile(const Nvrtc& n) { return n.major > 12 || (n.major == 12 && n.minor >= 1); }

constexpr const char* kPackMagic = "lockstep cuda images 1\n";  // then each image: its size, a newline, its bytes

}  // namespace

std::vector<std::string> nvrtc_options(int cc, bool* cubin, bool split) {
  std::vector<int> archs = supported_archs(need_nvrtc());
  bool native = std::find(archs.begin(), archs.end(), cc) != archs.end();
  int ptx_cc = archs.empty() ? cc : *std::max_element(archs.begin(), archs.end());
  if (!native && cc < ptx_cc) ptx_cc = cc;  // an older device: PTX for itself
  if (cubin) *cubin = native;
  std::string arch = native ? "sm_" + std::to_string(cc) : "compute_" + std::to_string(ptx_cc);
  std::vector<std::string> opts = {"--gpu-architecture=" + arch, "--fmad=false", "--ftz=false", "--prec-div=true",
                                   "--prec-sqrt=true", "-std=c++17"};
  // The optimiser on every core (NVRTC 12.1 on): the decoder's 243 kernels in 4.5 s, not 19 s,
  // on the H200 machine; each kernel's operations are the same, so are its results.
  if (split && split_compile(need_nvrtc())) opts.push_back("--split-compile=0");
  return opts;
}

DeviceCode nvrtc_compile(const std::string& source, int cc, bool split) {
  const Nvrtc& n = need_nvrtc();
  bool cubin = true;
  std::vector<std::string> opts = nvrtc_options(cc, &cubin, split);
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
    throw InternalError("cuda: NVRTC rejected generated code: " + std::string(n.nvrtcGetErrorString(rc)) +
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
  return c;
}

std::string pack_images(const std::vector<std::string>& images) {
  std::string out = kPackMagic;
  for (const std::string& i : images) out += std::to_string(i.size()) + "\n" + i;
  return out;
}

std::vector<std::string> unpack_images(const std::string& packed) {
  const std::string magic = kPackMagic;
  auto damaged = [] { return Error("cuda: a compiled module is damaged (not lockstep's packed images)"); };
  if (packed.compare(0, magic.size(), magic) != 0) throw damaged();
  std::vector<std::string> images;
  for (size_t at = magic.size(); at < packed.size();) {
    size_t eol = packed.find('\n', at);
    if (eol == std::string::npos || eol == at || eol - at > 12) throw damaged();
    size_t size = 0;
    for (size_t c = at; c < eol; ++c) {
      if (packed[c] < '0' || packed[c] > '9') throw damaged();
      size = size * 10 + static_cast<size_t>(packed[c] - '0');
    }
    if (size == 0 || size > packed.size() - eol - 1) throw damaged();
    images.push_back(packed.substr(eol + 1, size));
    at = eol + 1 + size;
  }
  if (images.empty()) throw damaged();
  return images;
}

namespace {

// Little-endian field of `bytes` bytes at `at`, checked against the image's end.
uint64_t field(const std::string& image, uint64_t at, int bytes) {
  if (at > image.size() || image.size() - at < static_cast<uint64_t>(bytes))
    throw Error("cuda: a compiled module is damaged (its ELF tables run past its end)");
  uint64_t v = 0;
  for (int b = bytes; b-- > 0;) v = v << 8 | static_cast<unsigned char>(image[at + static_cast<uint64_t>(b)]);
  return v;
}

// ELF64: the symbol table's global functions, their names from the table it links to.
std::vector<std::string> elf_functions(const std::string& image) {
  const uint64_t shoff = field(image, 0x28, 8), shentsize = field(image, 0x3A, 2), shnum = field(image, 0x3C, 2);
  std::vector<std::string> names;
  for (uint64_t s = 0; s < shnum; ++s) {
    const uint64_t sh = shoff + s * shentsize;
    if (field(image, sh + 4, 4) != 2) continue;  // SHT_SYMTAB
    const uint64_t off = field(image, sh + 0x18, 8), size = field(image, sh + 0x20, 8),
                   entsize = field(image, sh + 0x38, 8), str = shoff + field(image, sh + 0x28, 4) * shentsize;
    const uint64_t str_off = field(image, str + 0x18, 8), str_size = field(image, str + 0x20, 8);
    if (entsize < 24) throw Error("cuda: a compiled module is damaged (its symbol table)");
    for (uint64_t e = off; e + entsize <= off + size; e += entsize) {
      const uint64_t info = field(image, e + 4, 1), name = field(image, e, 4);
      if ((info & 0xf) != 2 || (info >> 4) != 1) continue;  // STT_FUNC, STB_GLOBAL
      if (name >= str_size) throw Error("cuda: a compiled module is damaged (a symbol's name)");
      field(image, str_off + name, 1);
      names.emplace_back(image.c_str() + str_off + name);
    }
  }
  return names;
}

}  // namespace

std::vector<std::string> entry_names(const std::string& image) {
  if (image.compare(0, 4, "\x7f" "ELF") == 0) return elf_functions(image);
  std::vector<std::string> names;
  const std::string entry = ".entry ";
  for (size_t at = image.find(entry); at != std::string::npos; at = image.find(entry, at + 1)) {
    size_t b = at + entry.size(), e = image.find_first_of("( \t\n", b);
    names.push_back(image.substr(b, e == std::string::npos ? std::string::npos : e - b));
  }
  return names;
}

// One unit: NVRTC's own split compile; several: a thread each, NVRTC's optimiser on one.
std::string NvrtcCompiler::compile(const std::string& source) {
  std::vector<std::string> units = codegen::translation_units(source, static_cast<size_t>(available_cores()));
  if (units.size() == 1) return pack_images({nvrtc_compile(source, cc_).image});
  std::vector<std::string> images(units.size());
  run_on_threads(units.size(), [&](size_t u) { images[u] = nvrtc_compile(units[u], cc_, false).image; });
  return pack_images(images);
}

std::string NvrtcCompiler::identity() {
  std::string id = "nvrtc " + need_nvrtc().version + "\ncc " + std::to_string(cc_) + "\nunits, packed images\n";
  for (const std::string& o : nvrtc_options(cc_)) id += o + "\n";
  return id;
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

}  // namespace lockstep::cuda
