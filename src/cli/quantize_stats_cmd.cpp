// fixq quantize-stats: llama.cpp's quantize-stats over the float tensors of a .safetensors,
// .gguf or .npy file (a GGUF file's tensors already in a block format are listed, not
// measured). Each tensor is read once and round-tripped through every requested GGUF
// type in chunks of whole blocks (identical to whole-tensor packing, since blocks never
// straddle a chunk), so memory stays at one tensor plus small buffers. The report is
// llama.cpp's: per type one "rmse, maxerr, 95pct, median" line over all tensors (preceded,
// with --per-tensor, by a line per tensor named type::tensor), then nmse and SQNR.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/progress.h"
#include "fixq/bf16.h"
#include "fixq/error.h"
#include "fixq/gguf.h"
#include "fixq/gguf_file.h"
#include "fixq/metrics.h"
#include "fixq/npy.h"
#include "fixq/safetensors.h"

namespace fixq::cli {

namespace {

// The weight formats (bf16: fixq/bf16.h, round to nearest even, where the seed's list has
// it); q8_1 and q8_K are the activation side of the dot products.
const char* const kDefaultTypes =
    "q4_0,q4_1,q5_0,q5_1,q8_0,q2_K,q3_K,q4_K,q5_K,q6_K,iq4_nl,iq4_xs,bf16,tq1_0,tq2_0,mxfp4,nvfp4";
constexpr int64_t kChunk = 1 << 16;  // elements per round trip: a multiple of every block size

struct Options {
  std::string path;
  std::vector<std::string> types;
  bool per_tensor = false;
};

// The float tensors of a file, one at a time: a .npy (one tensor, <f4 or <f8), a
// safetensors file (F32, F16, BF16, F64; other dtypes are listed as skipped) or a GGUF
// file (f32, f16, bf16, f64; tensors already in a block format are listed as such).
class FloatTensors {
 public:
  explicit FloatTensors(const std::string& path) : path_(path) {
    char magic[6] = {};
    std::ifstream(path, std::ios::binary).read(magic, sizeof magic);
    if (std::string(magic, sizeof magic) == "\x93NUMPY") {
      npy_shape_.emplace();
      npy_values_ = load_npy_f32(path, &*npy_shape_);
      return;
    }
    if (std::string(magic, 4) == "GGUF") {
      gguf_.emplace(path);
      for (const gguf::TensorInfo& t : gguf_->tensors()) {
        if (t.type->is_float) {
          gguf_floats_.push_back(&t);
          continue;
        }
        std::vector<std::string>& list = t.type->is_int ? skipped_names_ : quantized_names_;
        list.push_back(gguf::printable(t.name) + " " + std::string(t.type->name));
      }
      return;
    }
    try {
      st_.emplace(path);
    } catch (const Error& e) {
      fail(path, " is neither a .npy file nor a readable safetensors file: ", e.what());
    }
    for (const SafetensorsTensorInfo& t : st_->tensors()) {
      const bool is_float = t.dtype == SafetensorsDtype::F32 || t.dtype == SafetensorsDtype::F16 ||
                            t.dtype == SafetensorsDtype::BF16 || t.dtype == SafetensorsDtype::F64;
      if (is_float)
        floats_.push_back(&t);
      else
        skipped_names_.push_back(t.name + " " + to_string(t.dtype));
    }
  }

  std::size_t count() const { return npy_shape_ ? 1 : gguf_ ? gguf_floats_.size() : floats_.size(); }
  std::string name(std::size_t i) const {
    return npy_shape_ ? path_ : gguf_ ? gguf::printable(gguf_floats_[i]->name) : floats_[i]->name;
  }
  Shape shape(std::size_t i) const {
    return npy_shape_ ? *npy_shape_ : gguf_ ? gguf_floats_[i]->shape : floats_[i]->shape;
  }
  std::vector<float> values(std::size_t i) const {
    return npy_shape_ ? npy_values_ : gguf_ ? gguf_->read_f32(*gguf_floats_[i]) : st_->read_f32(floats_[i]->name);
  }
  // "name dtype" of the tensors not measured: of other dtypes, and already quantized.
  const std::vector<std::string>& skipped() const { return skipped_names_; }
  const std::vector<std::string>& quantized() const { return quantized_names_; }

 private:
  std::string path_;
  std::optional<Shape> npy_shape_;
  std::vector<float> npy_values_;
  std::optional<SafetensorsFile> st_;
  std::vector<const SafetensorsTensorInfo*> floats_;
  std::optional<gguf::File> gguf_;
  std::vector<const gguf::TensorInfo*> gguf_floats_;
  std::vector<std::string> skipped_names_, quantized_names_;
};

struct TypeReport {
  const gguf::TypeTraits* type;  // null for bf16
  std::string name() const { return type ? std::string(type->name) : "bf16"; }
  int64_t block() const { return type ? type->block_elems : 1; }
  ErrorStats total;
  std::vector<std::string> tensor_lines;  // with --per-tensor
  int64_t skipped_tensors = 0, skipped_elements = 0;
};

// Round-trips x through the type in chunks, adding the pairs to `stats` (and advancing the
// progress bar, if any, chunk by chunk).
void round_trip(const gguf::TypeTraits& t, const std::string& tensor, const std::vector<float>& x, ErrorStats& stats,
                Progress* progress) {
  std::vector<std::byte> packed;
  std::vector<float> back;
  const auto n = static_cast<int64_t>(x.size());
  for (int64_t off = 0; off < n; off += kChunk) {
    const int64_t len = std::min(kChunk, n - off);
    packed.resize(gguf::packed_size(t.type, len));
    gguf::quantize(t.type, x.data() + off, len, packed.data());
    const int64_t bad = gguf::first_invalid_block(t.type, packed);
    if (bad >= 0)
      fail("tensor '", tensor, "': element ", off + bad * t.block_elems, " starts a ", t.name,
           " block whose scale is beyond the fp16 range (values too large for ", t.name, ")");
    back.resize(static_cast<std::size_t>(len));
    gguf::dequantize(t.type, packed, back.data());
    stats.add(x.data() + off, back.data(), static_cast<std::size_t>(len));
    if (progress) progress->advance(len);
  }
}

// The same for bf16 (float32 -> bf16, round to nearest even -> float32).
void round_trip_bf16(const std::vector<float>& x, ErrorStats& stats, Progress* progress) {
  std::vector<float> back(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) back[i] = bf16::to_float(bf16::from_float(x[i]));
  stats.add(x.data(), back.data(), x.size());
  if (progress) progress->advance(static_cast<int64_t>(x.size()));
}

void run(const Options& o) {
  std::vector<TypeReport> reports;
  for (const std::string& name : o.types) reports.push_back({name == "bf16" ? nullptr : &gguf::traits(name), {}, {}});
  FloatTensors file(o.path);

  int64_t elements = 0;
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < file.count(); ++i) {
    shapes.push_back(file.shape(i));
    elements += numel(shapes.back());
  }
  std::printf("%s: float tensors %zu, values %lld", o.path.c_str(), file.count(), static_cast<long long>(elements));
  const auto list = [](const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::printf("; %s %zu (", what, names.size());
    for (std::size_t i = 0; i < names.size(); ++i) std::printf("%s%s", i ? ", " : "", names[i].c_str());
    std::printf(")");
  };
  list("tensors of other dtypes skipped", file.skipped());
  list("already quantized, not measured", file.quantized());
  std::printf("\n");
  std::fflush(stdout);

  // A bar only for work that takes a while (the scalar K-quant searches run at ~50 MB/s).
  const int64_t work = elements * static_cast<int64_t>(reports.size());
  std::optional<Progress> progress;
  if (work >= (int64_t{1} << 24)) progress.emplace("quantize-stats", work);

  for (std::size_t i = 0; i < file.count(); ++i) {
    const std::string name = file.name(i);
    const Shape& shape = shapes[i];
    const std::vector<float> x = file.values(i);
    for (std::size_t k = 0; k < x.size(); ++k)
      if (!std::isfinite(x[k]))
        fail("tensor '", name, "' element ", k, " is ", std::isnan(x[k]) ? "NaN" : "infinite",
             "; the GGUF formats hold finite values only");
    for (TypeReport& r : reports) {
      const int64_t block = r.block();
      if (shape.empty() || shape.back() % block != 0) {
        ++r.skipped_tensors;
        r.skipped_elements += static_cast<int64_t>(x.size());
        if (progress) progress->advance(static_cast<int64_t>(x.size()));
      } else if (!x.empty()) {
        ErrorStats tensor_stats;
        if (r.type)
          round_trip(*r.type, name, x, tensor_stats, progress ? &*progress : nullptr);
        else
          round_trip_bf16(x, tensor_stats, progress ? &*progress : nullptr);
        if (o.per_tensor) r.tensor_lines.push_back(tensor_stats.llama_line(r.name() + "::" + name));
        r.total.merge(tensor_stats);
      }
    }
  }
  progress.reset();  // ends the bar's line before the report

  for (const TypeReport& r : reports) {
    for (const std::string& line : r.tensor_lines) std::printf("%s\n", line.c_str());
    const std::string type = r.name();
    if (r.total.count() > 0)
      std::printf("%s\n    %s\n", r.total.llama_line(type).c_str(), r.total.summary().c_str());
    else
      std::printf("%-50s: no tensor can be packed\n", type.c_str());
    if (r.skipped_tensors > 0)
      std::printf("    skipped %lld tensors (%lld values): last dimension not a multiple of %lld\n",
                  static_cast<long long>(r.skipped_tensors), static_cast<long long>(r.skipped_elements),
                  static_cast<long long>(r.block()));
  }
}

}  // namespace

void register_quantize_stats(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "quantize-stats", "llama.cpp's quantize-stats: error of GGUF types (and bf16) over the float tensors of a file");
  cmd->add_option("file", o->path,
                  ".safetensors (F32, F16, BF16, F64 tensors), .gguf (f32, f16, bf16, f64 tensors) or .npy (float32 / "
                  "float64)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--types", o->types, "GGUF types or bf16, comma-separated (default: " + std::string(kDefaultTypes) + ")")
      ->delimiter(',');
  cmd->add_flag("--per-tensor", o->per_tensor, "also print a line per tensor, named type::tensor");
  cmd->footer(
      "Lines are llama.cpp's: rmse, maxerr, 95pct< and median< from its 150-bucket histogram of |error|\n"
      "over [0, 0.03); then n, nmse, mae, cosine and SQNR. Tensors whose last dimension is not a multiple\n"
      "of a type's block are skipped for that type. A progress bar shows on a terminal for large files.\n"
      "Example (from the repository root; gru.safetensors as made in `fixq gru quantize --help`):\n"
      "  build/bin/fixq quantize-stats --types q4_0,q8_0,iq4_nl data/charlm/gru.weight_hh_l0.npy\n"
      "  build/bin/fixq quantize-stats --types q4_0,q4_K,q6_K --per-tensor gru.safetensors\n"
      "  build/bin/fixq formats quantize --type f16 gru.safetensors -o gru_f16.gguf\n"
      "  build/bin/fixq quantize-stats --types q4_0,q8_0 gru_f16.gguf");
  cmd->callback([o] {
    if (o->types.empty()) o->types = CLI::detail::split(kDefaultTypes, ',');
    run(*o);
  });
}

}  // namespace fixq::cli
