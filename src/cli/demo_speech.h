// Private to the CLI: `fixq demo`'s second model, the embedded speech-enhancement GRU
// (data/speech): its quality table against float and PyTorch, and streaming denoising.
#pragma once

#include <string>

namespace fixq::cli {

// Prints the speech part of the demo for the model folder `dir` (data/speech).
void speech_demo(const std::string& dir);

}  // namespace fixq::cli
