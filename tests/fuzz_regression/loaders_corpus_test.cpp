// Runs every file of the fuzz corpora (tests/fuzz/corpus/<target>/) through its loader
// exactly as the libFuzzer targets do (tests/fuzz/loader_targets.h): each must load or be
// refused with fixq::Error; any other exception fails here, and crashes, leaks or
// sanitizer reports fail the run (the ASan + UBSan build). Regrow the corpora with
// scripts/fuzz.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/loader_targets.h"

namespace {

namespace fs = std::filesystem;
using fixq::fuzz::kTargets;
using fixq::fuzz::Target;

class LoadersCorpus : public ::testing::TestWithParam<Target> {};

TEST_P(LoadersCorpus, EveryFileLoadsOrThrowsFixqError) {
  const Target& target = GetParam();
  const fs::path dir = fs::path(FIXQ_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / std::string(target.name);
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());  // the same order on every run
  ASSERT_FALSE(files.empty()) << "empty corpus " << dir;

  int loaded = 0;
  for (const fs::path& f : files) {
    try {
      loaded += fixq::fuzz::run_target(target, f.string()) ? 1 : 0;
    } catch (const std::exception& e) {
      ADD_FAILURE() << f << ": threw an exception that is not fixq::Error: " << e.what();
    } catch (...) {
      ADD_FAILURE() << f << ": threw a non-std exception";
    }
  }
  // The seeds include valid files, so a loader that refuses everything is caught too.
  EXPECT_GT(loaded, 0) << "no file of " << dir << " loaded";
}

INSTANTIATE_TEST_SUITE_P(Fuzz, LoadersCorpus, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<Target>& info) { return std::string(info.param.name); });

}  // namespace
