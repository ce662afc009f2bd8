// fixq/error.h — the one exception type fixq throws for bad input.
//
// Every public function that can be handed bad input (wrong shapes, NaN where not
// allowed, absurd parameters, corrupt files) throws fixq::Error with a one-line message
// that names what is wrong and, where it helps, what to do. fixq never aborts on bad
// input and never returns silent garbage.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace fixq {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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

// Throws fixq::Error with the concatenated message unless cond holds. The arguments are
// evaluated before the call: where building one costs (shape_str, to_string) write
// `if (!cond) fail(...)` instead, so hot paths pay nothing for their messages.
template <class... Args>
void require(bool cond, const Args&... args) {
  if (!cond) fail(args...);
}

}  // namespace fixq
