// QuantizedModel::info: what each operator and each graph input and output is in integers.
#include <algorithm>
#include <sstream>

#include "gru/int/model.h"
#include "model/quant_state.h"
#include "model/quantized.h"

namespace fixq {

namespace {

std::string params_text(const ModelValueQuant& q) {
  std::ostringstream s;
  s << "int" << q.bits;
  for (size_t r = 0; r < q.scale.size(); ++r) s << (r ? "; " : " ") << "scale " << q.scale[r] << " zp " << q.zero_point[r];
  return s.str();
}

}  // namespace

QuantizedModelInfo QuantizedModel::info() const {
  const Impl& m = *impl_;
  QuantizedModelInfo info;
  info.preset = m.preset;
  info.scales = m.scales;
  info.gemm_bits = m.bits;
  info.work = model_detail::model_work(m);
  info.calib_cosine = m.calib_cosine;
  info.range_choice = m.range_choice;
  info.values = m.vq;
  info.inputs = m.model.inputs;
  info.outputs = m.model.outputs;
  for (size_t n = 0; n < m.model.nodes.size(); ++n) {
    const ModelNode& node = m.model.nodes[n];
    const model_detail::QNode& q = m.qn[n];
    const auto y = static_cast<size_t>(node.outputs[0]);
    QuantizedModelInfo::Op op{node.name, node.op, 0, m.vq[y].bits, node.inputs, node.outputs, ""};
    std::ostringstream d;
    d << "out " << params_text(m.vq[y]);
    switch (node.op) {
      case ModelOp::Linear:
      case ModelOp::Conv1d: {
        op.weight_bits = 8;
        float lo = q.w_scale[0], hi = q.w_scale[0];
        for (float s : q.w_scale) lo = std::min(lo, s), hi = std::max(hi, s);
        d << ", weights int8 per channel, scales [" << lo << ", " << hi << "], bias int32";
        break;
      }
      case ModelOp::Tanh:
      case ModelOp::Sigmoid: d << ", table of " << q.lut->entries() << (q.lut->direct() ? " entries" : " knots"); break;
      case ModelOp::Softmax: d << ", exp table of " << q.exp_table.size() << " entries, output 2^-" << q.out_frac; break;
      case ModelOp::Gru: {
        const GruQuantParams& p = q.gru->params();
        op.weight_bits = p.config.bits_of(GruOp::W);
        d << ", GRU " << to_string(p.config.scale_kind) << " W int" << p.config.bits_of(GruOp::W) << " h int"
          << p.config.bits_of(GruOp::H) << (q.x_copy ? ", input as is" : ", input rescaled");
        break;
      }
      case ModelOp::Concat: {
        int copies = 0;
        for (bool c : q.copy) copies += c;
        d << ", " << copies << " of " << q.copy.size() << " inputs copied, the others rescaled";
        break;
      }
      default: break;
    }
    op.detail = d.str();
    info.ops.push_back(std::move(op));
  }
  return info;
}

std::string QuantizedModelInfo::to_string() const {
  std::ostringstream s;
  // What the file holds only: a loaded model's table is the saved one's.
  s << "preset " << preset << ", scales " << fixq::to_string(scales) << ", GEMMs int" << gemm_bits << ", work " << work
    << " per frame\n";
  auto io = [&](const char* what, int v) {
    const ModelValueQuant& q = values[static_cast<size_t>(v)];
    s << what << " " << q.name << ": " << params_text(q) << "\n";
  };
  for (int v : inputs) io("input", v);
  for (const Op& op : ops) s << fixq::to_string(op.op) << " " << op.name << ": " << op.detail << "\n";
  for (int v : outputs) io("output", v);
  return s.str();
}

}  // namespace fixq
