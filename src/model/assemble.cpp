// The derived constants of a quantized model, from its value parameters, integer weights
// and tables: the one function both quantize() and load() end in, so that a loaded model
// is the model that was saved.
#include <algorithm>
#include <cmath>

#include "fixq/error.h"
#include "gru/int/model.h"
#include "model/int_ops.h"
#include "model/quantized.h"

namespace fixq {

using model_detail::QNode;

QuantParams QuantizedModel::Impl::params(int v, size_t row) const {
  const ModelValueQuant& q = vq[static_cast<size_t>(v)];
  QuantParams p;
  p.scheme = QuantScheme::make(q.bits, true, Symmetry::Asymmetric, scales, Granularity::PerTensor);
  p.shape = {};
  p.scale = {q.scale.at(row)};
  p.zero_point = {q.zero_point.at(row)};
  if (scales == ScaleKind::PowerOfTwo) {
    int e = 0;
    (void)std::frexp(q.scale[row], &e);
    p.exponent = {1 - e};  // scale = 2^(e - 1)
  }
  p.validate();
  return p;
}

namespace {

bool same_params(const ModelValueQuant& a, size_t ra, const ModelValueQuant& b, size_t rb) {
  return a.bits == b.bits && a.scale[ra] == b.scale[rb] && a.zero_point[ra] == b.zero_point[rb];
}

Rescale rescale_between(const ModelValueQuant& from, size_t rf, const ModelValueQuant& to, size_t rt, ScaleKind kind) {
  return Rescale::make(from.scale[rf], from.zero_point[rf], to.scale[rt], to.zero_point[rt], {to.qmin(), to.qmax()}, kind);
}

// f evaluated for every value of v's range, where v is 8-bit (else empty).
template <class F>
model_detail::Table8 table_of(const std::vector<ModelValueQuant>& vq, int v, F f) {
  model_detail::Table8 t;
  const ModelValueQuant& q = vq[static_cast<size_t>(v)];
  if (q.bits != 8) return t;
  t.qmin = q.qmin();
  for (int32_t x = q.qmin(); x <= q.qmax(); ++x) t.y.push_back(f(x));
  if (t.y.size() == 256 && std::all_of(t.y.begin(), t.y.end(), [](int32_t e) { return e >= -128 && e <= 127; }))
    t.bytes.assign(t.y.begin(), t.y.end());
  return t;
}

// QNode::table8 of a node whose other constants are built.
std::vector<model_detail::Table8> tables8(const std::vector<ModelValueQuant>& vq, const ModelNode& node, const QNode& q) {
  std::vector<model_detail::Table8> t(node.inputs.size());
  if ((node.op == ModelOp::Tanh || node.op == ModelOp::Sigmoid) && q.lut)
    t[0] = table_of(vq, node.inputs[0], [&](int32_t x) { return (*q.lut)(x); });
  if (node.op == ModelOp::Concat)
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (!q.copy[i]) t[i] = table_of(vq, node.inputs[i], [&](int32_t x) { return q.rescale[i](x); });
  if (node.op == ModelOp::Gru && !q.x_copy) t[0] = table_of(vq, node.inputs[0], [&](int32_t x) { return q.x_in(x); });
  return t;
}

}  // namespace

void QuantizedModel::Impl::assemble(const std::vector<std::vector<int32_t>>* tables) {
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    const ModelNode& node = model.nodes[n];
    QNode& q = qn[n];
    const int y = node.outputs[0];
    const ModelValueQuant& vy = vq[static_cast<size_t>(y)];
    const IntRange out{vy.qmin(), vy.qmax()};
    auto in_q = [&](size_t i) -> const ModelValueQuant& { return vq[static_cast<size_t>(node.inputs[i])]; };
    switch (node.op) {
      case ModelOp::Linear:
      case ModelOp::Conv1d: {
        const int64_t N = node.out_features;
        q.requant.clear();
        for (int64_t o = 0; o < N; ++o)
          q.requant.push_back(make_scale(double(in_q(0).scale[0]) * q.w_scale[static_cast<size_t>(o)] / vy.scale[0], scales));
        model_detail::prepare_conv(node, q, in_q(0).zero_point[0], bits);
        break;
      }
      case ModelOp::Tanh:
      case ModelOp::Sigmoid: {
        const auto fn = node.op == ModelOp::Tanh ? ActivationLut::Fn::Tanh : ActivationLut::Fn::Sigmoid;
        const QuantParams pin = params(node.inputs[0]), pout = params(y);
        q.lut = tables ? ActivationLut::from_entries(pin, pout, (*tables)[n], "the table of node '" + node.name + "'")
                       : ActivationLut::build(fn, pin, pout);
        break;
      }
      case ModelOp::Add:
        q.add = QuantizedAdd::make(in_q(0).scale[0], in_q(0).zero_point[0], in_q(1).scale[0], in_q(1).zero_point[0],
                                   vy.scale[0], vy.zero_point[0], out, scales);
        break;
      case ModelOp::Mul:
        q.mul = QuantizedMul::make(in_q(0).scale[0], in_q(0).zero_point[0], in_q(1).scale[0], in_q(1).zero_point[0],
                                   vy.scale[0], vy.zero_point[0], out, scales);
        break;
      case ModelOp::Concat:
        q.rescale.clear();
        q.copy.clear();
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          q.copy.push_back(same_params(in_q(i), 0, vy, 0));
          q.rescale.push_back(rescale_between(in_q(i), 0, vy, 0, scales));
        }
        break;
      case ModelOp::Softmax:
        q.out_frac = bits == 16 ? 15 : 8;
        if (tables) {
          q.exp_table = (*tables)[n];
          require(!q.exp_table.empty() && q.exp_table[0] == (1 << 30) &&
                      q.exp_table.size() <= (size_t{1} << in_q(0).bits),
                  "the exp table of node '", node.name, "' is not a softmax table");
          for (size_t i = 1; i < q.exp_table.size(); ++i)
            require(q.exp_table[i] >= 0 && q.exp_table[i] <= q.exp_table[i - 1], "the exp table of node '", node.name,
                    "' is not decreasing");
        } else {
          q.exp_table = model_detail::softmax_exp_table(in_q(0).scale[0], in_q(0).bits);
        }
        break;
      case ModelOp::Gru: {
        const QuantizedGru::Impl& g = QuantizedGruAccess::impl(*q.gru);
        const QuantParams& gx = g.params.cells[0][GruOp::X];
        const ModelValueQuant& vx = in_q(0);
        ModelValueQuant gxq{"", gx.scheme.format.bits, {gx.scale[0]}, {gx.zero_point[0]}};
        q.x_copy = same_params(vx, 0, gxq, 0);
        q.x_in = rescale_between(vx, 0, gxq, 0, scales);
        if (g.bidirectional) {
          const size_t rev = static_cast<size_t>((g.num_layers - 1) * 2 + 1);
          const QuantParams& hr = g.params.cells[rev][GruOp::H];
          ModelValueQuant hq{"", hr.scheme.format.bits, {hr.scale[0]}, {hr.zero_point[0]}};
          q.reverse_copy = same_params(hq, 0, vy, 0);
          q.reverse_to_y = rescale_between(hq, 0, vy, 0, scales);
        }
        break;
      }
      case ModelOp::Relu:
      case ModelOp::Slice: break;
    }
    q.table8 = tables8(vq, node, q);
  }
}

}  // namespace fixq
