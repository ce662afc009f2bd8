"""fixq.metrics: how far an approximation is from a reference.

rmse, nmse, mae, maxerr, cosine and SQNR of two same-shape arrays, and :class:`ErrorStats`,
which accumulates them over many pairs with llama.cpp's quantize-stats histogram. Both
arrays must hold finite values; they are taken as float32 (other real dtypes are converted
first). Sums are compensated sums in double. The functions are the C++ library's
(``fixq/metrics.h``).
"""

from ._fixq import metrics as _ext

ErrorStats = _ext.ErrorStats
error_stats = _ext.error_stats
rmse = _ext.rmse
nmse = _ext.nmse
mae = _ext.mae
maxerr = _ext.maxerr
cosine = _ext.cosine
sqnr_db = _ext.sqnr_db

__all__ = ["ErrorStats", "error_stats", "rmse", "nmse", "mae", "maxerr", "cosine", "sqnr_db"]
