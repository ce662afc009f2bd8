// The demos' data folders and their PyTorch baselines (demo_data.h).
#include "cli/demo_data.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "fixq/error.h"

extern char** environ;

namespace fixq::cli {

namespace fs = std::filesystem;

namespace {

// The folder this executable is in (the build's bin/, or the install prefix's).
fs::path own_folder() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) fail("cannot find the fixq executable's folder (/proc/self/exe: ", ec.message(), ")");
  return exe.parent_path();
}

// Runs argv with `env` and returns its exit status, stdout and stderr together in *out.
int run_captured(const std::vector<std::string>& argv, const std::vector<std::string>& env, std::string* out) {
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) fail("cannot run ", argv[0], ": pipe: ", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fd[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fd[0]);
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fd[1]);
  if (spawned != 0) {
    ::close(pipe_fd[0]);
    *out = argv[0] + ": " + std::strerror(spawned);
    return 127;
  }
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipe_fd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out->append(buf, static_cast<size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "no output" : line;
}

}  // namespace

std::string demo_data_dir(const std::string& model, const std::string& override) {
  const fs::path dir = override.empty() ? own_folder() / FIXQ_DATA_FROM_BIN / model : fs::path(override);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    fail("the ", model, " demo's files are not in ", dir.string(),
         override.empty() ? " (fixq installs them under share/fixq/ next to its bin/); pass --data DIR" : "");
  return dir.lexically_normal().string();
}

std::optional<nlohmann::json> torch_baseline(const std::string& model, const std::string& data_dir, int repeats,
                                             std::string* why) {
  const char* chosen = std::getenv("FIXQ_PYTHON");
  const std::string python = chosen != nullptr && *chosen != '\0' ? chosen : FIXQ_PYTHON_EXECUTABLE;
  std::vector<std::string> env;
  std::string pythonpath;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PYTHONPATH=", 11) == 0) {
      pythonpath = *e + 11;
    } else {
      env.emplace_back(*e);
    }
  }
  // A build tree's own package comes first, as `PYTHONPATH=<build>/python` would put it.
  const fs::path built = own_folder() / ".." / "python";
  std::error_code ec;
  if (fs::exists(built / "fixq" / "baselines" / "__main__.py", ec))
    pythonpath = built.lexically_normal().string() + (pythonpath.empty() ? "" : ":" + pythonpath);
  if (!pythonpath.empty()) env.push_back("PYTHONPATH=" + pythonpath);
  std::string out;
  const int status = run_captured({python, "-m", "fixq.baselines", model, "--data", data_dir, "--repeats",
                                   std::to_string(repeats)},
                                  env, &out);
  if (status != 0) {
    *why = first_line(out);  // Python's own messages name the interpreter
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception&) {
    *why = python + " -m fixq.baselines " + model + " printed no JSON: " + first_line(out);
    return std::nullopt;
  }
}

}  // namespace fixq::cli
