// Runs a program with an argument vector: no shell, so no path or name is ever parsed as shell
// syntax. Its stdout and stderr are captured together.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace lockstep {

struct ProcessResult {
  int exit_code = -1;  // -1 when it did not exit normally (signal)
  std::string output;  // stdout and stderr, interleaved
};

// argv[0] is looked up on PATH. Throws Error when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv);

// "a b c" split at spaces (for LOCKSTEP_CXX="ccache g++" and the like).
std::vector<std::string> split_words(const std::string& s);

// `argv` joined by spaces, for messages.
std::string spelled(const std::vector<std::string>& argv);

// The system C++ compiler the host targets build with: $LOCKSTEP_CXX in words, else c++.
std::vector<std::string> system_cxx();

// Its --version text, asked once a process. Throws Error saying that `target` needs a C++
// compiler when none runs.
const std::string& system_cxx_version(const std::string& target);

// The cores this process may run on (its affinity mask), at least 1.
int available_cores();

// Runs job(0) .. job(n - 1), each on a thread of its own, and waits for all; then rethrows the
// first failure in job order. No exception escapes a thread (that would end the process).
void run_on_threads(size_t n, const std::function<void(size_t)>& job);

}  // namespace lockstep
