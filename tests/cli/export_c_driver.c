/* Test driver for the C that `fixq gru export-c --name kws` writes: runs the generated
 * model over sequences and writes its float outputs, exactly as `fixq gru run` lays them
 * out, so that the two can be compared bit for bit.
 *   usage: driver X.bin T B Y.bin
 * X.bin: float32 [T][B][KWS_INPUT_SIZE], time-major; Y.bin: float32 [T][B][KWS_OUTPUT_SIZE].
 * Each of the B sequences starts from kws_reset. Streaming models go frame by frame through
 * kws_quantize_x, kws_step, kws_dequantize_h; bidirectional ones through kws_sequence. */
#include <stdio.h>
#include <stdlib.h>

#include "kws.h"

static void* checked_malloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (p == NULL) {
    fprintf(stderr, "driver: out of memory\n");
    exit(2);
  }
  return p;
}

int main(int argc, char** argv) {
  size_t T, B, b, t, n_x, n_y;
  float *x, *y;
  FILE* f;
  kws_state s;
  if (argc != 5) {
    fprintf(stderr, "usage: %s X.bin T B Y.bin\n", argv[0]);
    return 2;
  }
  T = (size_t)strtoul(argv[2], NULL, 10);
  B = (size_t)strtoul(argv[3], NULL, 10);
  n_x = T * B * KWS_INPUT_SIZE;
  n_y = T * B * KWS_OUTPUT_SIZE;
  x = (float*)checked_malloc(n_x * sizeof(float));
  y = (float*)checked_malloc(n_y * sizeof(float));
  f = fopen(argv[1], "rb");
  if (f == NULL || fread(x, sizeof(float), n_x, f) != n_x) {
    fprintf(stderr, "driver: cannot read %zu floats from %s\n", n_x, argv[1]);
    return 2;
  }
  fclose(f);
  for (b = 0; b < B; ++b) {
    kws_reset(&s);
#if KWS_DIRECTIONS == 1
    for (t = 0; t < T; ++t) {
      kws_x_t x_q[KWS_INPUT_SIZE];
      kws_h_t h_q[KWS_HIDDEN_SIZE];
      kws_quantize_x(x + (t * B + b) * KWS_INPUT_SIZE, x_q);
      kws_step(&s, x_q, h_q);
      kws_dequantize_h(h_q, y + (t * B + b) * KWS_OUTPUT_SIZE);
    }
#else
    {
      kws_x_t* x_q = (kws_x_t*)checked_malloc(T * KWS_INPUT_SIZE * sizeof(kws_x_t));
      kws_h_t* y_q = (kws_h_t*)checked_malloc(T * KWS_OUTPUT_SIZE * sizeof(kws_h_t));
      kws_x_t* scratch = (kws_x_t*)checked_malloc(T * KWS_OUTPUT_SIZE * sizeof(kws_x_t));
      for (t = 0; t < T; ++t) kws_quantize_x(x + (t * B + b) * KWS_INPUT_SIZE, x_q + t * KWS_INPUT_SIZE);
      kws_sequence(&s, x_q, T, y_q, KWS_NUM_LAYERS > 1 ? scratch : NULL);
      for (t = 0; t < T; ++t) kws_dequantize_h(y_q + t * KWS_OUTPUT_SIZE, y + (t * B + b) * KWS_OUTPUT_SIZE);
      free(x_q);
      free(y_q);
      free(scratch);
    }
#endif
  }
  f = fopen(argv[4], "wb");
  if (f == NULL || fwrite(y, sizeof(float), n_y, f) != n_y) {
    fprintf(stderr, "driver: cannot write %s\n", argv[4]);
    return 2;
  }
  fclose(f);
  free(x);
  free(y);
  return 0;
}
