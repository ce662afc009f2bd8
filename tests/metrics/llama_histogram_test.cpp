// The quantize-stats histogram, quantiles and report line, checked on error
// distributions built to land in known buckets (bucket k holds |x-y| in
// [k, k+1) * 0.0002, the last bucket everything from 0.0298 on).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/metrics.h"

namespace fixq {
namespace {

// Adds `count` pairs (0, err): each contributes |x-y| = float(err).
void add_errors(ErrorStats& s, float err, size_t count) {
  const std::vector<float> zeros(count, 0.0f), approx(count, err);
  s.add(zeros.data(), approx.data(), count);
}

// The middle of bucket k, far from both edges even after rounding to float.
float bucket_center(int k) { return static_cast<float>((k + 0.5) * 0.0002); }

// 50 errors in bucket 2, 45 in bucket 5, 5 of size 1 (beyond the range: last bucket).
ErrorStats three_bucket_stats() {
  ErrorStats s;
  add_errors(s, bucket_center(2), 50);
  add_errors(s, bucket_center(5), 45);
  add_errors(s, 1.0f, 5);
  return s;
}

TEST(LlamaHistogram, ErrorsLandInTheirBuckets) {
  ErrorStats s;
  add_errors(s, 0.0f, 1);
  add_errors(s, bucket_center(0), 2);
  add_errors(s, bucket_center(2), 3);
  add_errors(s, bucket_center(148), 4);
  add_errors(s, bucket_center(149), 5);
  add_errors(s, 0.03f, 6);  // float 0.03 is just below 0.03: bucket 149 either way
  add_errors(s, 1.0f, 7);
  add_errors(s, 3e38f, 8);  // huge: clamped before any integer conversion
  ErrorStats::Histogram want{};
  want[0] = 3;
  want[2] = 3;
  want[148] = 4;
  want[149] = 5 + 6 + 7 + 8;
  EXPECT_EQ(s.histogram(), want);
  // The sign of the error does not matter.
  ErrorStats neg;
  const float ref = bucket_center(7), approx = 0.0f;
  neg.add(&ref, &approx, 1);
  EXPECT_EQ(neg.histogram()[7], 1u);
}

TEST(LlamaHistogram, QuantileIsTheUpperEdgeOfTheFirstBucketReachingTheCount) {
  const ErrorStats s = three_bucket_stats();
  // The running count reaches 50 = 100 * 0.5 exactly at bucket 2: ">=" stops there.
  EXPECT_DOUBLE_EQ(s.quantile(0.5), 0.0006);
  // 50 + 45 = 95 reaches 100 * 0.95 at bucket 5.
  EXPECT_DOUBLE_EQ(s.quantile(0.95), 0.0012);
  EXPECT_DOUBLE_EQ(s.quantile(0.96), 0.03);  // the last bucket's edge, not infinity
  EXPECT_DOUBLE_EQ(s.quantile(1.0), 0.03);
  // q = 0 is reached at bucket 0 whether or not it holds anything.
  EXPECT_DOUBLE_EQ(s.quantile(0.0), 0.0002);
  // One error fewer in bucket 2 moves the median on to bucket 5.
  ErrorStats t;
  add_errors(t, bucket_center(2), 49);
  add_errors(t, bucket_center(5), 51);
  EXPECT_DOUBLE_EQ(t.quantile(0.5), 0.0012);
}

TEST(LlamaHistogram, QuantileOutsideZeroOneIsAnError) {
  const ErrorStats s = three_bucket_stats();
  for (double q : {-0.01, 1.01, std::numeric_limits<double>::quiet_NaN()}) {
    try {
      (void)s.quantile(q);
      ADD_FAILURE() << "quantile(" << q << ") did not throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("outside [0, 1]"), std::string::npos) << e.what();
    }
  }
}

TEST(LlamaHistogram, LlamaLineIsByteExact) {
  // rmse = sqrt((50 * 0.0005^2 + 45 * 0.0011^2 + 5) / 100) with the float errors.
  EXPECT_EQ(three_bucket_stats().llama_line("q4_0"),
            "q4_0" + std::string(46, ' ') +
                ": rmse 0.22360829, maxerr 1.00000000, 95pct<0.0012, median<0.0006");
  // d = {0, 0, 0, 0.5}: rmse 0.25; three errors in bucket 0 and one in the last.
  const std::vector<float> x = {1, 2, 3, 4}, y = {1, 2, 3, 4.5f};
  ErrorStats s;
  s.add(x.data(), y.data(), 4);
  EXPECT_EQ(s.llama_line("q8_0"),
            "q8_0" + std::string(46, ' ') +
                ": rmse 0.25000000, maxerr 0.50000000, 95pct<0.0300, median<0.0002");
  // Like printf's %-50s, a longer name is printed whole, not cut.
  const std::string long_name(60, 'n');
  EXPECT_EQ(s.llama_line(long_name),
            long_name + ": rmse 0.25000000, maxerr 0.50000000, 95pct<0.0300, median<0.0002");
}

TEST(LlamaHistogram, SummaryLineIsByteExact) {
  // x = {1, -2, 3, 4}, y = {1.5, -2, 2, 4}: nmse 1.25/30, mae 0.375,
  // cosine 27.5/sqrt(787.5) = 0.97995789, sqnr 10 log10(24) = 13.80 dB.
  const std::vector<float> x = {1, -2, 3, 4}, y = {1.5f, -2, 2, 4};
  ErrorStats s;
  s.add(x.data(), y.data(), 4);
  EXPECT_EQ(s.summary(),
            "n 4, nmse 4.166667e-02, mae 0.37500000, cosine 0.97995789, sqnr 13.80 dB");
  ErrorStats exact;
  exact.add(x.data(), x.data(), 4);
  EXPECT_EQ(exact.summary(),
            "n 4, nmse 0.000000e+00, mae 0.00000000, cosine 1.00000000, sqnr inf dB");
}

}  // namespace
}  // namespace fixq
