// Runs a real program for end-to-end tests: captures stdout and stderr
// together, and kills it if it outlives its deadline so no test can hang.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace mt::testing {

struct ProcessResult {
  int exit_code = -1;  // -1: killed at the deadline; 128+N: killed by signal N
  std::string output;
};

inline std::string BinaryPath(const std::string& relative) {
  return std::string(MT_BINARY_DIR) + "/" + relative;
}

inline ProcessResult RunProcess(const std::vector<std::string>& argv, double timeout_s = 120) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  ProcessResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  bool killed = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    pollfd p{fds[0], POLLIN, 0};
    poll(&p, 1, killed ? 1000 : static_cast<int>(std::min<long long>(left, 1000)));
    if (p.revents & (POLLIN | POLLHUP)) {
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      r.output.append(buf, static_cast<size_t>(n));
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (killed) r.exit_code = -1;
  else if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  return r;
}

}  // namespace mt::testing
