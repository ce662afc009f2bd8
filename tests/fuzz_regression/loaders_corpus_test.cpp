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
#include <string_view>
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

// The crash-* reproducers of fixed findings, each with what its loader must now say (the
// message after the loader's "<loader>: <path>: " prefix): a fix that only turned the fault
// into some other error, or an error that stopped naming the fault, fails here.
struct Finding {
  std::string_view target;
  std::string_view file;     // in tests/fuzz/corpus/<target>/
  std::string_view message;  // the whole message ends with this
};
constexpr Finding kFindings[] = {
    // A .bin claiming bf16 values [2, 3617348584308239977]: 2 n bytes was formed in int64.
    {"encoded", "crash-bf16-byte-count-overflow.bin",
     "the byte count of bf16 values of shape [2, 3617348584308239977] overflows int64 (7234697168616479954 * 2)"},
    // A Transpose between two GRUs whose perm attribute lost its name: the layer-join test
    // read the node's input -1 (protobuf's CHECK). Without perm it is no join.
    {"onnx_gru", "crash-transpose-perm-renamed.onnx",
     "the model holds 2 separate GRUs; pick one with --prefix (Python: prefix=): '' (GRU node '/GRU', 1 layer), "
     "'' (GRU node '/GRU_1', 1 layer)"},
};

TEST(FuzzFindings, EachIsAnErrorNamingTheFault) {
  for (const Finding& f : kFindings) {
    const fs::path file = fs::path(FIXQ_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / std::string(f.target) / std::string(f.file);
    ASSERT_TRUE(fs::is_regular_file(file)) << file;
    try {
      fixq::fuzz::find_target(f.target).load(file.string());
      ADD_FAILURE() << file << " loaded";
    } catch (const fixq::Error& e) {
      EXPECT_TRUE(std::string_view(e.what()).ends_with(f.message)) << file << ": " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fuzz, LoadersCorpus, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<Target>& info) { return std::string(info.param.name); });

}  // namespace
