// Shared test helper: error expectations.
#pragma once

#include <gtest/gtest.h>

#include <string>

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

}  // namespace fixq::test
