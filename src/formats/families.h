// Private to the formats module: each family of fixq/formats.h registers its entries from
// its own file, and the shape rule the families that pack the last axis share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fixq/formats.h"

namespace fixq::formats_detail {

std::vector<Format> gguf_formats();        // gguf_formats.cpp
std::vector<Format> lowp_float_formats();  // lowp_formats.cpp
std::vector<Format> mx_formats();          // lowp_formats.cpp
std::vector<Format> int_group_formats();   // int_group_formats.cpp

// Throws unless shape has an axis and its last extent is a multiple of `block`.
void require_blocks_of(const std::string& format, const Shape& shape, int64_t block);

// ceil(n * bits / 8): the bytes of n densely packed codes of 1..8 bits (n >= 0), exact for
// every int64 n (the product n * bits is never formed), so a file's absurd shape gives a
// payload size to compare, not an overflow.
constexpr int64_t packed_bytes(int bits, int64_t n) { return n / 8 * bits + (n % 8 * bits + 7) / 8; }

// Throws unless the payload has the size the shape takes in the format.
void require_payload_bytes(const std::string& format, const Shape& shape, int64_t want, std::size_t got);

}  // namespace fixq::formats_detail
