// The deprecation notes of fixq/error.h: old spellings still read, reported to a handler.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "fixq/error.h"

namespace fixq {

namespace {

// Prints each note once per process: a loop over many inputs in an old spelling should
// say so once, not once per input.
void print_once(const std::string& note) {
  static std::mutex mutex;
  static std::set<std::string> printed;
  const std::lock_guard<std::mutex> lock(mutex);
  if (printed.insert(note).second) std::fprintf(stderr, "fixq: note: %s\n", note.c_str());
}

std::atomic<DeprecationHandler> g_handler{print_once};

}  // namespace

DeprecationHandler set_deprecation_handler(DeprecationHandler handler) {
  DeprecationHandler previous = g_handler.exchange(handler == nullptr ? print_once : handler);
  return previous == print_once ? nullptr : previous;
}

void note_deprecated_spelling(std::string_view what, std::string_view old_spelling, std::string_view spelling) {
  g_handler.load()(detail::cat(what, " '", old_spelling, "' is deprecated; write '", spelling, "'"));
}

}  // namespace fixq
