// oneDNN's bf16 matmul for `fixq bench bf16` (peers/onednn.h).
#include <oneapi/dnnl/dnnl.hpp>

#include "peers/onednn.h"

namespace fixq::peers {

struct OnednnBf16Matmul::Impl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  dnnl::memory src, dst, wei;
};

OnednnBf16Matmul::OnednnBf16Matmul(const uint16_t* a, const uint16_t* w, int64_t m, int64_t n, int64_t k)
    : impl_(std::make_unique<Impl>()) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  Impl& p = *impl_;
  const dnnl::memory::desc src({m, k}, dt::bf16, tag::ab), dst({m, n}, dt::f32, tag::ab);
  // oneDNN's weights are k x n; fixq's n x k rows are that matrix in layout "ba".
  const dnnl::memory::desc wany({k, n}, dt::bf16, tag::any), wuser({k, n}, dt::bf16, tag::ba);
  p.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wany, dst), p.eng);
  p.prim = dnnl::matmul(p.pd);
  p.src = dnnl::memory(src, p.eng, const_cast<uint16_t*>(a));
  p.dst = dnnl::memory(dst, p.eng);
  dnnl::memory user(wuser, p.eng, const_cast<uint16_t*>(w));
  p.wei = dnnl::memory(p.pd.weights_desc(), p.eng);
  dnnl::reorder(user, p.wei).execute(p.strm, user, p.wei);
  p.strm.wait();
}

OnednnBf16Matmul::~OnednnBf16Matmul() = default;

void OnednnBf16Matmul::run() {
  Impl& p = *impl_;
  p.prim.execute(p.strm, {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_WEIGHTS, p.wei}, {DNNL_ARG_DST, p.dst}});
  p.strm.wait();
}

const float* OnednnBf16Matmul::output() const { return static_cast<const float*>(impl_->dst.get_data_handle()); }

std::string OnednnBf16Matmul::implementation() const { return impl_->pd.impl_info_str(); }

}  // namespace fixq::peers
