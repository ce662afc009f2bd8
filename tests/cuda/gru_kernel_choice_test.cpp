// What GpuGru chooses and reports, on the host: each model of the GPU tests gets the input
// projection those tests expect of it, so that a GPU run cannot fail on a wrong expectation
// (issue 47 §2 feared one for the int16 models: their W is 8-bit, GruQuantConfig::int16, so
// their 16-bit x is split into bytes as the tests expect; 16-bit W is another model).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/gru_model.h"
#include "cuda/gru_test_configs.h"

namespace fixq {
namespace {

using cuda::detail::InputProjection;

const char* name(InputProjection p) {
  switch (p) {
    case InputProjection::TensorCore: return "tensor cores";
    case InputProjection::SplitBytes: return "tensor cores on each byte of x";
    case InputProjection::Plain: break;
  }
  return "plain kernel";
}

TEST(GruKernelChoice, TheGpuTestsExpectWhatTheLibraryChooses) {
  int split = 0, plain = 0;
  for (const cuda_test::Config& c : cuda_test::configs()) {
    const QuantizedGru q = cuda_test::make_model(c, 7);  // the GPU test's model and seed
    const InputProjection want = cuda_test::expected_input_projection(q);
    split += want == InputProjection::SplitBytes;
    plain += want == InputProjection::Plain;
    const std::vector<cuda::detail::DeviceCell> cells = cuda::detail::host_cells(q);
    ASSERT_EQ(cells.size(), static_cast<size_t>(c.layers * (c.bidi ? 2 : 1))) << c.name;
    for (size_t i = 0; i < cells.size(); ++i)
      EXPECT_EQ(name(cuda::detail::input_projection(cells[i])), std::string(name(want))) << c.name << " cell " << i;
  }
  // The list reaches every kind: 16-bit x with 8-bit W (int16 and the int16-based mixed
  // models, mixed_x16) split into bytes, 16-bit W (mixed_w16) on the plain kernel.
  EXPECT_EQ(split, 6);
  EXPECT_EQ(plain, 1);
}

TEST(GruKernelChoice, EachKindsWordsAreItsOwn) {
  // The GPU test finds a kind's description in a kernels() line: none may contain another.
  const InputProjection kinds[] = {InputProjection::TensorCore, InputProjection::SplitBytes, InputProjection::Plain};
  for (InputProjection a : kinds)
    for (InputProjection b : kinds) {
      if (a == b) continue;
      const std::string text = cuda::detail::input_projection_description(a);
      EXPECT_EQ(text.find(cuda::detail::input_projection_description(b)), std::string::npos) << name(a) << " / " << name(b);
    }
}

}  // namespace
}  // namespace fixq
