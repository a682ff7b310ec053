// Shared by the verify_*_test.cpp files: the lockstep binary run as a user runs it, and the
// VITS models the verification tools are proven on, written once per test process.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/onnx_export.h"
#include "test_util.h"
#include "vits.h"

namespace lockstep::verify_test {

namespace fs = std::filesystem;

struct CliResult {
  int status = -1;
  std::string out, err;
  // The text after "PREFIX" on the first stdout line that starts with it.
  std::string line(const std::string& prefix) const {
    std::stringstream ss(out);
    for (std::string l; std::getline(ss, l);)
      if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
    return "";
  }
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One folder per test process, removed when the process ends.
inline fs::path scratch_dir() {
  struct Dir {
    fs::path path = fs::temp_directory_path() / ("lockstep_verify_" + std::to_string(getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      if (!std::getenv("LOCKSTEP_KEEP_TEST_DIRS")) fs::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path;
}

// Runs `bash -c CMD` with stdout and stderr captured apart.
inline CliResult shell(const std::string& cmd) {
  static int n = 0;
  fs::path out = scratch_dir() / ("out" + std::to_string(++n)), err = scratch_dir() / ("err" + std::to_string(n));
  int raw = std::system(("bash -c " + shell_quote(cmd) + " >" + shell_quote(out) + " 2>" + shell_quote(err)).c_str());
  CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

inline CliResult lockstep(const std::vector<std::string>& args) {
  std::string cmd = shell_quote(lockstep::testing::lockstep_binary());
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  return shell(cmd);
}

// The 174-node graph: the flow cut at /flow/flows.0/enc/in_layers.1/Conv.
inline Graph graph174() { return vits::build_cut(vits::Config{}, {"/flow/flows.0/enc/in_layers.1/Conv"}); }

// Its prefix of 170 nodes: the cut at /flow/flows.0/enc/res_skip_layers.0/Conv.
inline Graph graph170() { return vits::build_cut(vits::Config{}, {"/flow/flows.0/enc/res_skip_layers.0/Conv"}); }

// The same cut in the first coupling layer to run: 15 nodes, compiled in a fraction of a second.
inline Graph graph15() { return vits::build_cut(vits::Config{}, {"/flow/flows.6/enc/in_layers.1/Conv"}); }

// The full generated decoder (flow + HiFi-GAN) with 128 upsample channels, at T = 128 frames
// to keep the float64 reference and each run short (compile time does not depend on T).
inline Graph decoder128() {
  vits::Config c;
  c.part = vits::Part::decoder;
  c.dec.upsample_initial = 128;
  c.T = 128;
  return vits::build(c);
}

// Writes a model once per process and returns its path.
inline std::string model_file(const std::string& name) {
  static std::map<std::string, std::string> written;
  if (auto it = written.find(name); it != written.end()) return it->second;
  fs::path p = scratch_dir() / (name + ".onnx");
  save_onnx(name == "decoder128" ? decoder128()
            : name == "g15"      ? graph15()
            : name == "g170"     ? graph170()
                                 : graph174(),
            p.string());
  return written[name] = p.string();
}

}  // namespace lockstep::verify_test
