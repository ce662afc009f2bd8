// Writing GGUF v3 files: the header is assembled in memory, tensors are streamed one at a
// time, each at the next multiple of the alignment (the layout ggml's loader requires).
#include <bit>
#include <cstring>
#include <set>
#include <string>

#include "fixq/error.h"
#include "fixq/gguf_file.h"
#include "io/atomic_file.h"

namespace fixq::gguf {
namespace {

constexpr std::size_t kMaxName = 64;  // GGML_MAX_NAME, terminator included
constexpr uint32_t kDefaultAlignment = 32;

template <class... Args>
[[noreturn]] void fail_file(const std::string& path, const Args&... what) {
  fail("gguf: save ", path, ": ", what...);
}

class Bytes {
 public:
  template <class T>
  void scalar(T v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    out_.append(p, sizeof v);
  }
  void string(const std::string& s) {
    scalar<uint64_t>(s.size());
    out_ += s;
  }
  void value(const Value& v) {
    switch (v.type()) {
      case ValueType::U8: return scalar(static_cast<uint8_t>(v.as_uint()));
      case ValueType::I8: return scalar(static_cast<int8_t>(v.as_int()));
      case ValueType::U16: return scalar(static_cast<uint16_t>(v.as_uint()));
      case ValueType::I16: return scalar(static_cast<int16_t>(v.as_int()));
      case ValueType::U32: return scalar(static_cast<uint32_t>(v.as_uint()));
      case ValueType::I32: return scalar(static_cast<int32_t>(v.as_int()));
      case ValueType::U64: return scalar(v.as_uint());
      case ValueType::I64: return scalar(v.as_int());
      case ValueType::F32: return scalar(static_cast<float>(v.as_float()));
      case ValueType::F64: return scalar(v.as_float());
      case ValueType::Bool: return scalar(static_cast<uint8_t>(v.as_bool() ? 1 : 0));
      case ValueType::String: return string(v.as_string());
      case ValueType::Array: {
        const Value::Array& a = v.as_array();
        scalar(static_cast<uint32_t>(a.element));
        scalar<uint64_t>(a.items.size());
        for (const Value& item : a.items) value(item);
        return;
      }
    }
  }
  void pad_to(uint64_t alignment) { out_.append((alignment - out_.size() % alignment) % alignment, '\0'); }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

void save(const std::string& path, const Metadata& metadata, const std::vector<TensorToWrite>& tensors, uint32_t alignment) {
  if (alignment == 0 || !std::has_single_bit(alignment)) fail_file(path, "alignment ", alignment, " is not a power of two");
  std::set<std::string> keys;
  for (const auto& [key, value] : metadata) {
    if (!keys.insert(key).second) fail_file(path, "duplicate metadata key \"", key, "\"");
    if (key == "general.alignment" && (value.type() != ValueType::U32 || value.as_uint() != alignment))
      fail_file(path, "metadata \"general.alignment\" is ", value.str(), " (", to_string(value.type()),
                ") but the file is written with alignment ", alignment, " (a uint32)");
  }
  Metadata kv = metadata;
  if (alignment != kDefaultAlignment && !keys.contains("general.alignment"))
    kv.emplace_back("general.alignment", Value::u32(alignment));

  std::set<std::string> names;
  std::vector<uint64_t> sizes;
  for (const TensorToWrite& t : tensors) {
    if (!t.type) fail_file(path, "tensor '", t.name, "' has no type");
    if (!names.insert(t.name).second) fail_file(path, "two tensors are named '", t.name, "'");
    if (t.name.size() >= kMaxName)
      fail_file(path, "tensor name '", t.name, "' has ", t.name.size(), " bytes; ggml reads names of at most ", kMaxName - 1);
    if (t.shape.size() > 4) fail_file(path, "tensor '", t.name, "' has rank ", t.shape.size(), "; GGUF allows at most 4");
    try {
      sizes.push_back(tensor_bytes(*t.type, t.shape));
    } catch (const Error& e) {
      fail_file(path, "tensor '", t.name, "': ", e.what());
    }
  }

  Bytes h;
  h.scalar<uint32_t>(0x46554747u);  // "GGUF"
  h.scalar<uint32_t>(3);
  h.scalar<uint64_t>(tensors.size());
  h.scalar<uint64_t>(kv.size());
  for (const auto& [key, value] : kv) {
    h.string(key);
    h.scalar(static_cast<uint32_t>(value.type()));
    h.value(value);
  }
  uint64_t offset = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorToWrite& t = tensors[i];
    h.string(t.name);
    const Shape shape = t.shape.empty() ? Shape{1} : t.shape;  // a scalar is stored as ne = [1]
    h.scalar<uint32_t>(static_cast<uint32_t>(shape.size()));
    for (auto it = shape.rbegin(); it != shape.rend(); ++it) h.scalar<uint64_t>(static_cast<uint64_t>(*it));
    h.scalar<uint32_t>(t.type->id);
    h.scalar<uint64_t>(offset);
    // Each size fits int64, their sum need not (the shapes come before their data).
    const uint64_t end = checked_add(offset, sizes[i], "gguf: save ", path, ": the data offset after tensor '", t.name, "'");
    offset = checked_add(end, (alignment - end % alignment) % alignment, "gguf: save ", path, ": the data offset after tensor '",
                         t.name, "'");
  }
  h.pad_to(alignment);

  AtomicFileWriter out(path, "gguf: save");
  out.write(h.str().data(), h.str().size());
  static const char kZeros[256] = {};
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::vector<std::byte> data = tensors[i].data ? tensors[i].data() : std::vector<std::byte>{};
    if (data.size() != sizes[i])
      fail_file(path, "tensor '", tensors[i].name, "' (", tensors[i].type->name, " ", shape_str(tensors[i].shape),
                ") needs ", sizes[i], " bytes, but ", data.size(), " were given");
    out.write(data.data(), data.size());
    for (uint64_t pad = align_up(sizes[i], alignment) - sizes[i]; pad > 0;) {
      const uint64_t n = std::min<uint64_t>(pad, sizeof kZeros);
      out.write(kZeros, n);
      pad -= n;
    }
  }
  out.commit();
}

}  // namespace fixq::gguf
