// fixq/host_device.h — FIXQ_HOST_DEVICE marks a formula that the host compiler and CUDA
// device code both compile from the same source.
//
// fixq states each numeric formula once (the fixed-point primitives of fixq/arith.h, the
// GRU's unit update and table lookup, the GEMM epilogues). A GPU backend includes those
// headers and evaluates the very same bodies on the device, so that every processor gives
// the same bits. A formula header therefore calls nothing device code lacks: no
// exceptions, no <cmath>, no std::numeric_limits or std::clamp, no allocation.
#pragma once

#if defined(__CUDACC__)
#define FIXQ_HOST_DEVICE __host__ __device__
#else
#define FIXQ_HOST_DEVICE
#endif
