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
#include <string_view>

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

// Old spellings. Every name fixq reads (a granularity, a scale kind, ...) has one spelling,
// the one it writes; some names it used to accept elsewhere (the command line's
// "tensor" for "per_tensor", say) are still read, and each such read calls the deprecation
// handler with a one-line note: "granularity 'tensor' is deprecated; write 'per_tensor'".
// The default handler prints "fixq: note: <note>" on stderr, once per note and process;
// the Python package installs one that issues a DeprecationWarning. Thread-safe.
using DeprecationHandler = void (*)(const std::string& note);
// Installs handler (nullptr: the default) and returns the previous one.
DeprecationHandler set_deprecation_handler(DeprecationHandler handler);
// Reports that `old_spelling` of `what` was read where `spelling` is now written.
void note_deprecated_spelling(std::string_view what, std::string_view old_spelling, std::string_view spelling);

}  // namespace fixq
