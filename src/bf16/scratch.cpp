// The packed-A block of the bf16 GEMM, one per thread and kept between calls, in a file of
// the baseline ISA (kernels.h says why).
#include <cstddef>
#include <vector>

#include "bf16/kernels.h"
#include "cpu/thread_address.h"

namespace fixq::bf16_detail {

uint32_t* a_block_of_thread(int64_t n) {
  thread_local std::vector<uint32_t> block_of_thread;
  auto& block = cpu::thread_address(block_of_thread);
  if (block.size() < static_cast<std::size_t>(n)) block.resize(static_cast<std::size_t>(n));
  return block.data();
}

}  // namespace fixq::bf16_detail
