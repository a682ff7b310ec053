#include "backend/cuda/nvrtc_compiler.h"

#include <algorithm>
#include <cstdlib>

#include "backend/cuda/cuda_api.h"
#include "core/error.h"

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

}  // namespace

std::vector<std::string> nvrtc_options(int cc, bool* cubin) {
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
  if (split_compile(need_nvrtc())) opts.push_back("--split-compile=0");
  return opts;
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

std::string NvrtcCompiler::identity() {
  std::string id = "nvrtc " + need_nvrtc().version + "\ncc " + std::to_string(cc_) + "\n";
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
