// A 128-bit integer for exact intermediate products (GCC/Clang extension; the
// __extension__ keeps -Wpedantic quiet about it).
#pragma once

namespace fixq::detail {
__extension__ typedef __int128 int128;
}  // namespace fixq::detail
