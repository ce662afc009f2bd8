// Private: writing a file so that a failure never destroys what was there before.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>

namespace fixq {

// Writes the parts, in order, to a new temporary file in path's directory, syncs it and
// renames it over path. On any failure the temporary is removed, an existing file at path
// is left untouched, and fixq::Error "<what>: <path>: <reason>" is thrown.
void write_file_atomically(const std::string& path,
                           std::initializer_list<std::pair<const void*, std::size_t>> parts,
                           const char* what);

}  // namespace fixq
