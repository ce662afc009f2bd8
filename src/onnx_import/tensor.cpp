// Constant ONNX tensors as plain vectors (onnx.proto's TensorProto: data in raw_data,
// little-endian, or in the typed field of its data_type).
#include "io/narrow.h"
#include "onnx_import/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "fixq/error.h"
#include "fixq/lowp.h"

namespace fixq::onnx_import {
namespace {

// onnx.proto's TensorProto.DataType values used here.
enum DataType : int { kFloat = 1, kInt32 = 6, kInt64 = 7, kFloat16 = 10, kDouble = 11, kBfloat16 = 16 };

const char* type_name(int t) {
  switch (t) {
    case kFloat: return "FLOAT";
    case kInt32: return "INT32";
    case kInt64: return "INT64";
    case kFloat16: return "FLOAT16";
    case kDouble: return "DOUBLE";
    case kBfloat16: return "BFLOAT16";
    default: return nullptr;
  }
}

std::string describe_type(int t) {
  const char* n = type_name(t);
  return n ? n : "data type " + std::to_string(t);
}

void require_internal(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    fail(what, " keeps its data in an external file, which fixq does not read; save the model with "
         "onnx.save(model, path, save_as_external_data=False)");
  if (t.has_segment()) fail(what, " is a segment of a larger tensor, which fixq does not read");
}

// The raw bytes as n values of T, or false when raw_data is empty (the typed field is used).
template <class T>
bool raw_values(const onnx::TensorProto& t, int64_t n, std::vector<T>& out, const std::string& what) {
  if (t.raw_data().empty()) return false;
  // n is any int64 the dims multiply to, so its byte count may overflow (and a wrapped one
  // could match a short raw_data).
  const int64_t bytes = checked_mul(n, static_cast<int64_t>(sizeof(T)), what, ": the byte count of ", n, " values of ",
                                    describe_type(t.data_type()));
  if (t.raw_data().size() != static_cast<uint64_t>(bytes))
    fail(what, ": raw_data holds ", t.raw_data().size(), " bytes, but ", n, " values of ", describe_type(t.data_type()),
         " need ", bytes);
  out.resize(static_cast<std::size_t>(n));
  if (n > 0) std::memcpy(out.data(), t.raw_data().data(), t.raw_data().size());
  return true;
}

template <class Field>
void require_count(const Field& field, int64_t n, const char* name, const std::string& what) {
  if (static_cast<int64_t>(field.size()) != n)
    fail(what, ": ", name, " holds ", field.size(), " values, but its dims need ", n);
}

}  // namespace

std::map<std::string, const onnx::TensorProto*> graph_constants(const onnx::GraphProto& graph) {
  std::map<std::string, const onnx::TensorProto*> out;
  for (const onnx::TensorProto& t : graph.initializer()) out.emplace(t.name(), &t);
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1) continue;
    for (const onnx::AttributeProto& a : node.attribute())
      if (a.name() == "value" && a.has_t()) out.emplace(node.output(0), &a.t());
  }
  return out;
}

Shape tensor_shape(const onnx::TensorProto& t, const std::string& what) {
  Shape s(t.dims().begin(), t.dims().end());
  try {
    numel(s);
  } catch (const Error& e) {
    fail(what, ": ", e.what());
  }
  return s;
}

std::vector<float> tensor_floats(const onnx::TensorProto& t, const std::string& what) {
  require_internal(t, what);
  const int64_t n = numel(tensor_shape(t, what));
  switch (t.data_type()) {
    case kFloat: {
      std::vector<float> v;
      if (raw_values(t, n, v, what)) return v;
      require_count(t.float_data(), n, "float_data", what);
      return {t.float_data().begin(), t.float_data().end()};
    }
    case kFloat16:
    case kBfloat16: {
      std::vector<uint16_t> bits;
      if (!raw_values(t, n, bits, what)) {
        // The typed field keeps each 16-bit pattern in an int32.
        require_count(t.int32_data(), n, "int32_data", what);
        for (const int32_t b : t.int32_data()) {
          if (b < 0 || b > 0xffff) fail(what, ": int32_data holds ", b, ", not a 16-bit pattern");
          bits.push_back(static_cast<uint16_t>(b));
        }
      }
      std::vector<float> v(bits.size());
      lowp_decode(t.data_type() == kFloat16 ? LowpType::Fp16 : LowpType::Bf16, bits.data(),
                  static_cast<int64_t>(bits.size()), v.data());
      return v;
    }
    case kDouble: {
      std::vector<double> wide;
      if (!raw_values(t, n, wide, what)) {
        require_count(t.double_data(), n, "double_data", what);
        wide.assign(t.double_data().begin(), t.double_data().end());
      }
      return io_detail::narrow_to_float32(wide, std::string(what) + ": DOUBLE");
    }
    default:
      fail(what, " is ", describe_type(t.data_type()), "; fixq reads weights of FLOAT, FLOAT16, BFLOAT16 or DOUBLE");
  }
}

std::vector<int64_t> tensor_ints(const onnx::TensorProto& t, const std::string& what) {
  require_internal(t, what);
  const int64_t n = numel(tensor_shape(t, what));
  if (t.data_type() == kInt64) {
    std::vector<int64_t> v;
    if (raw_values(t, n, v, what)) return v;
    require_count(t.int64_data(), n, "int64_data", what);
    return {t.int64_data().begin(), t.int64_data().end()};
  }
  if (t.data_type() == kInt32) {
    std::vector<int32_t> v;
    if (!raw_values(t, n, v, what)) {
      require_count(t.int32_data(), n, "int32_data", what);
      v.assign(t.int32_data().begin(), t.int32_data().end());
    }
    return {v.begin(), v.end()};
  }
  fail(what, " is ", describe_type(t.data_type()), ", not INT64 or INT32");
}

}  // namespace fixq::onnx_import
