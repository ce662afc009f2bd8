# Type stubs of fixq.metrics (python/src/bind_metrics.cpp): error metrics of an
# approximation against a reference, and llama.cpp's quantize-stats histogram. Inputs are
# two same-shape real arrays of finite values, taken as float32.
from typing import ClassVar

import numpy as np
import numpy.typing as npt

class ErrorStats:
    """Streaming error statistics over (reference, approx) pairs, with the quantize-stats histogram."""

    HISTOGRAM_BUCKETS: ClassVar[int]
    HISTOGRAM_RANGE: ClassVar[float]
    def __init__(self) -> None: ...
    def add(self, reference: npt.ArrayLike, approx: npt.ArrayLike) -> None:
        """Adds the pairs of two same-shape arrays; NaN/inf raise ValueError and change nothing."""
    def merge(self, other: ErrorStats) -> None:
        """Adds every pair other has seen."""
    @property
    def count(self) -> int: ...
    @property
    def histogram(self) -> npt.NDArray[np.uint64]:
        """uint64 [150]: bucket k counts |x-y| in [k, k+1) * 0.0002, the last also everything beyond."""
    def rmse(self) -> float: ...
    def nmse(self) -> float: ...
    def mae(self) -> float: ...
    def maxerr(self) -> float: ...
    def cosine(self) -> float: ...
    def sqnr_db(self) -> float: ...
    def quantile(self, q: float) -> float:
        """llama.cpp's find_quantile: upper edge of the first bucket reaching count * q."""
    def llama_line(self, name: str) -> str:
        """'%-50s: rmse %.8f, maxerr %.8f, 95pct<%.4f, median<%.4f'."""
    def summary(self) -> str:
        """'n N, nmse %.6e, mae %.8f, cosine %.8f, sqnr %.2f dB'."""

def error_stats(reference: npt.ArrayLike, approx: npt.ArrayLike) -> ErrorStats:
    """An ErrorStats holding the pairs of two same-shape arrays."""
def rmse(reference: npt.ArrayLike, approx: npt.ArrayLike) -> float:
    """sqrt(mean((x - y)^2))."""
def nmse(reference: npt.ArrayLike, approx: npt.ArrayLike) -> float:
    """sum (x - y)^2 / sum x^2."""
def mae(reference: npt.ArrayLike, approx: npt.ArrayLike) -> float:
    """mean |x - y|."""
def maxerr(reference: npt.ArrayLike, approx: npt.ArrayLike) -> float:
    """max |x - y|."""
def cosine(reference: npt.ArrayLike, approx: npt.ArrayLike) -> float:
    """Cosine similarity, clamped to [-1, 1]."""
def sqnr_db(reference: npt.ArrayLike, approx: npt.ArrayLike) -> float:
    """10 log10(sum x^2 / sum (x - y)^2)."""
