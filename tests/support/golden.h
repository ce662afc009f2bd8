// Shared test helper: the golden vectors of tests/vectors/ (each folder's README.md says
// where they come from). A missing or unreadable file throws, which fails the test: the
// golden vectors are part of the suite, never skipped.
#pragma once

#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace fixq::test {

// tests/vectors/<path> as values of T (little-endian host), e.g. "ggml/q4_0.bin".
template <class T>
std::vector<T> golden_values(const std::string& path) {
  const std::string full = std::string(FIXQ_VECTORS_DIR) + "/" + path;
  std::ifstream in(full, std::ios::binary);
  if (!in) throw std::runtime_error("golden vector file " + full + " is missing (see its folder's README.md)");
  const std::string s{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (s.empty() || s.size() % sizeof(T) != 0)
    throw std::runtime_error("golden vector file " + full + " is empty or not a whole number of values");
  std::vector<T> v(s.size() / sizeof(T));
  std::memcpy(v.data(), s.data(), s.size());
  return v;
}

}  // namespace fixq::test
