// fixq/error.h — the one exception type fixq throws for bad input.
//
// Every public function that can be handed bad input (wrong shapes, NaN where not
// allowed, absurd parameters, corrupt files) throws fixq::Error with a one-line message
// that names what is wrong and, where it helps, what to do. fixq never aborts on bad
// input and never returns silent garbage.
#pragma once

#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>

namespace fixq {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The fixq::Error of an operating-system failure on a file (open, stat, read, write, fsync,
// rename), as opposed to bad data in a file that could be read: sys_errno() is the errno of
// the failed call (0 where the C++ library did not report one). Python raises it as OSError
// (FileNotFoundError, PermissionError, ... by errno); bad data stays a ValueError.
class IoError : public Error {
 public:
  IoError(const std::string& message, int sys_errno) : Error(message), sys_errno_(sys_errno) {}
  int sys_errno() const noexcept { return sys_errno_; }

 private:
  int sys_errno_;
};

namespace detail {
// Concatenates anything streamable into one message.
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

// Throws fixq::Error whose message is the concatenation of args.
template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(detail::cat(args...));
}

// Throws fixq::IoError for errno value sys_errno: the concatenated message, then ": " and
// strerror(sys_errno) when sys_errno is not 0. Pass errno straight from the failed call.
template <class... Args>
[[noreturn]] void fail_io(int sys_errno, const Args&... args) {
  std::string message = detail::cat(args...);
  if (sys_errno != 0) message += std::string(": ") + std::strerror(sys_errno);
  throw IoError(message, sys_errno);
}

// Throws fixq::Error with the concatenated message unless cond holds. The arguments are
// evaluated before the call: where building one costs (shape_str, to_string) write
// `if (!cond) fail(...)` instead, so hot paths pay nothing for their messages.
template <class... Args>
void require(bool cond, const Args&... args) {
  if (!cond) fail(args...);
}

}  // namespace fixq
