// The recurrence's partition and shared-memory layout (recurrence_plan.h), on the host:
// every hidden unit in exactly one block, every block's pieces inside its shared memory and
// apart from each other, the persistent form exactly where the R slice fits.
#include <gtest/gtest.h>

#include <vector>

#include "cuda/gemm_args.h"
#include "cuda/gpu_test_util.h"
#include "cuda/recurrence_plan.h"
#include "support/expect.h"

namespace fixq::cuda::detail {
namespace {

// An H100's limits: 132 multiprocessors, 227 KiB of shared memory per block.
constexpr DeviceLimits kH100{132, 232448, true};

RecurrenceShape shape(int64_t H, int64_t B, int bytes) { return {H, B, bytes, bytes, padded_b_stride(H), bytes == 1}; }

TEST(RecurrencePlan, EveryUnitInExactlyOneBlockAndTheLayoutFits) {
  for (int64_t H : {1, 2, 7, 24, 131, 132, 133, 256, 520, 1000, 1024, 2048, 4096})
    for (int64_t B : {1, 3, 17, 64, 1024})
      for (int bytes : {1, 2})
        for (bool allow : {true, false}) {
          const RecurrencePlan p = plan_recurrence(shape(H, B, bytes), kH100, allow);
          const RecurrenceLayout& l = p.layout;
          const std::string what = "H=" + std::to_string(H) + " B=" + std::to_string(B) + " bytes=" + std::to_string(bytes);
          ASSERT_LE(l.blocks, kH100.multiprocessors) << what;  // one wave: every block resident
          std::vector<int> owner(static_cast<size_t>(H), 0);
          for (int64_t b = 0; b < l.blocks; ++b)
            for (int64_t u = b * l.units_per_block; u < std::min(H, (b + 1) * l.units_per_block); ++u) ++owner[static_cast<size_t>(u)];
          for (int64_t j = 0; j < H; ++j) ASSERT_EQ(owner[static_cast<size_t>(j)], 1) << what << " unit " << j;
          ASSERT_LT((l.blocks - 1) * l.units_per_block, H) << what;  // no empty block
          ASSERT_GE(l.batch_chunk, 1) << what;
          ASSERT_LE(l.batch_chunk, B) << what;
          // The R slice, then the staged states, then the products: in order, 16-byte aligned, inside.
          const int64_t slice = 3 * l.units_per_block * l.r_row_bytes;
          EXPECT_EQ(l.r_bytes, l.persistent ? slice : 0) << what;
          EXPECT_EQ(l.h_offset, l.r_bytes) << what;
          EXPECT_GE(l.r_row_bytes, padded_b_stride(H) * bytes) << what;
          EXPECT_EQ(l.r_row_bytes % 16, 0) << what;  // the slice's rows are copied 16 bytes at a time
          EXPECT_GE(l.h_row_bytes, state_stride(H) * bytes) << what;
          if (bytes == 1) {  // mma fragments: rows g = 0..7 at 16 mod 32 bytes apart, words t = 0..3 beside
            EXPECT_EQ(l.h_row_bytes % 32, 16) << what;
            EXPECT_EQ(l.r_row_bytes % 32, 16) << what;
            EXPECT_GE(l.h_row_bytes, (H + 31) / 32 * 32) << what;  // whole k-steps inside the row
            std::vector<int> bank(32, 0);
            for (int g = 0; g < 8; ++g)
              for (int t = 0; t < 4; ++t) ++bank[static_cast<size_t>((g * l.h_row_bytes / 4 + t) % 32)];
            for (int b = 0; b < 32; ++b) EXPECT_EQ(bank[static_cast<size_t>(b)], 1) << what << " bank " << b;
          } else {  // one word per lane down 32 rows: an odd word stride
            EXPECT_EQ(l.h_row_bytes % 4, 0) << what;
            EXPECT_EQ(l.h_row_bytes / 4 % 2, 1) << what;
          }
          EXPECT_GE(l.rh_offset - l.h_offset, l.batch_chunk * l.h_row_bytes) << what;
          EXPECT_GE(l.rh_stride, 3 * l.units_per_block) << what;
          EXPECT_EQ(l.shared_bytes, l.rh_offset + l.batch_chunk * 4 * l.rh_stride) << what;
          EXPECT_LE(l.shared_bytes, kH100.shared_per_block) << what;
          EXPECT_EQ(l.h_offset % 16, 0) << what;
          EXPECT_EQ(l.rh_offset % 16, 0) << what;
          // Persistent exactly where allowed and the slice plus one staged sequence fit.
          const int64_t one = l.h_row_bytes + 4 * l.rh_stride + 16;
          EXPECT_EQ(l.persistent, allow && slice + one <= kH100.shared_per_block) << what << ": " << p.why;
          EXPECT_FALSE(p.why.empty()) << what;
        }
}

TEST(RecurrencePlan, TheIssuesFiguresHold) {
  // int8 R is 192 KiB at H = 256 and 3 MiB at H = 1024: spread over the 132 blocks, both
  // stay in shared memory for the whole sequence, at batch 1 and 64.
  for (int64_t B : {1, 64}) {
    EXPECT_TRUE(plan_recurrence(shape(256, B, 1), kH100, true).layout.persistent);
    EXPECT_TRUE(plan_recurrence(shape(1024, B, 1), kH100, true).layout.persistent);
  }
  // Past what shared memory holds (int16 R at H = 4096: 3 x 32 rows of 8 KiB per block) the
  // graph form takes over, and says why.
  const RecurrencePlan big = plan_recurrence(shape(4096, 1, 2), kH100, true);
  EXPECT_FALSE(big.layout.persistent);
  EXPECT_NE(big.why.find("do not fit"), std::string::npos) << big.why;
  EXPECT_NE(plan_recurrence(shape(256, 1, 1), {132, 232448, false}, true).why.find("cooperative"), std::string::npos);
}

// What the GPU tests read of a plan (kernels(): "cell c (B = b): <input>; recurrence: <why>")
// tells the forms apart, the fallbacks GpuGru takes at run time included, whose reasons name
// the persistent kernel (issue 47 §9: looking for "persistent" anywhere took them for it).
TEST(RecurrencePlan, EachDescriptionSaysItsForm) {
  auto line = [](const RecurrencePlan& p) { return "cell 0 (B = 1): input projection: ...; recurrence: " + p.why; };
  int persistent = 0, graph = 0;
  for (int64_t H : {24, 256, 1024, 4096})
    for (int bytes : {1, 2})
      for (const DeviceLimits& d : {kH100, DeviceLimits{132, 232448, false}, DeviceLimits{108, 166912, true}})
        for (bool allow : {true, false}) {
          const RecurrencePlan p = plan_recurrence(shape(H, 1, bytes), d, allow);
          EXPECT_EQ(cuda_test::says_persistent_recurrence(line(p)), p.layout.persistent) << line(p);
          EXPECT_EQ(cuda_test::says_graph_recurrence(line(p)), !p.layout.persistent) << line(p);
          (p.layout.persistent ? persistent : graph) += 1;
          for (const char* refusal : {kNotCoResident, kCooperativeRefused}) {
            const RecurrencePlan fallback = graph_instead(shape(H, 1, bytes), d, refusal);
            EXPECT_FALSE(fallback.layout.persistent);
            EXPECT_EQ(fallback.layout.r_bytes, 0);
            EXPECT_NE(fallback.why.find("persistent"), std::string::npos) << fallback.why;  // the trap
            EXPECT_NE(fallback.why.find(refusal), std::string::npos) << fallback.why;
            EXPECT_FALSE(cuda_test::says_persistent_recurrence(line(fallback))) << line(fallback);
            EXPECT_TRUE(cuda_test::says_graph_recurrence(line(fallback))) << line(fallback);
            // The graph form's layout: the plan with the persistent form disallowed.
            const RecurrenceLayout want = plan_recurrence(shape(H, 1, bytes), d, false).layout;
            EXPECT_EQ(fallback.layout.shared_bytes, want.shared_bytes);
            EXPECT_EQ(fallback.layout.batch_chunk, want.batch_chunk);
          }
        }
  EXPECT_GT(persistent, 0);
  EXPECT_GT(graph, 0);
}

TEST(RecurrencePlan, AStateRowLargerThanSharedMemoryIsAClearError) {
  test::expect_error([] { plan_recurrence(shape(200000, 1, 2), kH100, true); }, "hidden size 200000 is too large");
}

}  // namespace
}  // namespace fixq::cuda::detail
