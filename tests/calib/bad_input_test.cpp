// Every bad input to an Observer throws fixq::Error with a message naming the problem,
// and leaves the observer as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fixq/calib.h"
#include "fixq/error.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

ObserverConfig config(CalibMethod m, bool per_channel = false, int axis = 0) {
  ObserverConfig c;
  c.method = m;
  c.per_channel = per_channel;
  c.axis = axis;
  return c;
}

QuantScheme per_channel(int axis) {
  QuantScheme s;
  s.granularity = Granularity::PerChannel;
  s.axis = axis;
  return s;
}

const CalibMethod kMethods[] = {CalibMethod::MinMax, CalibMethod::Ema, CalibMethod::Percentile,
                                CalibMethod::Mse};

TEST(ObserverBadInput, NonFiniteValuesNameTheirIndex) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (CalibMethod m : kMethods) {
    Observer obs(config(m));
    std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    x[7] = nan;
    EXPECT_THROW(obs.observe(x.data(), {3, 3}), Error);
    expect_error([&] { obs.observe(x.data(), {3, 3}); }, "element 7");
    expect_error([&] { obs.observe(x.data(), {3, 3}); }, "NaN");
    x[7] = 8;
    x[2] = inf;
    expect_error([&] { obs.observe(x.data(), {9}); }, "+Inf");
    x[2] = -inf;
    expect_error([&] { obs.observe(x.data(), {9}); }, "element 2");
    expect_error([&] { obs.observe(x.data(), {9}); }, "-Inf");
    EXPECT_EQ(obs.batches(), 0);  // nothing was accumulated
    expect_error([&] { obs.ranges(QuantScheme{}); }, "no data observed");
  }
}

TEST(ObserverBadInput, RejectedBatchLeavesStateUnchanged) {
  for (CalibMethod m : kMethods) {
    Observer obs(config(m, true, 1));
    const std::vector<float> good = {1, -2, 3, 4, 5, -6};
    obs.observe(good.data(), {3, 2});
    const std::vector<Range> before = obs.ranges(per_channel(1));
    std::vector<float> bad = {100, -200, 300, std::numeric_limits<float>::quiet_NaN()};
    EXPECT_THROW(obs.observe(bad.data(), {2, 2}), Error);
    EXPECT_EQ(obs.batches(), 1);
    const std::vector<Range> after = obs.ranges(per_channel(1));
    ASSERT_EQ(after.size(), before.size());
    for (size_t c = 0; c < after.size(); ++c) {
      EXPECT_EQ(after[c].min, before[c].min);
      EXPECT_EQ(after[c].max, before[c].max);
    }
  }
}

TEST(ObserverBadInput, EmptyTensor) {
  for (CalibMethod m : kMethods) {
    Observer obs(config(m, true, 1));
    const float x[] = {0};
    expect_error([&] { obs.observe(x, {0, 3}); }, "empty");
    expect_error([&] { obs.observe(x, {4, 0}); }, "empty");
  }
}

TEST(ObserverBadInput, NullData) {
  Observer obs(config(CalibMethod::MinMax));
  expect_error([&] { obs.observe(nullptr, {2}); }, "null");
}

TEST(ObserverBadInput, ChannelCountMismatch) {
  for (CalibMethod m : kMethods) {
    Observer obs(config(m, true, -1));
    const std::vector<float> x(12, 1.0f);
    obs.observe(x.data(), {4, 3});
    obs.observe(x.data(), {2, 3});  // other extents may change
    expect_error([&] { obs.observe(x.data(), {3, 4}); }, "channel count mismatch");
    expect_error([&] { obs.observe(x.data(), {2, 2, 3}); }, "rank");
    EXPECT_EQ(obs.batches(), 2);
  }
}

TEST(ObserverBadInput, AxisOutOfRange) {
  Observer obs(config(CalibMethod::MinMax, true, 2));
  const float x[] = {1, 2, 3, 4};
  expect_error([&] { obs.observe(x, {2, 2}); }, "axis 2");
  expect_error([&] { obs.observe(x, {}); }, "rank-0");
}

TEST(ObserverBadInput, RangesBeforeObserve) {
  for (CalibMethod m : kMethods) {
    Observer obs(config(m));
    EXPECT_THROW(obs.ranges(QuantScheme{}), Error);
    expect_error([&] { obs.ranges(QuantScheme{}); }, "no data observed");
  }
}

TEST(ObserverBadInput, TargetGranularityMustMatch) {
  const float x[] = {1, 2, 3, 4, 5, 6};
  Observer per_tensor(config(CalibMethod::MinMax));
  per_tensor.observe(x, {2, 3});
  expect_error([&] { per_tensor.ranges(per_channel(0)); }, "per-tensor");
  Observer channels(config(CalibMethod::MinMax, true, 1));
  channels.observe(x, {2, 3});
  expect_error([&] { channels.ranges(QuantScheme{}); }, "per-channel");
  expect_error([&] { channels.ranges(per_channel(0)); }, "axis");
  EXPECT_EQ(channels.ranges(per_channel(-1)).size(), 3u);  // the same axis, counted from the end
  QuantScheme bad_bits = per_channel(1);
  bad_bits.format.bits = 1;
  expect_error([&] { channels.ranges(bad_bits); }, "bits");
}

}  // namespace
}  // namespace fixq
