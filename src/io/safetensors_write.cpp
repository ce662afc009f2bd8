// Writing safetensors files: sorted compact JSON, data aligned, through a temporary file.
#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "fixq/error.h"
#include "fixq/safetensors.h"
#include "io/atomic_file.h"

static_assert(std::endian::native == std::endian::little,
              "safetensors data is copied byte for byte: fixq assumes a little-endian host");

namespace fixq {
namespace {

using Json = nlohmann::json;

template <class... Args>
[[noreturn]] void fail_file(const std::string& path, const Args&... what) {
  fail("save_safetensors: ", path, ": ", what...);
}

// Checks names and sizes before anything is written.
void check_tensors(const std::string& path, const std::vector<SafetensorsTensorView>& tensors) {
  std::set<std::string> names;
  for (const SafetensorsTensorView& t : tensors) {
    if (t.name == "__metadata__")
      fail_file(path, "'__metadata__' is reserved for the metadata and cannot name a tensor");
    if (!names.insert(t.name).second) fail_file(path, "two tensors are named '", t.name, "'");
    int64_t count = 0;
    try {
      count = numel(t.shape);
    } catch (const Error& e) {
      fail_file(path, "tensor '", t.name, "': ", e.what());
    }
    const std::size_t itemsize = safetensors_itemsize(t.dtype);
    if (static_cast<uint64_t>(count) > t.data.size() / itemsize ||
        static_cast<uint64_t>(count) * itemsize != t.data.size())
      fail_file(path, "tensor '", t.name, "': shape ", shape_str(t.shape), " of ",
                to_string(t.dtype), " needs ", count, " x ", itemsize, " bytes, but ",
                t.data.size(), " were given");
  }
}

}  // namespace

void save_safetensors(const std::string& path, const std::vector<SafetensorsTensorView>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  check_tensors(path, tensors);

  // Item sizes are powers of two, so laying out the largest first keeps every tensor at a
  // multiple of its own item size once the data section starts at a multiple of 8.
  std::vector<const SafetensorsTensorView*> order;
  for (const SafetensorsTensorView& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const SafetensorsTensorView* a, const SafetensorsTensorView* b) {
    const std::size_t sa = safetensors_itemsize(a->dtype), sb = safetensors_itemsize(b->dtype);
    return std::tie(sb, a->name) < std::tie(sa, b->name);
  });

  Json header = Json::object();  // a std::map: keys come out sorted
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const SafetensorsTensorView* t : order) {
    Json entry = Json::object();
    entry["dtype"] = to_string(t->dtype);
    entry["shape"] = t->shape;
    entry["data_offsets"] = Json::array({offset, offset + t->data.size()});
    header[t->name] = std::move(entry);
    offset += t->data.size();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const Json::exception& e) {
    fail_file(path, "a tensor name or metadata string is not valid UTF-8 (", e.what(), ")");
  }
  text.append((8 - text.size() % 8) % 8, ' ');

  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  prefix += text;
  // One buffer for the data: write_file_atomically takes a fixed list of parts.
  std::vector<std::byte> data(offset);
  std::byte* p = data.data();
  for (const SafetensorsTensorView* t : order) {
    if (!t->data.empty()) std::memcpy(p, t->data.data(), t->data.size());
    p += t->data.size();
  }
  write_file_atomically(path, {{prefix.data(), prefix.size()}, {data.data(), data.size()}},
                        "save_safetensors");
}

}  // namespace fixq
