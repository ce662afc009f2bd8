// The GEMM's kernel list: one entry per instruction-set family that brings kernels.
#include "gemm/kernels.h"

namespace fixq::gemm_detail {

FIXQ_KERNEL_REGISTRY(GemmKernels, "gemm", kGemm, amx, avx512, avx2, neon, scalar)

cpu_detail::Picked<const MicroKernel*> pick_kernel(IntType a, IntType b, int64_t rows) {
  const auto& r = registry();
  if (rows >= kManyRows && b == IntType::S8) {
    const auto many = a == IntType::U8   ? r.find([](const GemmKernels& k) { return k.u8s8_many; })
                      : a == IntType::S8 ? r.find([](const GemmKernels& k) { return k.s8s8_many; })
                                         : r.find([](const GemmKernels& k) { return k.s16s8_many; });
    if (many.kernel != nullptr) return many;
  }
  if (b == IntType::S16) return r.pick([](const GemmKernels& k) { return k.x8s16; });
  switch (a) {
    case IntType::U8: return r.pick([](const GemmKernels& k) { return k.u8s8; });
    case IntType::S8: return r.pick([](const GemmKernels& k) { return k.s8s8; });
    case IntType::S16: break;
  }
  return r.pick([](const GemmKernels& k) { return k.s16s8; });
}

std::vector<KernelChoice> report_kernels() {
  struct Op {
    const char* name;
    IntType a, b;
    int64_t rows;
  };
  std::vector<KernelChoice> v;
  for (const Op& op : {Op{"gemm u8 x s8", IntType::U8, IntType::S8, 1}, Op{"gemm s8 x s8", IntType::S8, IntType::S8, 1},
                       Op{"gemm s16 x s8", IntType::S16, IntType::S8, 1}, Op{"gemm u8/s8 x s16", IntType::U8, IntType::S16, 1},
                       Op{"gemm u8 x s8, 8+ rows", IntType::U8, IntType::S8, kManyRows},
                       Op{"gemm s8 x s8, 8+ rows", IntType::S8, IntType::S8, kManyRows},
                       Op{"gemm s16 x s8, 8+ rows", IntType::S16, IntType::S8, kManyRows}}) {
    const auto k = pick_kernel(op.a, op.b, op.rows);
    v.push_back({op.name, k.kernel->name, k.isa});
  }
  return v;
}

}  // namespace fixq::gemm_detail
