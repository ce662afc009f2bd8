#!/usr/bin/python3
"""Writes the golden .npy files of tests/io with real numpy (the tests expect the values
below; regenerate with `/usr/bin/python3 tests/io/data/make_golden.py` from the repo root
or this directory). Made with numpy 1.24.2."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array):
    np.save(os.path.join(HERE, name), array)


def write_version(name, array, version):
    with open(os.path.join(HERE, name), "wb") as f:
        np.lib.format.write_array(f, array, version=version)


# Written by np.save: the reader must read them and the writer must reproduce them
# byte for byte.
save("f4_2x3.npy", (np.arange(6, dtype="<f4") * 0.5 - 1).reshape(2, 3))
save("f8_3.npy", np.array([0.1, -2.5, 1e-300], dtype="<f8"))
save("f2_3.npy", np.array([1.0, -2.0, 0.5], dtype="<f2"))
save("i1_4.npy", np.array([-128, -1, 0, 127], dtype="|i1"))
save("u1_2x2.npy", np.array([[0, 1], [254, 255]], dtype="|u1"))
save("i2_4.npy", np.array([-32768, -1, 0, 32767], dtype="<i2"))
save("u2_3.npy", np.array([0, 1, 65535], dtype="<u2"))
save("i4_2x1x2.npy", np.array([-2**31, -1, 0, 2**31 - 1], dtype="<i4").reshape(2, 1, 2))
save("u4_2.npy", np.array([0, 2**32 - 1], dtype="<u4"))
save("i8_4.npy", np.array([-2**63, -1, 0, 2**63 - 1], dtype="<i8"))
save("u8_1.npy", np.array([2**64 - 1], dtype="<u8"))
save("b1_3.npy", np.array([True, False, True]))
save("f4_scalar.npy", np.array(3.25, dtype="<f4"))
save("f4_0x3.npy", np.zeros((0, 3), dtype="<f4"))
save("f4_12345x0.npy", np.zeros((12345, 0), dtype="<f4"))  # multi-digit growth padding

# The other header versions numpy can write.
write_version("i4_v2.npy", np.array([1, 2, 3], dtype="<i4"), (2, 0))
write_version("f4_v3.npy", np.array([1.0, 2.0], dtype="<f4"), (3, 0))

# Files the reader must refuse.
save("f4_fortran.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
save("f4_big_endian.npy", np.arange(3, dtype=">f4"))
save("structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
save("unicode.npy", np.array(["ab", "c"], dtype="<U2"))
