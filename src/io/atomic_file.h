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

// The same, piece by piece, for files too large to assemble in memory: write() appends to
// a new temporary file next to `path`; commit() syncs it and renames it over `path`. If
// the object is destroyed without a commit (an exception on the way), the temporary is
// removed and an existing file at `path` is left untouched. Errors as above.
// Makes directory dir and its missing parents (nothing when it exists). Throws
// fixq::IoError "<what>: <dir>: ..." when it cannot, or names the part that is not a
// directory.
void make_directories(const std::string& dir, const char* what);

class AtomicFileWriter {
 public:
  AtomicFileWriter(const std::string& path, const char* what);
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  void write(const void* data, std::size_t n);
  void commit();

 private:
  std::string target_;
  const char* what_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace fixq
