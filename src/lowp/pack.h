// Private: dense packing of 2-, 4-, 6- and 8-bit codes (layout in fixq/lowp.h, Part 3).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace fixq::lowp_detail {

// Four 6-bit codes <-> three bytes: code i at bits [6i, 6i + 6) of the 24-bit string.
static inline void pack4x6(const uint8_t* c, uint8_t* out) {
  out[0] = static_cast<uint8_t>(c[0] | (c[1] << 6));
  out[1] = static_cast<uint8_t>((c[1] >> 2) | (c[2] << 4));
  out[2] = static_cast<uint8_t>((c[2] >> 4) | (c[3] << 2));
}

static inline void unpack4x6(const uint8_t* in, uint8_t* c) {
  c[0] = in[0] & 0x3F;
  c[1] = static_cast<uint8_t>((in[0] >> 6) | ((in[1] & 0x0F) << 2));
  c[2] = static_cast<uint8_t>((in[1] >> 4) | ((in[2] & 0x03) << 4));
  c[3] = in[2] >> 2;
}

// n codes, each < 2^bits (bits 2, 4, 6 or 8), into ceil(n * bits / 8) bytes.
static inline void pack_bits(int bits, const uint8_t* c, int64_t n, uint8_t* out) {
  if (bits == 2) {
    for (int64_t j = 0; 4 * j < n; ++j) {
      uint8_t byte = 0;
      for (int64_t k = 0; k < 4 && 4 * j + k < n; ++k) byte = static_cast<uint8_t>(byte | (c[4 * j + k] << (2 * k)));
      out[j] = byte;
    }
  } else if (bits == 8) {
    if (n > 0) std::memcpy(out, c, static_cast<size_t>(n));  // pointers may be null when n == 0
  } else if (bits == 4) {
    int64_t j = 0;
    for (; 2 * j + 1 < n; ++j) out[j] = static_cast<uint8_t>(c[2 * j] | (c[2 * j + 1] << 4));
    if (n % 2) out[j] = c[n - 1];
  } else {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) pack4x6(c + i, out + i / 4 * 3);
    if (i < n) {
      uint8_t tail[4] = {0, 0, 0, 0}, bytes[3];
      std::copy(c + i, c + n, tail);
      pack4x6(tail, bytes);
      std::copy(bytes, bytes + ((n - i) * 6 + 7) / 8, out + i / 4 * 3);
    }
  }
}

// The inverse of pack_bits (unused bits of the last byte are ignored here).
static inline void unpack_bits(int bits, const uint8_t* in, int64_t n, uint8_t* c) {
  if (bits == 2) {
    for (int64_t i = 0; i < n; ++i) c[i] = (in[i / 4] >> (2 * (i % 4))) & 0x03;
  } else if (bits == 8) {
    if (n > 0) std::memcpy(c, in, static_cast<size_t>(n));
  } else if (bits == 4) {
    for (int64_t i = 0; i < n; ++i) c[i] = (i % 2) ? in[i / 2] >> 4 : in[i / 2] & 0x0F;
  } else {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) unpack4x6(in + i / 4 * 3, c + i);
    if (i < n) {
      uint8_t bytes[3] = {0, 0, 0}, tail[4];
      std::copy(in + i / 4 * 3, in + i / 4 * 3 + ((n - i) * 6 + 7) / 8, bytes);
      unpack4x6(bytes, tail);
      std::copy(tail, tail + (n - i), c + i);
    }
  }
}

}  // namespace fixq::lowp_detail
