// fixq/file_kind.h — what a file is, told by its bytes: the one sniffer of the library,
// the command line and Python.
#pragma once

#include <string>

namespace fixq {

enum class FileKind {
  Npy,            // a numpy .npy array: "\x93NUMPY"
  Safetensors,    // safetensors (8-byte header length, then '{') that is not one of fixq's
                  // own files below: a state_dict, or a damaged header (its reader says what
                  // is wrong)
  GruFloat,       // fixq's float GRU model file: safetensors marked "fixq.format": "gru-float"
  GruQuantized,   // a quantized GRU (.fixq): safetensors marked "fixq.format": "gru-quantized"
  ModelQuantized, // a quantized whole model (.fixq, fixq/model.h): "fixq.format": "model-quantized"
  Gguf,           // a GGUF file: "GGUF"
  EncodedTensor,  // the .bin container of fixq/encoded_file.h: "FIXQPK"
  Onnx,           // an ONNX model: a protobuf starting with field 1 (ir_version, byte 0x08),
                  // or any file named *.onnx (so that a damaged one gets the ONNX reader's message)
  Unknown,
};

// "npy", "safetensors", "gru-float", "gru-quantized", "model-quantized", "gguf", "encoded-tensor", "onnx",
// "unknown": the tags fixq writes into its own files are the names of their kinds.
std::string to_string(FileKind kind);

// The kind of the file at path, from its first bytes (and, for safetensors, the metadata of
// its header; a file named *.safetensors is safetensors whatever it starts with). Throws
// fixq::IoError when the file cannot be opened or read.
FileKind file_kind(const std::string& path);

}  // namespace fixq
