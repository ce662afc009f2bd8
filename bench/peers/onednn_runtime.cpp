// oneDNN's GEMM, threads and version for fixq's benchmarks (peers/onednn.h).
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>

#include "fixq/error.h"
#include "peers/onednn.h"

namespace fixq::peers {

void onednn_gemm_u8s8s32(const uint8_t* a, const int8_t* b, int32_t* c, int64_t m, int64_t n, int64_t k) {
  const int32_t co = 0;
  const dnnl_status_t st = dnnl_gemm_u8s8s32('N', 'T', 'F', m, n, k, 1.0f, a, k, 0, b, k, 0, 0.0f, c, n, &co);
  if (st != dnnl_success) fail("oneDNN dnnl_gemm_u8s8s32 failed with status ", static_cast<int>(st));
}

void onednn_threads(int n) {
  const unsigned runtime = dnnl_version()->cpu_runtime;
  if (runtime == DNNL_RUNTIME_SEQ) {
    require(n == 1, "bench: this oneDNN is built sequential: it cannot run on ", n, " threads");
    return;
  }
  require(runtime == DNNL_RUNTIME_OMP, "bench: this oneDNN uses CPU runtime ", runtime,
          ", not OpenMP: cannot set its thread count");
  // libgomp is loaded with oneDNN; its API is looked up rather than linked, since the
  // tool itself is not an OpenMP program.
  using set_fn = void (*)(int);
  using get_fn = int (*)();
  const auto set = reinterpret_cast<set_fn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  const auto get = reinterpret_cast<get_fn>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  require(set != nullptr && get != nullptr, "bench: oneDNN runs on OpenMP but omp_set_num_threads is not loaded");
  set(n);
  require(get() == n, "bench: OpenMP reports ", get(), " threads after omp_set_num_threads(", n, ")");
}

std::string onednn_version_str() {
  const dnnl_version_t* v = dnnl_version();
  const char* runtime = v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
                        : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential"
                                                             : "other runtime";
  return detail::cat("oneDNN ", v->major, ".", v->minor, ".", v->patch, " (", runtime, ", ", onednn_isa_str(), ")");
}

std::string onednn_isa_str() {
  // The widest instruction set oneDNN may dispatch to here: the CPU's, lowered by
  // ONEDNN_MAX_CPU_ISA. On CPUs with AMX its GEMM and matmul take AMX tiles, an
  // instruction set fixq has no kernels for; ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 gives
  // the comparison that AVX-512 CPUs without AMX (AMD Zen 4 and Zen 5) see.
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "max ISA sse41";
    case dnnl_cpu_isa_avx: return "max ISA avx";
    case dnnl_cpu_isa_avx2: return "max ISA avx2";
    case dnnl_cpu_isa_avx2_vnni: return "max ISA avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "max ISA avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "max ISA avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "max ISA avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "max ISA avx512_core_amx (AMX int8 and bf16 tiles)";
    default: return detail::cat("max ISA code ", static_cast<unsigned>(dnnl_get_effective_cpu_isa()));
  }
}

}  // namespace fixq::peers
