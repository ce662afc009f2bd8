// fixq's float GRU against PyTorch's nn.GRU: tools/export_gru.py (Debian's /usr/bin/python3
// with python3-torch) writes a model file and torch's outputs on a random input; fixq loads
// the file, runs gru_forward on the same input and must agree within 1e-5. Without torch
// these tests fail, saying what to install: the float reference must be checked in CI.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fixq/gru.h"
#include "fixq/npy.h"
#include "fixq/safetensors.h"
#include "gru/float_test_util.h"
#include "io/npy_test_util.h"

namespace fixq {
namespace {

using gru_test::max_abs_diff;

constexpr float kTolerance = 1e-5f;

class TorchGru : public npy_test::ScratchDir {
 protected:
  // Runs tools/export_gru.py with `args` plus --out and --reference into the scratch dir,
  // then loads the model; false (with a test failure saying why) when that fails.
  bool export_model(const std::string& args) {
    const std::string log = path("export.log");
    const std::string cmd = "/usr/bin/python3 " + std::string(FIXQ_SOURCE_DIR) + "/tools/export_gru.py --out " +
                            path("model.safetensors") + " --reference " + path("ref") + " " + args + " >" + log +
                            " 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      const bool torch = std::system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") == 0;
      ADD_FAILURE() << (torch ? "tools/export_gru.py failed: " + npy_test::read_bytes(log)
                              : "these tests need Debian's /usr/bin/python3 with torch and numpy: "
                                "apt-get install python3-torch python3-numpy");
      return false;
    }
    model_ = load_gru_float(path("model.safetensors"));
    return true;
  }

  std::vector<float> ref(const std::string& name, Shape* shape = nullptr) {
    return load_npy_f32(path("ref/" + name), shape);
  }

  // Runs fixq on the reference input and compares y and h_n with torch's; returns the
  // largest difference (also printed, for the record).
  float compare(GruRunOptions opt = {}) {
    Shape x_shape;
    const std::vector<float> x = ref("x.npy", &x_shape);
    std::vector<float> h0;
    if (std::FILE* f = std::fopen(path("ref/h0.npy").c_str(), "rb")) {
      std::fclose(f);
      h0 = ref("h0.npy");
      opt.h0 = h0.data();
    }
    out_ = gru_forward(model_, x.data(), x_shape, opt);
    const GruOutput& out = out_;
    const std::vector<float> y = ref("y.npy"), h_n = ref("h_n.npy");
    EXPECT_EQ(out.y.size(), y.size());
    EXPECT_EQ(out.h_n.size(), h_n.size());
    const float err = std::max(max_abs_diff(out.y, y), max_abs_diff(out.h_n, h_n));
    std::printf("    max |fixq - torch| = %.3g\n", static_cast<double>(err));
    RecordProperty("max_abs_error", std::to_string(err));
    EXPECT_LE(err, kTolerance);
    return err;
  }

  // Expects fixq's y to be exactly zero at every padded step of a [T, B, W] ([B, T, W]
  // when batch_first) output: padding is never computed nor written.
  void expect_padding_untouched(const std::vector<int64_t>& lengths, bool batch_first) {
    const auto B = static_cast<int64_t>(lengths.size());
    const int64_t T = static_cast<int64_t>(out_.y.size()) / B / width(), W = width();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = lengths[static_cast<std::size_t>(b)]; t < T; ++t)
        for (int64_t j = 0; j < W; ++j)
          EXPECT_EQ(out_.y[static_cast<std::size_t>((batch_first ? b * T + t : t * B + b) * W + j)], 0.0f)
              << "b " << b << " t " << t;
  }
  int64_t width() const { return model_.directions() * model_.hidden_size; }

  GruModel model_;
  GruOutput out_;
};

TEST_F(TorchGru, SingleLayer) {
  if (!export_model("--input-size 5 --hidden-size 7 --seq-len 6 --batch 1 --seed 1")) return;
  compare();
}

TEST_F(TorchGru, TwoLayersBatchOfThree) {
  if (!export_model("--input-size 4 --hidden-size 6 --layers 2 --seq-len 5 --batch 3 --seed 2")) return;
  EXPECT_EQ(model_.num_layers, 2);
  compare();
}

TEST_F(TorchGru, Bidirectional) {
  if (!export_model("--input-size 3 --hidden-size 5 --bidirectional --seq-len 7 --batch 2 --seed 3")) return;
  EXPECT_TRUE(model_.bidirectional);
  compare();
}

TEST_F(TorchGru, BatchFirstTwoLayersBidirectional) {
  if (!export_model("--input-size 4 --hidden-size 5 --layers 2 --bidirectional --batch-first --seq-len 5 "
                    "--batch 3 --seed 4"))
    return;
  GruRunOptions opt;
  opt.batch_first = true;
  compare(opt);
}

TEST_F(TorchGru, InitialState) {
  if (!export_model("--input-size 3 --hidden-size 4 --layers 2 --bidirectional --h0 --seq-len 4 --batch 2 "
                    "--seed 5"))
    return;
  compare();
}

TEST_F(TorchGru, WithoutBiases) {
  if (!export_model("--input-size 6 --hidden-size 3 --no-bias --seq-len 5 --batch 2 --seed 6")) return;
  SafetensorsFile file(path("model.safetensors"));
  EXPECT_EQ(file.find("bias_ih_l0"), nullptr);  // torch's bias=False, read as zero biases
  compare();
}

// pack_padded_sequence with unsorted lengths through two bidirectional layers: the real
// steps match torch's, padded steps stay zero (torch pads with zero too), and h_n is each
// item's state after its last real step in either direction.
TEST_F(TorchGru, PerSequenceLengths) {
  if (!export_model("--input-size 3 --hidden-size 4 --layers 2 --bidirectional --h0 --seq-len 6 --batch 4 "
                    "--lengths 6,2,4,1 --seed 7"))
    return;
  const std::vector<int64_t> lengths{6, 2, 4, 1};
  GruRunOptions opt;
  opt.lengths = lengths;
  compare(opt);
  expect_padding_untouched(lengths, false);
}

TEST_F(TorchGru, PerSequenceLengthsBatchFirst) {
  if (!export_model("--input-size 2 --hidden-size 3 --bidirectional --batch-first --seq-len 5 --batch 3 "
                    "--lengths 3,5,1 --seed 8"))
    return;
  const std::vector<int64_t> lengths{3, 5, 1};
  GruRunOptions opt;
  opt.lengths = lengths;
  opt.batch_first = true;
  compare(opt);
  expect_padding_untouched(lengths, true);
}

// The same torch weights brought in through Haste's layout instead: kernel [C, 3H] and
// recurrent_kernel [H, 3H] with gate columns z, r, g, made here from torch's r, z, n rows.
TEST_F(TorchGru, HasteImportMatchesTorch) {
  if (!export_model("--input-size 3 --hidden-size 4 --layers 2 --bidirectional --seq-len 5 --batch 2 --seed 9"))
    return;
  const SafetensorsFile file(path("model.safetensors"));
  const int64_t H = 4;
  const int torch_row_of_haste_gate[3] = {1, 0, 2};  // z is torch's block 1, r block 0, g = n block 2
  GruModel haste{3, H, 2, true, {}};
  for (int layer = 0; layer < 2; ++layer) {
    for (int d = 0; d < 2; ++d) {
      const std::string suffix = "_l" + std::to_string(layer) + (d ? "_reverse" : "");
      const std::vector<float> w_ih = file.read_f32("weight_ih" + suffix), w_hh = file.read_f32("weight_hh" + suffix),
                               b_ih = file.read_f32("bias_ih" + suffix), b_hh = file.read_f32("bias_hh" + suffix);
      const int64_t C = file.info("weight_ih" + suffix).shape[1];
      NamedTensor kernel{"kernel", {C, 3 * H}, std::vector<float>(static_cast<std::size_t>(C * 3 * H))};
      NamedTensor recurrent{"recurrent_kernel", {H, 3 * H}, std::vector<float>(static_cast<std::size_t>(H * 3 * H))};
      NamedTensor bias{"bias", {3 * H}, std::vector<float>(static_cast<std::size_t>(3 * H))};
      NamedTensor recurrent_bias{"recurrent_bias", {3 * H}, bias.data};
      for (int gate = 0; gate < 3; ++gate) {
        for (int64_t i = 0; i < H; ++i) {
          const int64_t col = gate * H + i, row = torch_row_of_haste_gate[gate] * H + i;
          for (int64_t c = 0; c < C; ++c) kernel.data[static_cast<std::size_t>(c * 3 * H + col)] = w_ih[static_cast<std::size_t>(row * C + c)];
          for (int64_t k = 0; k < H; ++k)
            recurrent.data[static_cast<std::size_t>(k * 3 * H + col)] = w_hh[static_cast<std::size_t>(row * H + k)];
          bias.data[static_cast<std::size_t>(col)] = b_ih[static_cast<std::size_t>(row)];
          recurrent_bias.data[static_cast<std::size_t>(col)] = b_hh[static_cast<std::size_t>(row)];
        }
      }
      haste.cells.push_back(gru_cell_from_haste(kernel, recurrent, bias, recurrent_bias));
    }
  }
  model_ = haste;
  compare();
}

}  // namespace
}  // namespace fixq
