"""tbe_compat.compare: bit-exact and tolerant output comparison, ULP distances, reports."""
import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tbe_compat.compare import compare_arrays, ulp_distance

FLOATS = [np.float16, np.float32, np.float64]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FLOATS), st.integers(0, 2 ** 32 - 1), st.integers(0, 6))
def test_ulp_distance_counts_nextafter_steps(dt, bits, steps):
    # independent reference: numpy's nextafter, stepped `steps` times toward +inf
    a = np.array([bits], np.uint32).view(np.float32).astype(dt) if dt is not np.float16 else \
        np.array([bits & 0xFFFF], np.uint16).view(np.float16)
    b = a.copy()
    with np.errstate(over="ignore"):             # stepping past the largest finite: skipped below
        for _ in range(steps):
            b = np.nextafter(b, dt(np.inf))
    if not (np.isfinite(a) & np.isfinite(b))[0]:
        return
    assert ulp_distance(a, b)[0] == steps
    assert ulp_distance(b, a)[0] == steps


def test_ulp_distance_bfloat16():
    a = np.array([1.0, -1.0, 0.0], ml_dtypes.bfloat16)
    b = np.array([1.0078125, -1.0078125, -0.0], ml_dtypes.bfloat16)     # one bfloat16 step away (and -0)
    assert ulp_distance(a, b).tolist() == [1, 1, 0]


def test_zero_signs_are_zero_ulps_apart_and_nan_is_nan():
    assert ulp_distance(np.array([0.0], np.float32), np.array([-0.0], np.float32))[0] == 0
    assert np.isnan(ulp_distance(np.array([np.nan], np.float16), np.array([1.0], np.float16))[0])


def test_bit_exact_by_default():
    a = np.array([1.0, np.nan, 0.0], np.float32)
    assert compare_arrays("y", a, a.copy()) is None
    b = a.copy()
    b[2] = -0.0
    msg = compare_arrays("y", a, b)
    assert "1 of 3 elements differ; first at index 2: got -0.0 (0x80000000), expected 0.0 (0x00000000)" in msg
    c = a.copy()
    c.view(np.uint32)[1] ^= 1                     # another NaN payload
    assert "first at index 1" in compare_arrays("y", a, c)


def test_tolerances():
    e = np.array([1.0, 2.0, np.inf, np.nan], np.float16)
    g = np.array([1.0009765625, 2.0, np.inf, np.nan], np.float16)   # 1 ULP above 1.0
    assert compare_arrays("y", e, g, ulp=1) is None
    assert compare_arrays("y", e, g, atol=1e-3) is None
    assert "max ulp diff 1" in compare_arrays("y", e, g)
    g2 = g.copy()
    g2[3] = 0.0                                   # a NaN must stay a NaN under any tolerance
    assert "first at index 3" in compare_arrays("y", e, g2, atol=10)
    g3 = g.copy()
    g3[2] = -np.inf
    assert "first at index 2" in compare_arrays("y", e, g3, atol=10)
    ints = np.arange(5, dtype=np.int32)
    assert compare_arrays("i", ints, ints + 1, atol=1) is None
    assert "max abs diff 2" in compare_arrays("i", ints, ints + 2, atol=1)


def test_dtype_and_shape_mismatch_reports():
    a = np.zeros((2, 3), np.float16)
    assert compare_arrays("y", a, a.astype(np.float32)) == "y: dtype float32, expected float16"
    assert compare_arrays("y", a, a.reshape(3, 2)) == "y: shape (3, 2), expected (2, 3)"
    b = a.copy()
    b[1, 2] = 4
    assert "first at index (1, 2): got 4.0 (0x4400), expected 0.0 (0x0000)" in compare_arrays("y", a, b)
