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

// Expects f to throw fixq::IoError (an operating-system failure on a file, which Python
// raises as OSError) carrying errno sys_errno, with every one of keys in its message.
template <class F, class... Keys>
void expect_io_error(F&& f, int sys_errno, const Keys&... keys) {
  try {
    f();
    ADD_FAILURE() << "no fixq::IoError was thrown";
  } catch (const IoError& e) {
    EXPECT_EQ(e.sys_errno(), sys_errno) << e.what();
    const std::string msg = e.what();
    for (const std::string& key : {std::string(keys)...})
      EXPECT_NE(msg.find(key), std::string::npos) << "'" << key << "' not in: " << msg;
  } catch (const Error& e) {
    ADD_FAILURE() << "a fixq::Error that is not an IoError: " << e.what();
  }
}

}  // namespace fixq::test
