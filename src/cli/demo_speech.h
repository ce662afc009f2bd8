// Private to the CLI: `fixq demo`'s second model, the embedded speech-enhancement GRU
// (data/speech): its quality table against float and PyTorch, and streaming denoising.
#pragma once

#include <functional>
#include <string>

namespace fixq::cli {

// Loads the model folder `dir` (data/speech), so that a missing or broken one is an error
// before the demo prints anything, and returns what prints the speech part of the demo.
std::function<void()> prepare_speech_demo(const std::string& dir);

}  // namespace fixq::cli
