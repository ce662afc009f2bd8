// The fast recurrence of a GRU cell (recurrence_plan.h): each thread block owns U hidden
// units, computes their three rows of Rh against every staged state and runs their unit
// update (gru/int/unit_constants.h's exact domain, the CPU's formula), step after step.
//   persistent form: all steps in one cooperative kernel, the block's 3U rows of R copied
//                    to shared memory once, a grid-wide barrier between steps (the state is
//                    double-buffered: step i reads h[i & 1] and writes h[(i + 1) & 1]);
//   graph form:      the same kernel one step per launch, R read from global memory.
// Every sum is exact (int32 where the CPU's bound allows it, else int64), so the partition
// of the dot products over lanes and blocks gives the CPU's accumulators.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "cuda/gemm_epilogue.cuh"
#include "cuda/gru_kernels.h"
#include "cuda/runtime.h"
#include "gemm/epilogue_formulas.h"
#include "gru/int/unit_constants.h"

namespace fixq::cuda::detail {

namespace {

namespace cg = cooperative_groups;

// Lane `lane`'s share of sum_k h[k] * r[k] over k < H: 4 products per dp4a for 8-bit
// operands with int32 sums (rows padded to whole words with zeros), else one at a time.
template <class Acc, class HT, class RT>
__device__ __forceinline__ Acc dot_lane(const HT* h, const RT* r, int64_t H, int lane) {
  if constexpr (sizeof(HT) == 1 && sizeof(RT) == 1 && sizeof(Acc) == 4) {
    const int* hw = reinterpret_cast<const int*>(h);
    const int* rw = reinterpret_cast<const int*>(r);
    int s = 0;
    for (int64_t w = lane; w < (H + 3) / 4; w += 32) s = __dp4a(hw[w], rw[w], s);
    return s;
  } else {
    Acc s = 0;
    for (int64_t k = lane; k < H; k += 32) s += static_cast<Acc>(h[k]) * static_cast<Acc>(r[k]);
    return s;
  }
}

// sum_k h[k] * r[k] over k < H by one thread: four dp4a chains for 8-bit operands with
// int32 sums (each partial sum is bounded by the whole row's), else one product at a time.
template <class Acc, class HT, class RT>
__device__ __forceinline__ Acc dot_thread(const HT* h, const RT* r, int64_t H) {
  if constexpr (sizeof(HT) == 1 && sizeof(RT) == 1 && sizeof(Acc) == 4) {
    const int* hw = reinterpret_cast<const int*>(h);
    const int* rw = reinterpret_cast<const int*>(r);
    const int64_t words = (H + 3) / 4;
    int s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t w = 0;
    for (; w + 4 <= words; w += 4) {
      s0 = __dp4a(hw[w], rw[w], s0);
      s1 = __dp4a(hw[w + 1], rw[w + 1], s1);
      s2 = __dp4a(hw[w + 2], rw[w + 2], s2);
      s3 = __dp4a(hw[w + 3], rw[w + 3], s3);
    }
    for (; w < words; ++w) s0 = __dp4a(hw[w], rw[w], s0);
    return (s0 + s1) + (s2 + s3);
  } else {
    Acc s = 0;
    for (int64_t k = 0; k < H; ++k) s += static_cast<Acc>(h[k]) * static_cast<Acc>(r[k]);
    return s;
  }
}

template <class Acc>
__device__ __forceinline__ Acc warp_sum(Acc v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// rows x row_bytes from consecutive global rows into shared rows of dst_stride bytes, a word
// at a time (the shared rows are padded to spread reads over the banks), each row then
// zero-filled up to fill_bytes.
__device__ __forceinline__ void copy_rows(unsigned char* dst, int64_t dst_stride, const void* src, int64_t rows,
                                          int64_t row_bytes, int64_t fill_bytes) {
  const auto* s = static_cast<const uint32_t*>(src);
  const int64_t words = row_bytes / 4, filled = fill_bytes / 4;
  for (int64_t i = threadIdx.x; i < rows * filled; i += blockDim.x) {
    const int64_t r = i / filled, w = i % filled;
    reinterpret_cast<uint32_t*>(dst + r * dst_stride)[w] = w < words ? s[r * words + w] : 0u;
  }
}

// D += A B for one m16n8k32 tile of s8 operands (fragment layouts: gemm_mma.cu).
__device__ __forceinline__ void mma_s8(int32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t word_at(const void* p, bool valid) {
  return valid ? *static_cast<const uint32_t*>(p) : 0u;
}

// Step `step` of this block's units. slice: the block's rows of R in shared memory (gate g,
// unit u at row g * U + u), or null to read R from global memory.
template <class HT, class RT, class Acc>
__device__ void recurrence_step(const RecurrenceArgs& a, int64_t step, const RT* slice, unsigned char* smem) {
  const DeviceCell& c = a.cell;
  const RecurrenceLayout& p = a.plan;
  const int64_t H = c.hidden_size, H3 = 3 * H, hs = state_stride(H), U = p.units_per_block;
  const int64_t u0 = blockIdx.x * U, uc = U < H - u0 ? U : H - u0;
  const auto* h_cur = static_cast<const HT*>(a.h[step & 1]);
  auto* h_next = static_cast<HT*>(a.h[(step + 1) & 1]);
  unsigned char* h_s = smem + p.h_offset;  // staged sequence bl at h_s + bl * h_row_bytes
  auto staged = [&](int64_t bl) { return reinterpret_cast<const HT*>(h_s + bl * p.h_row_bytes); };
  auto* rh_s = reinterpret_cast<int32_t*>(smem + p.rh_offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  auto r_row = [&](int64_t gate, int64_t u) {
    return slice != nullptr ? reinterpret_cast<const RT*>(reinterpret_cast<const unsigned char*>(slice) +
                                                          (gate * U + u) * p.r_row_bytes)
                            : static_cast<const RT*>(c.r) + (gate * H + u0 + u) * c.r_stride;
  };
  constexpr bool kTensorCores = sizeof(HT) == 1 && sizeof(RT) == 1 && sizeof(Acc) == 4;
  const int64_t row_fill = kTensorCores ? (H + 31) / 32 * 32 : hs * static_cast<int64_t>(sizeof(HT));
  auto keep = [&](int64_t bl, int64_t gate, int64_t u, Acc sum) {  // Rh of row (gate, u) for staged sequence bl
    const int64_t row = gate * H + u0 + u;
    const int64_t v = gemm_detail::compensated(sum, c.h.zp, c.colsum_r[row]);
    rh_s[bl * p.rh_stride + gate * U + u] = gemm_detail::requant_element(v, 0, c.rh_scale[row], c.rh.zp, c.rh.range);
  };
  for (int64_t b0 = 0; b0 < a.batch; b0 += p.batch_chunk) {
    const int64_t nb = p.batch_chunk < a.batch - b0 ? p.batch_chunk : a.batch - b0;
    copy_rows(h_s, p.h_row_bytes, h_cur + b0 * hs, nb, hs * static_cast<int64_t>(sizeof(HT)), row_fill);
    __syncthreads();
    if (kTensorCores && nb >= 8) {
      // Staged states (A: 16 sequences a tile) times the block's rows of R (B: 8 rows a
      // tile), a warp per output tile; rows past the staged sequences and the block's units
      // read as zeros, and only real ones are kept.
      const int gq = lane >> 2, tq = lane & 3;
      const int64_t tiles_n = (3 * uc + 7) / 8, tiles = (nb + 15) / 16 * tiles_n, k_end = (H + 31) / 32 * 32;
      for (int64_t tile = warp; tile < tiles; tile += warps) {
        const int64_t m0 = tile / tiles_n * 16, n0 = tile % tiles_n * 8;
        const int64_t col = n0 + gq;  // this lane's row of R for B: (gate, unit) = (col / uc, col % uc)
        const bool a_lo = m0 + gq < nb, a_hi = m0 + gq + 8 < nb, b_ok = col < 3 * uc;
        const auto* a0 = h_s + (m0 + gq) * p.h_row_bytes + tq * 4;
        const auto* a1 = a0 + 8 * p.h_row_bytes;
        const auto* b = reinterpret_cast<const unsigned char*>(r_row(b_ok ? col / uc : 0, b_ok ? col % uc : 0)) + tq * 4;
        int32_t d[4] = {0, 0, 0, 0};
        for (int64_t k = 0; k < k_end; k += 32) {
          const uint32_t a[4] = {word_at(a0 + k, a_lo), word_at(a1 + k, a_hi), word_at(a0 + k + 16, a_lo),
                                 word_at(a1 + k + 16, a_hi)};
          mma_s8(d, a, word_at(b + k, b_ok), word_at(b + k + 16, b_ok));
        }
        for (int i = 0; i < 4; ++i) {
          const int64_t bl = m0 + gq + (i >> 1) * 8, n = n0 + tq * 2 + (i & 1);
          if (bl < nb && n < 3 * uc && step < (a.lengths != nullptr ? a.lengths[b0 + bl] : a.T))
            keep(bl, n / uc, n % uc, d[i]);
        }
      }
    } else if (nb < 16) {
      // A warp per (sequence, gate, unit), its lanes splitting the row along k.
      for (int64_t task = warp; task < nb * 3 * uc; task += warps) {
        const int64_t bl = task / (3 * uc), gate = task % (3 * uc) / uc, u = task % uc;
        const int64_t len = a.lengths != nullptr ? a.lengths[b0 + bl] : a.T;
        if (step >= len) continue;  // the whole warp: its lanes share the task
        const Acc sum = warp_sum(dot_lane<Acc>(staged(bl), r_row(gate, u), H, lane));
        if (lane == 0) keep(bl, gate, u, sum);
      }
    } else {
      // A warp per (gate, unit, 32 sequences), a lane per sequence over the whole row.
      const int64_t groups = (nb + 31) / 32;
      for (int64_t task = warp; task < 3 * uc * groups; task += warps) {
        const int64_t gate = task / groups / uc, u = task / groups % uc, bl = task % groups * 32 + lane;
        if (bl >= nb || step >= (a.lengths != nullptr ? a.lengths[b0 + bl] : a.T)) continue;
        keep(bl, gate, u, dot_thread<Acc>(staged(bl), r_row(gate, u), H));
      }
    }
    __syncthreads();
    // The unit updates; padding steps carry the state over unchanged.
    for (int64_t idx = threadIdx.x; idx < nb * uc; idx += blockDim.x) {
      const int64_t bl = idx / uc, u = idx % uc, b = b0 + bl, j = u0 + u;
      const int32_t h_old = staged(bl)[j];
      const int64_t len = a.lengths != nullptr ? a.lengths[b] : a.T;
      int32_t h_new = h_old;
      if (step < len) {
        const int64_t t = a.reverse ? len - 1 - step : step;
        const int64_t wx = (t * a.batch + b) * H3;
        const int32_t* rh = rh_s + bl * p.rh_stride + u;
        const IntType wt = c.wx.storage;
        h_new = gru_detail::update_unit_exact(c.unit, j, load_int(a.wx, wt, wx + j), load_int(a.wx, wt, wx + H + j),
                                              load_int(a.wx, wt, wx + 2 * H + j), rh[0], rh[U], rh[2 * U], h_old);
        h_next[b * hs + j] = static_cast<HT>(h_new);
        static_cast<HT*>(a.y)[(t * a.batch + b) * H + j] = static_cast<HT>(h_new);
      } else {
        h_next[b * hs + j] = static_cast<HT>(h_old);
      }
    }
    __syncthreads();  // the next chunk overwrites the staged states and products
  }
}

template <class HT, class RT, class Acc, bool kShared>
__global__ void __launch_bounds__(kRecurrenceThreads)
    recurrence_kernel(const __grid_constant__ RecurrenceArgs a, int64_t first, int64_t last) {
  extern __shared__ __align__(16) unsigned char smem[];
  const RT* slice = nullptr;
  if constexpr (kShared) {
    const int64_t H = a.cell.hidden_size, U = a.plan.units_per_block, u0 = blockIdx.x * U;
    const int64_t uc = U < H - u0 ? U : H - u0, row_bytes = a.cell.r_stride * static_cast<int64_t>(sizeof(RT));
    for (int64_t gate = 0; gate < 3; ++gate)
      copy_rows(smem + gate * U * a.plan.r_row_bytes, a.plan.r_row_bytes,
                static_cast<const unsigned char*>(a.cell.r) + (gate * H + u0) * row_bytes, uc, row_bytes, row_bytes);
    __syncthreads();
    slice = reinterpret_cast<const RT*>(smem);
  }
  for (int64_t i = first; i < last; ++i) {
    recurrence_step<HT, RT, Acc>(a, i, slice, smem);
    if (i + 1 < last) cg::this_grid().sync();  // the new states, visible to every block
  }
}

using Kernel = void (*)(RecurrenceArgs, int64_t, int64_t);

template <class HT, class RT>
Kernel pick_acc(const RecurrenceArgs& a) {
  const bool shared = a.plan.persistent;
  if (a.cell.r_fits_int32)
    return shared ? recurrence_kernel<HT, RT, int32_t, true> : recurrence_kernel<HT, RT, int32_t, false>;
  return shared ? recurrence_kernel<HT, RT, int64_t, true> : recurrence_kernel<HT, RT, int64_t, false>;
}

Kernel pick(const RecurrenceArgs& a) {
  const bool h16 = a.cell.h.storage == IntType::S16, r16 = a.cell.r_type == IntType::S16;
  if (h16) return r16 ? pick_acc<int16_t, int16_t>(a) : pick_acc<int16_t, int8_t>(a);
  return r16 ? pick_acc<int8_t, int16_t>(a) : pick_acc<int8_t, int8_t>(a);
}

}  // namespace

bool prepare_recurrence(const RecurrenceArgs& a) {
  const Kernel kernel = pick(a);
  // The device's whole opt-in limit, not this plan's: graphs captured for other cells (and
  // their larger plans) replay later with the same kernel.
  int device = 0, limit = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "the shared-memory limit");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit),
        "raising the GRU recurrence's shared memory");
  if (!a.plan.persistent) return true;
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kRecurrenceThreads,
                                                      static_cast<size_t>(a.plan.shared_bytes)),
        "the GRU recurrence's occupancy");
  return per_sm >= 1;  // blocks <= multiprocessors by the plan: then all are co-resident
}

CooperativeLaunch launch_recurrence(const RecurrenceArgs& a, int64_t first, int64_t last, Stream stream) {
  if (first >= last || a.batch == 0) return CooperativeLaunch::Launched;
  const Kernel kernel = pick(a);
  const dim3 grid(static_cast<unsigned>(a.plan.blocks)), block(kRecurrenceThreads);
  const auto shared = static_cast<size_t>(a.plan.shared_bytes);
  if (a.plan.persistent) {
    RecurrenceArgs args = a;
    void* params[] = {&args, &first, &last};
    return cooperative_launch_outcome(
        cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid, block, params, shared, stream),
        "launching the persistent GRU recurrence");
  }
  kernel<<<grid, block, shared, stream>>>(a, first, last);
  check_launch("recurrence_kernel");
  return CooperativeLaunch::Launched;
}

}  // namespace fixq::cuda::detail
