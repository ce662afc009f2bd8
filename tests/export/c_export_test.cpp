// fixq/export.h from C++: names, the API of the generated files, and their bytes against
// golden exports (tests/export/data/README.md): the generated C is a function of the model
// file alone, in any process, on any machine. Whether it computes the right integers is
// proven by compiling and running it (tests/cli/export_c_test.sh), on the host and on
// 32-bit ARM.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "fixq/error.h"
#include "fixq/export.h"
#include "fixq/qgru.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

const std::string kData = std::string(FIXQ_SOURCE_DIR) + "/tests/gru/data/";
const std::string kGolden = std::string(FIXQ_SOURCE_DIR) + "/tests/export/data/";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("golden export " + path + " is missing");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CName, IdentifiersPassAndEverythingElseIsAClearError) {
  for (const char* ok : {"kws", "vad2", "Denoiser_v3", "a", "gru_"}) EXPECT_NO_THROW(validate_c_name(ok)) << ok;
  expect_error([] { validate_c_name(""); }, "empty");
  expect_error([] { validate_c_name("2fast"); }, "'2fast' is not a C identifier", "character 1");
  expect_error([] { validate_c_name("kws-v2"); }, "'kws-v2' is not a C identifier", "character 4");
  expect_error([] { validate_c_name("k\xc3\xa9"); }, "is not a C identifier");
  expect_error([] { validate_c_name("_kws"); }, "reserved");
  expect_error([] { validate_c_name("static"); }, "'static' is a C (or C++) keyword");
  expect_error([] { validate_c_name("bool"); }, "keyword");
  expect_error([] { validate_c_name("class"); }, "keyword");
  expect_error([] { validate_c_name(std::string(33, 'a')); }, "longer than 32");
}

// The bytes the generator wrote for these models when the golden files were made: nothing
// in the output may depend on the process (addresses, uninitialized memory), the machine
// or the kernel path, and a change of the generator must be seen and reviewed.
TEST(CExport, WritesTheGoldenBytesOfEachModel) {
  for (const char* model : {"int16-2layer", "int8-bidi"}) {
    const QuantizedGru q = QuantizedGru::load(kGolden + model + ".fixq");
    CExportOptions o;
    o.name = "vad";
    o.source = std::string(model) + ".fixq";  // as `fixq gru export-c` names it
    const CExportFiles f = export_gru_c(q, o);
    EXPECT_EQ(f.header, read_text(kGolden + model + ".vad.h")) << model;
    EXPECT_EQ(f.source, read_text(kGolden + model + ".vad.c")) << model;
  }
}

TEST(CExport, NamedAsAsked) {
  const QuantizedGru q = QuantizedGru::load(kData + "v1-int16-2layer.fixq");
  CExportOptions o;
  o.name = "vad";
  const CExportFiles a = export_gru_c(q, o);
  for (const char* s : {"#define VAD_INPUT_SIZE 5\n", "#define VAD_HIDDEN_SIZE 6\n", "#define VAD_NUM_LAYERS 2\n",
                        "typedef int16_t vad_x_t;", "typedef int16_t vad_h_t;", "typedef struct vad_state {",
                        "void vad_reset(vad_state* s);", "void vad_step(vad_state* s, const vad_x_t* x_q, vad_h_t* h_q);",
                        "void vad_quantize_x(const float* x, vad_x_t* x_q);",
                        "void vad_dequantize_h(const vad_h_t* h_q, float* h);", "#ifndef VAD_NO_FLOAT"})
    EXPECT_NE(a.header.find(s), std::string::npos) << s;
  EXPECT_EQ(a.header.find('$'), std::string::npos) << "a placeholder was left";
  EXPECT_EQ(a.source.find('$'), std::string::npos) << "a placeholder was left";
  EXPECT_EQ(a.source.find("kws"), std::string::npos);
  // A bidirectional model runs whole sequences instead of streaming.
  const QuantizedGru bidi = QuantizedGru::load(kData + "v1-int8-bidi.fixq");
  const CExportFiles c = export_gru_c(bidi, o);
  EXPECT_NE(c.header.find("void vad_sequence(vad_state* s, const vad_x_t* x_q, size_t steps, vad_h_t* y_q, vad_x_t* scratch);"),
            std::string::npos);
  EXPECT_EQ(c.header.find("vad_step"), std::string::npos);
  EXPECT_NE(c.header.find("typedef int8_t vad_x_t;"), std::string::npos);
  // The tables are the stored ones: a model read back from its version 2 file exports the
  // same bytes.
  const std::string v2 = (std::filesystem::temp_directory_path() / ("fixq_export_" + std::to_string(getpid()) + ".fixq")).string();
  q.save(v2);
  const CExportFiles again = export_gru_c(QuantizedGru::load(v2), o);
  EXPECT_EQ(again.source, a.source);
  std::remove(v2.c_str());
  CExportOptions bad;
  bad.name = "int";
  expect_error([&] { export_gru_c(q, bad); }, "keyword");
}

TEST(CExport, WritesExactlyTwoFilesAndMakesItsDirectory) {
  const QuantizedGru q = QuantizedGru::load(kData + "v1-int8-bidi.fixq");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fixq_export_dir_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  CExportOptions o;
  o.name = "kws";
  write_gru_c(q, dir.string(), o);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_TRUE(e.path().filename() == "kws.h" || e.path().filename() == "kws.c") << e.path();
  }
  EXPECT_EQ(files, 2);
  // A directory that is not there yet is made, parents included; a file in its way is an error.
  write_gru_c(q, (dir / "new" / "mcu").string(), o);
  EXPECT_TRUE(std::filesystem::exists(dir / "new" / "mcu" / "kws.c"));
  std::ofstream(dir / "a_file") << "x";
  expect_error([&] { write_gru_c(q, (dir / "a_file").string(), o); }, "a_file exists and is not a directory");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fixq
