// Private: the float graph executor, shared by model_forward (whole sequences) and
// ModelStream (one frame per call, T = 1): one node function, so both give the same bits.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "fixq/gru.h"
#include "fixq/model.h"

namespace fixq::model_detail {

// What a stream carries between frames, per node.
struct FloatGraphState {
  std::vector<std::vector<float>> conv_hist;    // Conv1d: [B, P, Cin], the frames before the next
  std::vector<std::unique_ptr<GruStream>> gru;  // Gru
};

// Every node in order over vals (one internal array per value; graph inputs filled, a
// State input empty for zeros). state null: whole sequences of T frames (Conv1d padded
// with zeros, GRUs from their initial states); else one frame (T = 1) continuing state.
void run_float_graph(const Model& model, std::vector<std::vector<float>>& vals, int64_t B, int64_t T,
                     FloatGraphState* state, const ModelTap* tap);

// The graph inputs as internal arrays (Sequence [B, T, C]; State [S, B, H], or empty for
// zeros), their shapes and values checked (the messages name the input). Gives B and T.
std::vector<std::vector<float>> read_float_inputs(const Model& model, const std::vector<ModelArray>& inputs,
                                                  int64_t& B, int64_t& T);

// Checks an inputs vector's count and each State input's shape against batch B (empty: zeros).
void check_state_input(const ModelValue& v, const ModelArray& a, int64_t B);

}  // namespace fixq::model_detail
