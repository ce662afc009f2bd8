// The safetensors header: JSON parsed with nlohmann-json, then every entry and the layout
// of the data section checked, so that reading a tensor afterwards cannot go wrong.
#include "io/safetensors_header.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "fixq/error.h"
#include "io/printable.h"

namespace fixq {
namespace {

using Json = nlohmann::json;

constexpr const char* kMetadataKey = "__metadata__";

// A header needs 3 levels of nesting (the object, an entry, its shape). Far deeper JSON is
// refused while it is parsed: the error messages print values with nlohmann's dump(),
// which recurses once per level, and the 100 MB a header may have nest deep enough to
// overflow the stack (a 400 KB "shape": [[[...]]] crashed `fixq gru quantize`).
constexpr int kMaxJsonDepth = 64;

template <class... Args>
[[noreturn]] void fail_file(const std::string& path, const Args&... what) {
  fail("safetensors: ", path, ": ", what...);
}

template <class... Args>
[[noreturn]] void fail_tensor(const std::string& path, const std::string& name, const Args&... what) {
  fail("safetensors: ", path, ": tensor '", name, "': ", what...);
}

// nlohmann keeps the last of duplicate keys without a word; a file whose meaning depends
// on which duplicate a reader picks is refused instead, at every depth. So is nesting
// deeper than kMaxJsonDepth.
Json parse_json(const std::string& path, std::string_view text) {
  if (text.empty() || text.front() != '{')
    fail_file(path, "malformed header: the JSON header must start with '{'");
  std::vector<std::set<std::string>> keys_of_open_objects;
  auto check_event = [&](int depth, Json::parse_event_t event, Json& parsed) {
    // depth: the number of objects and arrays open around the one that starts.
    if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      fail_file(path, "malformed header: JSON nested deeper than ", kMaxJsonDepth, " levels");
    if (event == Json::parse_event_t::object_start) {
      keys_of_open_objects.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      keys_of_open_objects.pop_back();
    } else if (event == Json::parse_event_t::key) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!keys_of_open_objects.back().insert(key).second)
        fail_file(path, "malformed header: duplicate key \"", key, "\"");
    }
    return true;
  };
  try {
    return Json::parse(text, check_event);
  } catch (const Json::exception& e) {
    // nlohmann quotes the bytes it stopped at, which may be anything.
    fail_file(path, "malformed header: not valid JSON: ", detail::printable(e.what()));
  }
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const Json& j) {
  if (!j.is_object())
    fail_file(path, "malformed header: \"__metadata__\" must be an object of strings, not ",
              j.type_name());
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string())
      fail_file(path, "malformed header: \"__metadata__\" value of \"", key,
                "\" must be a string, not ", value.dump());
    metadata.emplace(key, value.get<std::string>());
  }
  return metadata;
}

// A JSON number that is a non-negative integer no larger than `max`.
bool is_count(const Json& j, uint64_t max) {
  return j.is_number_unsigned() && j.get<uint64_t>() <= max;
}

// One tensor entry, checked in itself and against the data section's size.
SafetensorsTensorInfo parse_entry(const std::string& path, const std::string& name, const Json& e,
                                  uint64_t data_bytes) {
  if (!e.is_object()) fail_tensor(path, name, "entry must be an object, not ", e.type_name());
  for (const auto& [key, value] : e.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      fail_tensor(path, name, "unexpected field \"", key,
                  "\" (an entry has exactly dtype, shape and data_offsets)");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!e.contains(key)) fail_tensor(path, name, "missing field \"", key, "\"");

  SafetensorsTensorInfo t;
  t.name = name;
  const Json& dtype = e["dtype"];
  if (!dtype.is_string()) fail_tensor(path, name, "dtype must be a string, not ", dtype.dump());
  try {
    t.dtype = parse_safetensors_dtype(dtype.get<std::string>());
  } catch (const Error& err) {
    fail_tensor(path, name, err.what());
  }

  const Json& shape = e["shape"];
  if (!shape.is_array()) fail_tensor(path, name, "shape must be a list, not ", shape.dump());
  for (const Json& extent : shape) {
    if (!is_count(extent, std::numeric_limits<int64_t>::max()))
      fail_tensor(path, name, "shape must hold non-negative integers (at most 2^63 - 1), got ",
                  shape.dump());
    t.shape.push_back(extent.get<int64_t>());
  }

  const Json& offsets = e["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !is_count(offsets[0], UINT64_MAX) ||
      !is_count(offsets[1], UINT64_MAX))
    fail_tensor(path, name, "data_offsets must be [begin, end], two non-negative integers, got ",
                offsets.dump());
  t.begin = offsets[0].get<uint64_t>();
  t.end = offsets[1].get<uint64_t>();
  if (t.begin > t.end)
    fail_tensor(path, name, "data_offsets ", offsets.dump(), " end before they begin");
  if (t.end > data_bytes)
    fail_tensor(path, name, "data_offsets ", offsets.dump(), " reach beyond the ", data_bytes,
                " bytes of the data section (is the file truncated?)");

  // numel() refuses counts beyond int64; the byte count is checked here.
  int64_t count = 0;
  try {
    count = numel(t.shape);
  } catch (const Error& err) {
    fail_tensor(path, name, err.what());
  }
  const uint64_t itemsize = safetensors_itemsize(t.dtype);
  if (static_cast<uint64_t>(count) > UINT64_MAX / itemsize ||
      static_cast<uint64_t>(count) * itemsize != t.end - t.begin)
    fail_tensor(path, name, "shape ", shape_str(t.shape), " of ", to_string(t.dtype), " needs ",
                count, " x ", itemsize, " bytes, but data_offsets ", offsets.dump(), " span ",
                t.end - t.begin);
  return t;
}

// The format wants the tensors to cover the data section exactly, one after another.
void check_tiling(const std::string& path, const std::vector<SafetensorsTensorInfo>& sorted,
                  uint64_t data_bytes) {
  uint64_t covered = 0;
  const SafetensorsTensorInfo* previous = nullptr;
  for (const SafetensorsTensorInfo& t : sorted) {
    if (t.begin < covered)
      fail_tensor(path, t.name, "data_offsets [", t.begin, ", ", t.end, "] overlap tensor '",
                  previous->name, "' at [", previous->begin, ", ", previous->end, "]");
    if (t.begin > covered)
      fail_tensor(path, t.name, "data_offsets [", t.begin, ", ", t.end, "] leave a hole of ",
                  t.begin - covered, " unused bytes before them (the format forbids holes)");
    covered = t.end;
    previous = &t;
  }
  if (covered != data_bytes)
    fail_file(path, data_bytes - covered, " trailing bytes: the tensors end at offset ", covered,
              " of a data section of ", data_bytes, " bytes");
}

}  // namespace

SafetensorsHeader parse_safetensors_header(const std::string& path, std::string_view text,
                                           uint64_t data_bytes) {
  const Json j = parse_json(path, text);
  SafetensorsHeader header;
  for (const auto& [key, value] : j.items()) {
    if (key == kMetadataKey)
      header.metadata = parse_metadata(path, value);
    else
      header.tensors.push_back(parse_entry(path, key, value, data_bytes));
  }
  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const SafetensorsTensorInfo& a, const SafetensorsTensorInfo& b) {
              return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
            });
  check_tiling(path, header.tensors, data_bytes);
  return header;
}

}  // namespace fixq
