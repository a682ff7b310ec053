#include "core/process.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.h"

extern char** environ;

namespace lockstep {

ProcessResult run_process(const std::vector<std::string>& argv) {
  if (argv.empty()) throw InternalError("internal: run_process with no program");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw Error("cannot create a pipe: " + std::string(std::strerror(errno)));
  posix_spawn_file_actions_t acts;
  posix_spawn_file_actions_init(&acts);
  posix_spawn_file_actions_adddup2(&acts, fds[1], 1);
  posix_spawn_file_actions_adddup2(&acts, fds[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &acts, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&acts);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw Error("cannot run '" + argv[0] + "': " + std::strerror(rc));
  }
  ProcessResult r;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) r.output.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

int available_cores() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void run_on_threads(size_t n, const std::function<void(size_t)>& job) {
  std::vector<std::exception_ptr> failed(n);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < n; ++k)
    threads.emplace_back([&, k] {
      try {
        job(k);
      } catch (...) {
        failed[k] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

std::string spelled(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::vector<std::string> system_cxx() {
  const char* c = std::getenv("LOCKSTEP_CXX");
  std::vector<std::string> words = split_words(c && *c ? c : "c++");
  return words.empty() ? std::vector<std::string>{"c++"} : words;
}

const std::string& system_cxx_version(const std::string& target) {
  static const std::string text = [&] {  // a throw leaves it unset: the next call asks again
    std::vector<std::string> argv = system_cxx();
    argv.push_back("--version");
    ProcessResult r;
    try {
      r = run_process(argv);
    } catch (const Error& e) {
      throw Error("target '" + target + "' needs a C++ compiler: " + std::string(e.what()));
    }
    if (r.exit_code != 0)
      throw Error("target '" + target + "' needs a C++ compiler; '" + spelled(argv) + "' failed: " + r.output);
    return r.output;
  }();
  return text;
}

}  // namespace lockstep
