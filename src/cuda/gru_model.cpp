// upload_model: a QuantizedGru's cells in device memory, in the layouts of gru_kernels.h.
#include "cuda/gru_model.h"

#include <cstring>

#include "gemm/kernels.h"
#include "gru/int/model.h"
#include "gru/int/plan.h"

namespace fixq::cuda::detail {

namespace {

using gru_detail::CellPlan;
using gru_detail::CellRefs;

// The device image being built: pieces appended at 256-byte boundaries, their offsets
// turned into pointers once the image is on the device.
class Image {
 public:
  template <class T>
  int64_t add(const T* data, size_t count) {
    const int64_t at = (static_cast<int64_t>(bytes_.size()) + 255) / 256 * 256;
    bytes_.resize(static_cast<size_t>(at) + count * sizeof(T));
    if (count > 0) std::memcpy(bytes_.data() + at, data, count * sizeof(T));
    return at;
  }
  // rows x cols of int32 values stored as s8 or s16 in rows of `stride` elements, zeros after.
  int64_t add_rows(const std::vector<int32_t>& v, int64_t rows, int64_t cols, int64_t stride, IntType t) {
    if (t == IntType::S16) return add(narrowed<int16_t>(v, rows, cols, stride).data(), static_cast<size_t>(rows * stride));
    return add(narrowed<int8_t>(v, rows, cols, stride).data(), static_cast<size_t>(rows * stride));
  }
  const std::vector<unsigned char>& bytes() const { return bytes_; }

 private:
  template <class T>
  static std::vector<T> narrowed(const std::vector<int32_t>& v, int64_t rows, int64_t cols, int64_t stride) {
    std::vector<T> out(static_cast<size_t>(rows * stride), 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[static_cast<size_t>(r * stride + c)] = static_cast<T>(v[static_cast<size_t>(r * cols + c)]);  // in range (build_plan)
    return out;
  }
  std::vector<unsigned char> bytes_;
};

OperandQ operand(const gru_detail::OpQ& q) { return {q.zp, q.range, q.storage}; }

// Offsets of one cell's arrays in the image.
struct CellOffsets {
  int64_t w, r, colsum_w, colsum_r, wx_scale, rh_scale;
  int64_t bias[gru_detail::kUnitBiases], table[gru_detail::kUnitLuts];
};

// A cell's values as the kernels read them, its device pointers still null.
DeviceCell cell_fields(const CellPlan& p) {
  DeviceCell c;
  c.input_size = p.input_size;
  c.hidden_size = p.hidden_size;
  c.x = operand(p.x);
  c.h = operand(p.h);
  c.wx = operand(p.wx);
  c.rh = operand(p.rh);
  c.w_type = p.w.type();
  c.r_type = p.r.type();
  c.w_stride = padded_b_stride(p.input_size);
  c.r_stride = padded_b_stride(p.hidden_size);
  c.w_fits_int32 = gemm_detail::fits_int32(p.x.storage, p.w);
  c.r_fits_int32 = gemm_detail::fits_int32(p.h.storage, p.r);
  c.w_fits_u8 = gemm_detail::fits_int32(IntType::U8, p.w);
  c.unit = gru_detail::unit_constants(CellRefs(p));
  return c;
}

CellOffsets add_cell(Image& img, const CellPlan& p, DeviceCell& c) {
  const int64_t H = p.hidden_size, C = p.input_size;
  c = cell_fields(p);
  const CellRefs refs(p);
  CellOffsets o{};
  o.w = img.add_rows(p.q_w, 3 * H, C, c.w_stride, c.w_type);
  o.r = img.add_rows(p.q_r, 3 * H, H, c.r_stride, c.r_type);
  o.colsum_w = img.add(p.w.colsum().data(), p.w.colsum().size());
  o.colsum_r = img.add(p.r.colsum().data(), p.r.colsum().size());
  o.wx_scale = img.add(p.wx_scale.data(), p.wx_scale.size());
  o.rh_scale = img.add(p.rh_scale.data(), p.rh_scale.size());
  for (int b = 0; b < gru_detail::kUnitBiases; ++b) {
    const std::vector<int32_t>& v = *refs.bias[static_cast<size_t>(b)];
    o.bias[b] = img.add(v.data(), v.size());
  }
  for (int l = 0; l < gru_detail::kUnitLuts; ++l) {
    const std::span<const int32_t> t = refs.table(static_cast<gru_detail::UnitLut>(l)).table();
    o.table[l] = img.add(t.data(), t.size());
  }
  return o;
}

template <class T>
const T* device_at(const DeviceBuffer& m, int64_t offset) {
  return reinterpret_cast<const T*>(static_cast<const unsigned char*>(m.get()) + offset);
}

void point_into(const DeviceBuffer& m, const CellOffsets& o, DeviceCell& c) {
  c.w = device_at<unsigned char>(m, o.w);
  c.r = device_at<unsigned char>(m, o.r);
  c.colsum_w = device_at<int64_t>(m, o.colsum_w);
  c.colsum_r = device_at<int64_t>(m, o.colsum_r);
  c.wx_scale = device_at<FixedPointScale>(m, o.wx_scale);
  c.rh_scale = device_at<FixedPointScale>(m, o.rh_scale);
  for (int b = 0; b < gru_detail::kUnitBiases; ++b) c.unit.bias[b] = device_at<int32_t>(m, o.bias[b]);
  for (int l = 0; l < gru_detail::kUnitLuts; ++l) c.unit.lut[l].table = device_at<int32_t>(m, o.table[l]);
}

}  // namespace

std::vector<DeviceCell> host_cells(const QuantizedGru& model) {
  std::vector<DeviceCell> cells;
  for (const CellPlan& p : QuantizedGruAccess::impl(model).plans) cells.push_back(cell_fields(p));
  return cells;
}

DeviceModel upload_model(const QuantizedGru& model) {
  const QuantizedGru::Impl& m = QuantizedGruAccess::impl(model);
  DeviceModel d;
  d.input_size = m.input_size;
  d.hidden_size = m.hidden_size;
  d.layers = m.num_layers;
  d.directions = m.directions();
  const GruQuantParams& params = m.params;
  d.x = {params.cells[0][GruOp::X].scale[0], params.cells[0][GruOp::X].zero_point[0]};
  Image img;
  std::vector<CellOffsets> offsets;
  for (size_t c = 0; c < m.plans.size(); ++c) {
    d.cells.emplace_back();
    offsets.push_back(add_cell(img, m.plans[c], d.cells.back()));
    d.h.push_back({params.cells[c][GruOp::H].scale[0], params.cells[c][GruOp::H].zero_point[0]});
    d.max_x_stride = std::max(d.max_x_stride, d.x_stride(c));
  }
  // As run_layers rescales a layer's outputs into the next layer's x (gru/int/forward.cpp).
  d.x_from_below.resize(static_cast<size_t>(d.layers));
  for (int l = 1; l < d.layers; ++l) {
    const size_t next = static_cast<size_t>(l * d.directions);
    const QuantParams& nx = params.cells[next][GruOp::X];
    for (int dir = 0; dir < d.directions; ++dir) {
      const QuantParams& hp = params.cells[static_cast<size_t>((l - 1) * d.directions + dir)][GruOp::H];
      d.x_from_below[static_cast<size_t>(l)].push_back(Rescale::make(
          hp.scale[0], hp.zero_point[0], nx.scale[0], nx.zero_point[0], m.plans[next].x.range, params.config.scale_kind));
    }
  }
  const auto bytes = static_cast<int64_t>(img.bytes().size());
  d.memory = DeviceBuffer(bytes, "the GRU's weights, constants and tables");
  copy_to_device(d.memory.get(), img.bytes().data(), bytes, nullptr, "the GRU's weights");
  synchronize(nullptr, "copying the GRU's weights");
  for (size_t c = 0; c < d.cells.size(); ++c) point_into(d.memory, offsets[c], d.cells[c]);
  return d;
}

}  // namespace fixq::cuda::detail
