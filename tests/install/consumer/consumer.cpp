// A program built against an installed fixq (tests/install/consumer_test.sh): it includes
// the public headers from the install prefix and checks the library's results against
// independent computations written here, so that a broken install fails visibly.
//   consumer [MODEL.onnx]   with a model, also reads its GRU through the library's ONNX
//                           importer (the part that links protobuf and libonnx_proto) and
//                           prints its shape, which the test compares with python's onnx.
#include <cstdint>
#include <cstdio>
#include <string>
#include <random>
#include <vector>

#include "fixq/arith.h"
#include "fixq/error.h"
#include "fixq/gemm.h"
#include "fixq/gru.h"
#include "fixq/quant.h"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // u8 x s8 -> s32 GEMM of a ragged shape, against the plain triple loop: exact integers.
  constexpr int64_t M = 7, N = 13, K = 29;
  std::mt19937 rng(7);
  std::vector<uint8_t> a(M * K);
  std::vector<int8_t> b(N * K);
  for (auto& x : a) x = static_cast<uint8_t>(rng());
  for (auto& x : b) x = static_cast<int8_t>(rng());
  const fixq::PackedB pb = fixq::PackedB::pack(fixq::MatrixView{fixq::IntType::S8, b.data(), N, K, K});
  std::vector<int32_t> c(M * N);
  fixq::gemm_s32(fixq::MatrixView{fixq::IntType::U8, a.data(), M, K, K}, pb, c.data(), N);
  bool exact = true;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += int64_t{a[m * K + k]} * b[n * K + k];
      exact = exact && c[m * N + n] == sum;
    }
  check(exact, "gemm_s32 differs from the triple loop");

  // The rounding rule of a rescale by 2^-n: half up, arithmetic shift.
  check(fixq::rounding_shift_right_half_up(5, 1) == 3 && fixq::rounding_shift_right_half_up(-5, 1) == -2 &&
            fixq::rounding_shift_right_half_up(-6, 2) == -1,
        "rounding_shift_right_half_up is not round-half-up");
  // Float to integer: half to even.
  check(fixq::round_half_even(2.5) == 2.0 && fixq::round_half_even(-3.5) == -4.0, "round_half_even");

  // Errors cross the library boundary as fixq::Error.
  bool threw = false;
  try {
    fixq::PackedB::pack(fixq::MatrixView{fixq::IntType::S8, nullptr, N, K, K});
  } catch (const fixq::Error&) {
    threw = true;
  }
  check(threw, "PackedB::pack(nullptr) did not throw fixq::Error");

  // ONNX import: a static link needs protobuf and libonnx_proto on the link line, a shared
  // one loads them through libfixq.so.
  if (argc > 1) {
    try {
      const fixq::GruModel model = fixq::load_gru_onnx(argv[1]);
      std::printf("onnx: input %lld hidden %lld layers %lld directions %d\n", static_cast<long long>(model.input_size),
                  static_cast<long long>(model.hidden_size), static_cast<long long>(model.num_layers),
                  model.directions());
    } catch (const fixq::Error& e) {
      check(false, (std::string("load_gru_onnx: ") + e.what()).c_str());
    }
  }

  if (failures == 0) std::printf("consumer: ok (gemm %lldx%lldx%lld exact, rounding rules, errors)\n",
                                 static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K));
  return failures == 0 ? 0 : 1;
}
