// Shared test helpers: error expectations and instruction-set selection.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/error.h"

namespace fixq::test {

// Expects f to throw fixq::Error whose message contains every one of keys.
template <class F, class... Keys>
void expect_error(F&& f, const Keys&... keys) {
  try {
    f();
    ADD_FAILURE() << "no fixq::Error was thrown";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& key : {std::string(keys)...})
      EXPECT_NE(msg.find(key), std::string::npos) << "'" << key << "' not in: " << msg;
  }
}

// The instruction sets this CPU can run, scalar first.
inline std::vector<Isa> supported_isas() {
  std::vector<Isa> v;
  for (Isa i : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
    if (cpu_supports(i)) v.push_back(i);
  return v;
}

// Restores the default instruction set when it goes out of scope, even on failure.
struct IsaGuard {
  IsaGuard() = default;
  IsaGuard(const IsaGuard&) = delete;
  IsaGuard& operator=(const IsaGuard&) = delete;
  ~IsaGuard() { set_isa_override(std::nullopt); }
};

}  // namespace fixq::test
