// The table of formats: complete, in ggml order, consistent with itself and with the
// block layouts ggml documents (the expected values here are typed in from ggml-common.h).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "fixq/gguf.h"
#include "gguf_test_util.h"

namespace fixq::gguf {
namespace {

struct Expected {
  int ggml_type;
  int64_t block_elems;
  std::size_t block_bytes;
  const char* dot_with;  // "" for none
};

const std::map<std::string, Expected> kGgml = {
    {"q4_0", {2, 32, 18, "q8_0"}},    {"q4_1", {3, 32, 20, "q8_1"}},    {"q5_0", {6, 32, 22, "q8_0"}},
    {"q5_1", {7, 32, 24, "q8_1"}},    {"q8_0", {8, 32, 34, "q8_0"}},    {"q8_1", {9, 32, 36, ""}},
    {"q2_K", {10, 256, 84, "q8_K"}},  {"q3_K", {11, 256, 110, "q8_K"}}, {"q4_K", {12, 256, 144, "q8_K"}},
    {"q5_K", {13, 256, 176, "q8_K"}}, {"q6_K", {14, 256, 210, "q8_K"}}, {"q8_K", {15, 256, 292, ""}},
    {"iq4_nl", {20, 32, 18, "q8_0"}}, {"iq4_xs", {23, 256, 136, "q8_K"}}, {"tq1_0", {34, 256, 54, "q8_K"}},
    {"tq2_0", {35, 256, 66, "q8_K"}}, {"mxfp4", {39, 32, 17, "q8_0"}},    {"nvfp4", {40, 64, 36, "q8_0"}},
};

TEST(GgufTraits, EveryFormatOfTheIssueWithGgmlsLayout) {
  ASSERT_EQ(all_types().size(), kGgml.size());
  int previous_id = -1;
  for (const TypeTraits& t : all_types()) {
    const auto it = kGgml.find(std::string(t.name));
    ASSERT_NE(it, kGgml.end()) << t.name;
    EXPECT_EQ(t.ggml_type, it->second.ggml_type) << t.name;
    EXPECT_EQ(t.block_elems, it->second.block_elems) << t.name;
    EXPECT_EQ(t.block_bytes, it->second.block_bytes) << t.name;
    EXPECT_EQ(t.dot_type ? std::string(traits(*t.dot_type).name) : std::string(), it->second.dot_with) << t.name;
    EXPECT_GT(t.ggml_type, previous_id) << "all_types() is in ggml type-id order";
    previous_id = t.ggml_type;
    EXPECT_EQ(&traits(t.type), &t);
    EXPECT_EQ(&traits(t.name), &t);
    EXPECT_EQ(t.ggml_dequantize, t.type != Type::Q8_1);
  }
}

TEST(GgufTraits, SizesFollowTheBlocks) {
  for (const TypeTraits& t : all_types()) {
    for (int64_t blocks : {0, 1, 7}) {
      const int64_t n = blocks * t.block_elems;
      EXPECT_EQ(packed_size(t.type, n), static_cast<std::size_t>(blocks) * t.block_bytes);
      EXPECT_EQ(packed_elements(t.type, packed_size(t.type, n)), n);
      EXPECT_EQ(quantize(t.type, std::vector<float>(static_cast<std::size_t>(n), 1.0f)).size(), packed_size(t.type, n));
    }
  }
}

}  // namespace
}  // namespace fixq::gguf
