// Private: what every file loader (GGUF, safetensors, npy) does to its file before parsing
// it, with the same messages: "<loader>: <path>: cannot open" (and the system's reason),
// "not a regular file", "truncated: the file ended while reading it".
#pragma once

#include <cstdint>
#include <string>

namespace fixq::io_detail {

// Opens path for reading (close-on-exec, retried when interrupted); the descriptor, and
// the file's size in *size. Throws fixq::Error naming the loader and the file for a file
// that cannot be opened or stat'ed or is not a regular file (a directory, a FIFO).
int open_regular_file(const char* loader, const std::string& path, uint64_t* size);

// Reads exactly n bytes at offset (the current position when offset is negative).
// Callers check n against the size first, so running short means the file shrank since.
void read_exact(const char* loader, const std::string& path, int fd, void* dst, uint64_t n, int64_t offset);

}  // namespace fixq::io_detail
