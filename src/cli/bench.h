// Private to the CLI: the `fixq bench` subcommands.
#pragma once

namespace fixq::cli {

struct BenchOptions {
  bool quick = false;  // skip the largest shapes (for smoke tests)
};

void bench_gemm(const BenchOptions& o);

}  // namespace fixq::cli
