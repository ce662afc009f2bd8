// active_kernels() (fixq/kernels.h): each module's own report of the kernels it picked,
// gathered above the modules, so that src/cpu, the foundation they share, knows none of them.
#include <string>
#include <vector>

#include "bf16/kernels.h"
#include "fixq/error.h"
#include "fixq/kernels.h"
#include "gemm/kernels.h"
#include "gguf/kernels.h"
#include "gru/float/kernels.h"
#include "gru/int/fast/loop.h"
#include "lowp/kernels.h"
#include "model/kernels.h"
#include "weightonly/layout.h"
#include "quant/kernels.h"

namespace fixq {

std::vector<KernelChoice> active_kernels() {
  std::vector<KernelChoice> v;
  for (auto report : {gemm_detail::report_kernels, gru_detail::report_kernels, gru_float::report_kernels,
                      model_detail::report_kernels, quant_detail::report_kernels, gguf::detail::report_kernels, lowp_detail::report_kernels,
                      weightonly_detail::report_kernels, bf16_detail::report_kernels}) {
    std::vector<KernelChoice> rows = report();
    v.insert(v.end(), rows.begin(), rows.end());
  }
  return v;
}

std::string active_kernel(std::string_view operation) {
  std::string known;
  for (const KernelChoice& k : active_kernels()) {
    if (k.operation == operation) return k.kernel;
    known += (known.empty() ? "" : ", ") + k.operation;
  }
  fail("unknown operation '", operation, "'; known: ", known);
}

}  // namespace fixq
