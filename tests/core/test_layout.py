"""Layouts: every map is a bijection, matches its formula, and pack/unpack round-trip."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core import layout
from pto_core.errors import IllegalOperand, UnknownName

DTYPES = ["f16", "f32", "s8", "bf16", "e4m3"]


def reference_offset(name, r, c, rows, cols, ir, ic):
    """The pto_spec.md §2.2 formulas, written out independently of the module."""
    r1, r0, c1, c0 = r // ir, r % ir, c // ic, c % ic
    inum = ir * ic
    return {
        "Nz": c1 * rows * ic + r1 * inum + r0 * ic + c0,
        "Zn": r1 * cols * ir + c1 * inum + c0 * ir + r0,
        "Zz": r1 * cols * ir + c1 * inum + r0 * ic + c0,
        "Nn": c1 * rows * ic + r1 * inum + c0 * ir + r0,
        "ND": r * cols + c,
        "DN": c * rows + r,
    }[name]


@st.composite
def tiles(draw):
    name = draw(st.sampled_from(layout.LAYOUTS))
    dt = draw(st.sampled_from(DTYPES))
    fractal = draw(st.sampled_from([512, 1024, 32]))
    ir, ic = layout.inner_box(name, dt, fractal)
    rows = ir * draw(st.integers(1, 4))
    cols = ic * draw(st.integers(1, 4))
    return name, dt, fractal, rows, cols, ir, ic


@settings(max_examples=150, deadline=None)
@given(tiles())
def test_offset_map_is_a_bijection_matching_the_formula(t):
    name, dt, fractal, rows, cols, ir, ic = t
    om = layout.offset_map(name, rows, cols, dt, fractal)
    assert om.shape == (rows, cols)
    assert np.array_equal(np.sort(om.reshape(-1)), np.arange(rows * cols))
    rr, cc = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    assert np.array_equal(om, reference_offset(name, rr, cc, rows, cols, ir, ic))


@settings(max_examples=150, deadline=None)
@given(tiles(), st.integers(0, 2**31))
def test_pack_unpack_round_trip_and_agree_with_offset_map(t, seed):
    name, dt, fractal, rows, cols, _, _ = t
    logical = np.random.default_rng(seed).integers(-1000, 1000, size=(rows, cols)).astype(np.int32)
    storage = layout.pack(logical, name, dt, fractal)
    assert storage.shape == (rows * cols,)
    om = layout.offset_map(name, rows, cols, dt, fractal)
    assert np.array_equal(storage[om], logical)
    assert np.array_equal(layout.unpack(storage, name, rows, cols, dt, fractal), logical)


def test_inner_boxes_per_fractal_size():
    assert layout.inner_box("Nz", "f16") == (16, 16)
    assert layout.inner_box("Nz", "s8") == (16, 32)
    assert layout.inner_box("Nz", "f32") == (16, 8)
    assert layout.inner_box("Zn", "f32") == (8, 16)
    assert layout.inner_box("Nz", "f32", 1024) == (16, 16)
    assert layout.inner_box("Zz", "e8m0", 32) == (16, 2)
    assert layout.inner_box("Nn", "e8m0", 32) == (2, 16)
    assert layout.inner_box("Nz", "s4") == (16, 64)


def test_offset_maps_are_cached_and_read_only():
    a = layout.offset_map("Nz", 32, 32, "f16")
    assert a is layout.offset_map("nz", 32, 32, "float16")
    with pytest.raises(ValueError):
        a[0, 0] = 5


def test_bad_shapes_and_names_raise_clear_errors():
    with pytest.raises(IllegalOperand, match=r"multiple of the Nz inner box 16x16"):
        layout.offset_map("Nz", 20, 16, "f16")
    with pytest.raises(UnknownName, match="unknown layout 'NZZ'"):
        layout.offset_map("NZZ", 16, 16, "f16")
    with pytest.raises(IllegalOperand, match="fractal size 256"):
        layout.inner_box("Nz", "f16", 256)
