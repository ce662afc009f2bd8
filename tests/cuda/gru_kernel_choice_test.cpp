// What GpuGru chooses and reports, on the host: each model of the GPU tests gets the input
// projection those tests expect of it, so that a GPU run cannot fail on a wrong expectation
// (issue 47 §2 feared one for the int16 models: their W is 8-bit, GruQuantConfig::int16, so
// their 16-bit x is split into bytes as the tests expect; 16-bit W is another model), and a
// forward whose x and h0 both hold a non-finite value names the input the CPU names (§11: h0).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cuda/gru_model.h"
#include "cuda/gru_test_configs.h"
#include "fixq/error.h"

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

TEST(GruNonFinite, BothBadNamesH0AsTheCpuDoes) {
  using cuda::detail::first_non_finite;
  using cuda::detail::kAllFinite;
  using cuda::detail::NonFiniteInput;
  EXPECT_EQ(first_non_finite(kAllFinite, kAllFinite), NonFiniteInput::None);
  EXPECT_EQ(first_non_finite(29, kAllFinite), NonFiniteInput::X);
  EXPECT_EQ(first_non_finite(kAllFinite, 17), NonFiniteInput::H0);
  EXPECT_EQ(first_non_finite(0, 17), NonFiniteInput::H0);
  // The CPU's order, which the rule above copies: with a NaN in x and an infinity in h0,
  // QuantizedGru::forward names h0.
  const QuantizedGru q = cuda_test::quantized_model(gru_test::torch_init_model(6, 8, 1, false, 4),
                                                    GruQuantConfig::int8(ScaleKind::PowerOfTwo), 4);
  std::vector<float> x = cuda_test::normal(4 * 3 * 6, 1, 1.0f), h0 = cuda_test::normal(3 * 8, 2, 1.0f);
  x[29] = std::nanf("");
  h0[17] = std::numeric_limits<float>::infinity();
  GruRunOptions opt;
  opt.h0 = h0.data();
  try {
    q.forward(x.data(), Shape{4, 3, 6}, opt);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GRU h0 element 17 is not finite"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fixq
