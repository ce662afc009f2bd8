// fixq::file_kind: the first bytes of a file, and for safetensors the metadata that marks
// fixq's own files (io/fixq_files.h).
#include "fixq/file_kind.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "fixq/error.h"
#include "fixq/safetensors.h"
#include "io/fixq_files.h"

namespace fixq {

std::string to_string(FileKind kind) {
  switch (kind) {
    case FileKind::Npy: return "npy";
    case FileKind::Safetensors: return "safetensors";
    case FileKind::GruFloat: return "gru-float";
    case FileKind::GruQuantized: return "gru-quantized";
    case FileKind::ModelQuantized: return "model-quantized";
    case FileKind::Gguf: return "gguf";
    case FileKind::EncodedTensor: return "encoded-tensor";
    case FileKind::Onnx: return "onnx";
    case FileKind::Unknown: return "unknown";
  }
  return "unknown";
}

namespace {

// Which of fixq's safetensors files this is, by "fixq.format"; a header that does not
// parse is left to the safetensors reader to explain.
FileKind safetensors_kind(const std::string& path) {
  try {
    const SafetensorsFile f(path);
    const auto it = f.metadata().find(kFixqFormatKey);
    if (it != f.metadata().end()) {
      for (FileKind k : {FileKind::GruFloat, FileKind::GruQuantized, FileKind::ModelQuantized})
        if (it->second == to_string(k)) return k;
    }
  } catch (const IoError&) {
    throw;
  } catch (const Error&) {
  }
  return FileKind::Safetensors;
}

}  // namespace

FileKind file_kind(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_io(errno, path, ": cannot open the file");
  char head[9] = {};
  in.read(head, sizeof head);
  const std::streamsize got = in.gcount();
  if (in.bad()) fail_io(errno, path, ": cannot read the file");
  const auto starts = [&](const char* magic) {
    const std::streamsize n = static_cast<std::streamsize>(std::strlen(magic));
    return got >= n && std::memcmp(head, magic, static_cast<size_t>(n)) == 0;
  };
  if (starts("\x93NUMPY")) return FileKind::Npy;
  if (starts("GGUF")) return FileKind::Gguf;
  if (starts("FIXQPK")) return FileKind::EncodedTensor;
  if ((got == 9 && head[8] == '{') || path.ends_with(".safetensors")) return safetensors_kind(path);
  if (path.ends_with(".onnx") || (got >= 1 && head[0] == 0x08)) return FileKind::Onnx;
  return FileKind::Unknown;
}

}  // namespace fixq
