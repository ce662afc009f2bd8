// Helpers shared by the .npy tests: a scratch directory per test, raw file bytes, the
// golden files written by numpy, and checking thrown messages.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "fixq/error.h"
#include "support/expect.h"

namespace fixq::npy_test {

// A golden file of tests/io/data, made by make_golden.py with numpy.
inline std::string golden(const std::string& name) {
  return std::string(FIXQ_SOURCE_DIR) + "/tests/io/data/" + name;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

using test::expect_error;
using test::expect_io_error;

// A fresh, empty directory for the current test, removed afterwards.
class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("fixq_io_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
            std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Names of the files in the scratch directory, sorted, for spotting leftovers.
  std::string listing() const {
    std::string names;
    std::vector<std::string> sorted;
    for (const auto& entry : std::filesystem::directory_iterator(dir_))
      sorted.push_back(entry.path().filename().string());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& n : sorted) names += n + " ";
    return names;
  }

  std::filesystem::path dir_;
};

}  // namespace fixq::npy_test
