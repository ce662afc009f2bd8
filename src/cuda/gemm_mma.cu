// The tensor-core GEMM: u8 / s8 A x s8 B -> s32 with mma.sync m16n8k32 (sm_80 and newer),
// the epilogue fused after the last k tile.
//
// Thread blocks own BM x BN output tiles; each of their warps a WM x WN part of it, as MT x NT
// mma tiles of 16 x 8 held in registers. k advances in tiles of 64 bytes through a ring of
// STAGES shared-memory buffers filled by cp.async, so the loads of later tiles overlap the
// products of the current one. The int32 sums are exact (the caller has checked the
// weights' bound), so any tiling gives the CPU's accumulators.
//
// Fragment layouts of mma.m16n8k32 with 8-bit operands (PTX ISA), lane = 4 g + t:
//   A (16 x 32, row-major): a0 = A[g][4t..4t+3], a1 = A[g+8][4t..], a2 = A[g][16+4t..], a3 = A[g+8][16+4t..]
//   B (32 x 8, column n = g): b0 = B[4t..4t+3][g], b1 = B[16+4t..][g]   (B's rows of k are contiguous)
//   C (16 x 8): c0 = C[g][2t], c1 = C[g][2t+1], c2 = C[g+8][2t], c3 = C[g+8][2t+1]
// Shared-memory rows are 64 + 16 bytes long: the 32 lanes' 4-byte fragment reads (8 rows g
// by 4 words t) then fall in 32 different banks.
#include <cuda_runtime.h>

#include "cuda/gemm_args.h"
#include "cuda/gemm_epilogue.cuh"
#include "cuda/once_per_device.h"
#include "cuda/runtime.h"

namespace fixq::cuda::detail {

namespace {

template <int kBM, int kBN, int kWarpsM, int kWarpsN, int kStages>
struct Tile {
  static constexpr int BM = kBM, BN = kBN, STAGES = kStages, WARPS_N = kWarpsN;
  static constexpr int BK = 64;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int WM = kBM / kWarpsM, WN = kBN / kWarpsN;
  static constexpr int MT = WM / 16, NT = WN / 8;
  static constexpr int kRow = BK + 16;  // bytes per shared-memory row
  static constexpr int kStageBytes = (kBM + kBN) * kRow;
  static constexpr int kSmem = kStages * kStageBytes;
  static_assert(WM % 16 == 0 && WN % 8 == 0 && BK == kBTileK, "tile shape");
};

// One row (M <= 16), a few rows (M <= 64), many rows. A product of few rows streams B once
// from memory: narrow tiles give every multiprocessor blocks (N = 4096: 256 blocks of 16
// columns), and deep rings keep more of B in flight per block (8 stages of 1 KiB).
using SmallTile = Tile<16, 16, 1, 2, 8>;
using MediumTile = Tile<64, 32, 2, 2, 6>;
using LargeTile = Tile<128, 128, 2, 4, 3>;

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared memory, of which the first `valid` (0..16) are read and
// the rest zero-filled.
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, int valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(valid)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

template <bool kUnsignedA>
__device__ __forceinline__ void mma_16832(int32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (kUnsignedA)
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t load_word(const unsigned char* p) { return *reinterpret_cast<const uint32_t*>(p); }

// Rows [m0, m0 + BM) of A, k tile k0, into sA. kAsync: 16-byte cp.async (A's rows and base
// 16-byte aligned); else byte by byte (any stride), zeros outside A.
template <class T, bool kAsync>
__device__ __forceinline__ void load_a(const GemmArgs& g, unsigned char* sA, int64_t m0, int64_t k0) {
  const auto* a = static_cast<const unsigned char*>(g.a);
  if constexpr (kAsync) {
    for (int c = threadIdx.x; c < T::BM * 4; c += T::kThreads) {
      const int r = c >> 2, q = c & 3;
      const int64_t gm = m0 + r, gk = k0 + q * 16;
      const int64_t rest = g.k - gk;
      const int valid = gm < g.m && rest > 0 ? (rest >= 16 ? 16 : static_cast<int>(rest)) : 0;
      cp_async_16(sA + r * T::kRow + q * 16, valid > 0 ? a + gm * g.lda + gk : a, valid);
    }
  } else {
    for (int e = threadIdx.x; e < T::BM * T::BK; e += T::kThreads) {
      const int r = e / T::BK, c = e % T::BK;
      const int64_t gm = m0 + r, gk = k0 + c;
      sA[r * T::kRow + c] = gm < g.m && gk < g.k ? a[gm * g.lda + gk] : 0;
    }
  }
}

// Rows [n0, n0 + BN) of B, k tile k0 (always inside B's padded rows), into sB.
template <class T>
__device__ __forceinline__ void load_b(const GemmArgs& g, unsigned char* sB, int64_t n0, int64_t k0) {
  const auto* b = static_cast<const unsigned char*>(g.b);
  for (int c = threadIdx.x; c < T::BN * 4; c += T::kThreads) {
    const int r = c >> 2, q = c & 3;
    const int64_t gn = n0 + r;
    const bool valid = gn < g.n;
    cp_async_16(sB + r * T::kRow + q * 16, valid ? b + gn * g.ldb + k0 + q * 16 : b, valid ? 16 : 0);
  }
}

template <class T, bool kUnsignedA, bool kAsyncA, EpilogueKind kKind>
__global__ void __launch_bounds__(T::kThreads) gemm_mma_kernel(GemmArgs g) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / T::WARPS_N, wn = warp % T::WARPS_N;
  const int gq = lane >> 2, tq = lane & 3;
  const int64_t n0 = int64_t{blockIdx.x} * T::BN;
  const int64_t k_tiles = (g.k + T::BK - 1) / T::BK;
  const int64_t m_tiles = (g.m + T::BM - 1) / T::BM;

  for (int64_t mtile = blockIdx.y; mtile < m_tiles; mtile += gridDim.y) {
    const int64_t m0 = mtile * T::BM;
    int32_t acc[T::MT][T::NT][4] = {};
    auto stage = [&](int64_t kt) { return smem + (kt % T::STAGES) * T::kStageBytes; };
    auto load_stage = [&](int64_t kt) {
      unsigned char* s = stage(kt);
      load_a<T, kAsyncA>(g, s, m0, kt * T::BK);
      load_b<T>(g, s + T::BM * T::kRow, n0, kt * T::BK);
    };
    for (int s = 0; s < T::STAGES - 1; ++s) {
      if (s < k_tiles) load_stage(s);
      cp_async_commit();
    }
    for (int64_t kt = 0; kt < k_tiles; ++kt) {
      // Tile kt has landed, and every warp is done with the buffer the next load refills.
      cp_async_wait<T::STAGES - 2>();
      __syncthreads();
      const unsigned char* sA = stage(kt);
      const unsigned char* sB = sA + T::BM * T::kRow;
#pragma unroll
      for (int kk = 0; kk < T::BK; kk += 32) {
        uint32_t af[T::MT][4];
#pragma unroll
        for (int mt = 0; mt < T::MT; ++mt) {
          const unsigned char* r = sA + (wm * T::WM + mt * 16 + gq) * T::kRow + kk + tq * 4;
          af[mt][0] = load_word(r);
          af[mt][1] = load_word(r + 8 * T::kRow);
          af[mt][2] = load_word(r + 16);
          af[mt][3] = load_word(r + 8 * T::kRow + 16);
        }
#pragma unroll
        for (int nt = 0; nt < T::NT; ++nt) {
          const unsigned char* c = sB + (wn * T::WN + nt * 8 + gq) * T::kRow + kk + tq * 4;
          const uint32_t b0 = load_word(c), b1 = load_word(c + 16);
#pragma unroll
          for (int mt = 0; mt < T::MT; ++mt) mma_16832<kUnsignedA>(acc[mt][nt], af[mt], b0, b1);
        }
      }
      if (kt + T::STAGES - 1 < k_tiles) load_stage(kt + T::STAGES - 1);
      cp_async_commit();
    }
    cp_async_wait<0>();
    __syncthreads();  // the next m tile's first loads reuse the buffers
#pragma unroll
    for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int64_t row = m0 + wm * T::WM + mt * 16 + gq + (i >> 1) * 8;
          const int64_t col = n0 + wn * T::WN + nt * 8 + tq * 2 + (i & 1);
          if (row < g.m && col < g.n) epilogue_store<kKind>(g.e, row, col, acc[mt][nt][i]);
        }
  }
}

// The attribute call raise_dynamic_shared_memory makes once per kernel variant and device.
void set_max_dynamic_shared_memory(void (*kernel)(GemmArgs), int bytes) {
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
        "raising the tensor-core GEMM's shared memory");
}

template <class T, bool kUnsignedA, bool kAsyncA, EpilogueKind kKind>
void launch_kernel(const GemmArgs& g, cudaStream_t stream) {
  constexpr auto kernel = &gemm_mma_kernel<T, kUnsignedA, kAsyncA, kKind>;
  // Every variant over 48 KiB (LargeTile's 60 KiB ring) needs its own opt-in, per device.
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  raise_dynamic_shared_memory<kernel>(device, T::kSmem, set_max_dynamic_shared_memory);
  const int64_t m_tiles = (g.m + T::BM - 1) / T::BM, n_tiles = (g.n + T::BN - 1) / T::BN;
  const dim3 grid(static_cast<unsigned>(n_tiles), static_cast<unsigned>(m_tiles < 65535 ? m_tiles : 65535));
  kernel<<<grid, T::kThreads, T::kSmem, stream>>>(g);
  check_launch("gemm_mma_kernel");
}

template <class T, bool kUnsignedA, bool kAsyncA>
void launch_kind(const GemmArgs& g, cudaStream_t stream) {
  switch (g.e.kind) {
    case EpilogueKind::S32: launch_kernel<T, kUnsignedA, kAsyncA, EpilogueKind::S32>(g, stream); break;
    case EpilogueKind::F32: launch_kernel<T, kUnsignedA, kAsyncA, EpilogueKind::F32>(g, stream); break;
    case EpilogueKind::Requant: launch_kernel<T, kUnsignedA, kAsyncA, EpilogueKind::Requant>(g, stream); break;
  }
}

template <class T>
void launch_tile(const GemmArgs& g, cudaStream_t stream) {
  const bool aligned = a_rows_take_cp_async(g.a, g.lda);
  const bool u8 = g.a_type == IntType::U8;
  if (aligned) u8 ? launch_kind<T, true, true>(g, stream) : launch_kind<T, false, true>(g, stream);
  else u8 ? launch_kind<T, true, false>(g, stream) : launch_kind<T, false, false>(g, stream);
}

}  // namespace

void launch_gemm_tensor_core(const GemmArgs& g, Stream stream) {
  if (g.m <= 0 || g.n <= 0) return;
  if (!tensor_core_operands(g)) throw DeviceError("internal: the tensor-core GEMM was handed operands it does not take");
  if (g.m <= SmallTile::BM) launch_tile<SmallTile>(g, stream);
  else if (g.m <= MediumTile::BM) launch_tile<MediumTile>(g, stream);
  else launch_tile<LargeTile>(g, stream);
}

}  // namespace fixq::cuda::detail
