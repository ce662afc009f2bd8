// The forward pass's device scratch (gru_workspace.h), on the host: for every shape its
// pieces are apart, 256-byte aligned, inside the allocation and as large as the kernels
// write (quantized inputs, projections, both directions' outputs, two states per cell, the
// byte planes of a split 16-bit input).
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "cuda/gru_workspace.h"

namespace fixq::cuda::detail {
namespace {

TEST(Workspace, PiecesAreApartAlignedAndLargeEnough) {
  for (int D : {1, 2})
    for (int64_t H : {1, 20, 1000})
      for (int64_t T : {0, 1, 9})
        for (int64_t B : {0, 1, 17})
          for (bool host : {false, true})
            for (bool split : {false, true}) {
            DeviceModel m;
            m.input_size = 13;
            m.hidden_size = H;
            m.directions = D;
            m.layers = 2;
            m.cells.resize(static_cast<size_t>(2 * D));
            if (split) m.cells.back().x.storage = IntType::S16;  // a 16-bit input split into its bytes
            m.max_x_stride = std::max<int64_t>(16, (D * H + 15) / 16 * 16);
            const Workspace::Layout l = Workspace::for_shape(m, T, B, host);
            const int64_t rows = T * B, cells = 2 * D;
            // (offset, bytes needed) of every piece, as the kernels use them.
            std::vector<std::pair<int64_t, int64_t>> pieces = {
                {l.in, rows * m.max_x_stride * 2}, {l.next, rows * m.max_x_stride * 2}, {l.wx, rows * 3 * H * 2},
                {l.rh, B * 3 * H * 2},            {l.out[0], rows * H * 2},             {l.state, cells * 2 * B * state_stride(H) * 2},
                {l.lengths, B * 8},               {l.flags, 16}};
            if (D == 2) pieces.push_back({l.out[1], rows * H * 2});
            if (split)
              for (const auto& p : {std::pair{l.hi, rows * m.max_x_stride}, std::pair{l.lo, rows * m.max_x_stride},
                                    std::pair{l.acc_hi, rows * 3 * H * 4}})
                pieces.push_back(p);
            if (host)
              for (const auto& p : {std::pair{l.x, rows * 13 * 4}, std::pair{l.y, rows * D * H * 4},
                                    std::pair{l.h0, cells * B * H * 4}, std::pair{l.h_n, cells * B * H * 4}})
                pieces.push_back(p);
            std::sort(pieces.begin(), pieces.end());
            for (size_t i = 0; i < pieces.size(); ++i) {
              EXPECT_EQ(pieces[i].first % 256, 0);
              EXPECT_LE(pieces[i].first + pieces[i].second, i + 1 < pieces.size() ? pieces[i + 1].first : l.bytes)
                  << "D=" << D << " H=" << H << " T=" << T << " B=" << B << " split=" << split << " piece " << i;
            }
          }
}

}  // namespace
}  // namespace fixq::cuda::detail
