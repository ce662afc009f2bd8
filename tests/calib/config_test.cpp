// Calibration method names and ObserverConfig validation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "fixq/calib.h"
#include "fixq/error.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

TEST(CalibMethod, NamesRoundTrip) {
  EXPECT_EQ(to_string(CalibMethod::MinMax), "minmax");
  EXPECT_EQ(to_string(CalibMethod::Ema), "ema");
  EXPECT_EQ(to_string(CalibMethod::Percentile), "percentile");
  EXPECT_EQ(to_string(CalibMethod::Mse), "mse");
  for (CalibMethod m : {CalibMethod::MinMax, CalibMethod::Ema, CalibMethod::Percentile, CalibMethod::Mse})
    EXPECT_EQ(parse_calib_method(to_string(m)), m);
}

TEST(CalibMethod, ParseRejectsUnknownNames) {
  for (const char* name : {"", "MinMax", "kl", "mse ", "percentiles"}) {
    EXPECT_THROW(parse_calib_method(name), Error);
    expect_error([&] { parse_calib_method(name); }, "unknown calibration method");
  }
}

TEST(ObserverConfig, DefaultsAreValid) {
  const ObserverConfig c;
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(c.ema_decay, 0.9);
  EXPECT_EQ(c.percentile, 99.99);
  EXPECT_EQ(c.bins, 2048);
}

TEST(ObserverConfig, BoundariesAreAccepted) {
  ObserverConfig c;
  c.ema_decay = 0.5;
  c.percentile = 100.0;
  c.bins = 64;
  EXPECT_NO_THROW(c.validate());
  c.percentile = std::nextafter(50.0, 100.0);
  c.bins = 1 << 20;
  EXPECT_NO_THROW(c.validate());
}

TEST(ObserverConfig, BadValuesThrowNamingTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double d : {0.0, 1.0, -0.1, 1.5, nan}) {
    ObserverConfig c;
    c.ema_decay = d;
    EXPECT_THROW(c.validate(), Error);
    expect_error([&] { c.validate(); }, "ema_decay");
    expect_error([&] { Observer o(c); }, "ema_decay");  // the constructor validates
  }
  for (double p : {50.0, 10.0, 100.5, nan}) {
    ObserverConfig c;
    c.percentile = p;
    EXPECT_THROW(c.validate(), Error);
    expect_error([&] { Observer o(c); }, "percentile");
  }
  for (int b : {63, 0, -5, (1 << 20) + 1}) {
    ObserverConfig c;
    c.bins = b;
    EXPECT_THROW(c.validate(), Error);
    expect_error([&] { Observer o(c); }, "bins");
  }
}

TEST(ObserverConfig, UnusedFieldsAreCheckedToo) {
  ObserverConfig c;
  c.method = CalibMethod::MinMax;
  c.bins = 3;
  expect_error([&] { Observer o(c); }, "bins");
}

}  // namespace
}  // namespace fixq
