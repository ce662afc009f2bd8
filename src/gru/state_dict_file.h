// Private: finding an nn.GRU inside a whole model's state_dict saved as safetensors.
#pragma once

#include <string>

#include "fixq/gru.h"
#include "fixq/safetensors.h"

namespace fixq {

// True for torch's names of nn.GRU / nn.LSTM / nn.RNN parameters without a module prefix:
// weight_ih_l<k>, weight_hh_l<k>, bias_ih_l<k>, bias_hh_l<k>, each optionally _reverse.
bool is_torch_gru_tensor_name(const std::string& name);

// The GRU at `prefix` of a plain state_dict file, as load_gru_float describes (fixq/gru.h).
GruModel gru_from_state_dict_file(const SafetensorsFile& file, const std::string& prefix);

}  // namespace fixq
