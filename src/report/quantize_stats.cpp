// llama.cpp's quantize-stats over a file's float tensors (fixq/quantize_stats.h).
#include "fixq/quantize_stats.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "fixq/bf16.h"
#include "fixq/error.h"
#include "fixq/file_kind.h"
#include "fixq/gguf_file.h"
#include "fixq/npy.h"
#include "fixq/safetensors.h"

namespace fixq {

namespace {

constexpr int64_t kChunk = 1 << 16;  // values per round trip: a multiple of every block size

// Round-trips x through the type in chunks, adding the pairs to `stats`; `advance` is
// called with each chunk's length.
void round_trip(const gguf::TypeTraits& t, const std::string& tensor, const std::vector<float>& x, ErrorStats& stats,
                const std::function<void(int64_t)>& advance) {
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
    advance(len);
  }
}

// The same for bf16: float32 -> bf16 (round to nearest even) -> float32.
void round_trip_bf16(const std::vector<float>& x, ErrorStats& stats, const std::function<void(int64_t)>& advance) {
  std::vector<float> back(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) back[i] = bf16::to_float(bf16::from_float(x[i]));
  stats.add(x.data(), back.data(), x.size());
  advance(static_cast<int64_t>(x.size()));
}

}  // namespace

struct QuantizeStatsInput::Impl {
  std::string path;
  std::optional<Shape> npy_shape;
  std::vector<float> npy_values;
  std::optional<SafetensorsFile> st;
  std::vector<const SafetensorsTensorInfo*> st_floats;
  std::optional<gguf::File> gguf;
  std::vector<const gguf::TensorInfo*> gguf_floats;
  std::vector<std::string> skipped, quantized;

  std::size_t count() const { return npy_shape ? 1 : gguf ? gguf_floats.size() : st_floats.size(); }
  std::string name(std::size_t i) const {
    return npy_shape ? path : gguf ? gguf::printable(gguf_floats[i]->name) : st_floats[i]->name;
  }
  Shape shape(std::size_t i) const { return npy_shape ? *npy_shape : gguf ? gguf_floats[i]->shape : st_floats[i]->shape; }
  std::vector<float> values(std::size_t i) const {
    return npy_shape ? npy_values : gguf ? gguf->read_f32(*gguf_floats[i]) : st->read_f32(st_floats[i]->name);
  }
};

QuantizeStatsInput::QuantizeStatsInput(const std::string& path) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path;
  const FileKind kind = file_kind(path);
  if (kind == FileKind::Npy) {
    m.npy_shape.emplace();
    m.npy_values = load_npy_f32(path, &*m.npy_shape);
    return;
  }
  if (kind == FileKind::Gguf) {
    m.gguf.emplace(path);
    for (const gguf::TensorInfo& t : m.gguf->tensors()) {
      if (t.type->is_float) {
        m.gguf_floats.push_back(&t);
        continue;
      }
      std::vector<std::string>& list = t.type->is_int ? m.skipped : m.quantized;
      list.push_back(gguf::printable(t.name) + " " + std::string(t.type->name));
    }
    return;
  }
  try {
    m.st.emplace(path);
  } catch (const Error& e) {
    fail(path, " is neither a .npy, a GGUF nor a readable safetensors file: ", e.what());
  }
  for (const SafetensorsTensorInfo& t : m.st->tensors()) {
    const bool is_float = t.dtype == SafetensorsDtype::F32 || t.dtype == SafetensorsDtype::F16 ||
                          t.dtype == SafetensorsDtype::BF16 || t.dtype == SafetensorsDtype::F64;
    if (is_float)
      m.st_floats.push_back(&t);
    else
      m.skipped.push_back(t.name + " " + to_string(t.dtype));
  }
}

QuantizeStatsInput::~QuantizeStatsInput() = default;

std::size_t QuantizeStatsInput::float_tensors() const { return impl_->count(); }

int64_t QuantizeStatsInput::float_values() const {
  int64_t n = 0;
  for (std::size_t i = 0; i < impl_->count(); ++i) n += numel(impl_->shape(i));
  return n;
}

const std::vector<std::string>& QuantizeStatsInput::skipped() const { return impl_->skipped; }
const std::vector<std::string>& QuantizeStatsInput::quantized() const { return impl_->quantized; }

std::vector<QuantizeStatsType> QuantizeStatsInput::run(const QuantizeStatsOptions& o) const {
  const Impl& m = *impl_;
  std::vector<QuantizeStatsType> reports;
  for (const std::string& name : o.types) {
    QuantizeStatsType r;
    r.name = name;
    if (name != "bf16") {
      r.type = &gguf::traits(name);
      r.block_elems = r.type->block_elems;
    }
    reports.push_back(std::move(r));
  }
  const int64_t total = float_values() * static_cast<int64_t>(reports.size());
  int64_t done = 0;
  const auto advance = [&](int64_t n) {
    done += n;
    if (o.progress) o.progress(done, total);
  };

  for (std::size_t i = 0; i < m.count(); ++i) {
    const std::string name = m.name(i);
    const Shape shape = m.shape(i);
    const std::vector<float> x = m.values(i);
    for (std::size_t k = 0; k < x.size(); ++k)
      if (!std::isfinite(x[k]))
        fail("tensor '", name, "' element ", k, " is ", std::isnan(x[k]) ? "NaN" : "infinite",
             "; the GGUF formats hold finite values only");
    for (QuantizeStatsType& r : reports) {
      if (shape.empty() || shape.back() % r.block_elems != 0) {
        ++r.skipped_tensors;
        r.skipped_values += static_cast<int64_t>(x.size());
        advance(static_cast<int64_t>(x.size()));
      } else if (!x.empty()) {
        ErrorStats tensor_stats;
        if (r.type)
          round_trip(*r.type, name, x, tensor_stats, advance);
        else
          round_trip_bf16(x, tensor_stats, advance);
        if (o.per_tensor) r.tensors.emplace_back(name, tensor_stats);
        r.total.merge(tensor_stats);
      }
    }
  }
  return reports;
}

}  // namespace fixq
