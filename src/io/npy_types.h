// Private: the integer dtypes fixq's npy readers and writers name, once:
// X(suffix, C++ type, npy dtype string) for load_npy_<suffix> / save_npy_<suffix>.
#pragma once

#define FIXQ_NPY_INTEGER_TYPES(X) \
  X(i8, int8_t, "|i1")            \
  X(u8, uint8_t, "|u1")           \
  X(i16, int16_t, "<i2")          \
  X(u16, uint16_t, "<u2")         \
  X(i32, int32_t, "<i4")          \
  X(i64, int64_t, "<i8")
