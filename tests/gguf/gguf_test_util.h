// Helpers shared by the gguf tests: the golden vectors of tests/vectors/ggml and a
// scope that forces an instruction set (the project-wide helpers come from
// support/expect.h).
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "support/kernel_paths.h"
#include "fixq/gguf.h"
#include "support/expect.h"

namespace fixq::gguf::test_util {

using fixq::test::expect_error;

inline std::string golden_dir() { return std::string(FIXQ_VECTORS_DIR) + "/ggml"; }

// The bytes of a golden file. A missing file (or a missing vectors folder) is a test
// failure, never a skip: the golden vectors are the acceptance criterion.
inline std::vector<std::byte> golden_bytes(const std::string& name) {
  const std::string path = golden_dir() + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "golden vector " << path << " is missing (the folder " << golden_dir()
                  << " must hold ggml's golden vectors; see its README.md)";
    return {};
  }
  const std::string s{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

inline std::vector<float> golden_floats(const std::string& name) {
  const std::vector<std::byte> b = golden_bytes(name);
  std::vector<float> v(b.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(float));
  return v;
}

// Lines of a golden .tsv file split at tabs, header line dropped.
inline std::vector<std::vector<std::string>> golden_tsv(const std::string& name) {
  const std::vector<std::byte> b = golden_bytes(name);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool header = true;
  for (std::size_t i = 0; i <= b.size(); ++i) {
    const char c = i < b.size() ? static_cast<char>(b[i]) : '\n';
    if (c != '\n') {
      line += c;
      continue;
    }
    if (!line.empty() && !header) {
      std::vector<std::string> fields(1);
      for (char ch : line) {
        if (ch == '\t')
          fields.emplace_back();
        else
          fields.back() += ch;
      }
      rows.push_back(fields);
    }
    header = false;
    line.clear();
  }
  return rows;
}


inline uint32_t bits(float v) { return std::bit_cast<uint32_t>(v); }

}  // namespace fixq::gguf::test_util
