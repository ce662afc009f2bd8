// Private: the state of a QuantizedGru.
#pragma once

#include <vector>

#include "fixq/qgru.h"
#include "gru/q_plan.h"

namespace fixq {

struct QuantizedGru::Impl {
  GruQuantParams params;
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int num_layers = 1;
  bool bidirectional = false;
  std::vector<gru_detail::CellPlan> plans;  // [layer * D + direction]

  int directions() const { return bidirectional ? 2 : 1; }
};

}  // namespace fixq
