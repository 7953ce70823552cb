"""pto.ub.vrpac / viou / vaadd / rpn_cor / rpn_cor_diag / set_rpn_* (pto_core/ops/vector_nms.py) and
pto.assert_in_bounds / pto.assert_in_range (pto_core/ops/assertions.py) against independent per-element references."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import IllegalOperand, OutOfBounds, UnsupportedOp, pto

from vector_harness import machine, ub_bytes

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
P, D, S = 0, 8192, 16384          # byte offsets of proposals, destination, second source


def _put(m, off, arr):
    raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
    ub_bytes(m)[off:off + raw.size] = raw


def _get(m, off, n, dt):
    return ub_bytes(m)[off:off + n * np.dtype(dt).itemsize].view(dt).copy()


def _boxes(rng, n, dt):
    xy = rng.integers(0, 60, (n, 2)).astype(np.float64)
    wh = rng.integers(0, 40, (n, 2)).astype(np.float64)
    b = np.zeros((n, 8), dt)
    b[:, 0:2], b[:, 2:4], b[:, 4] = xy, xy + wh, rng.random(n)
    return b


def _r(x, dt):
    return float(np.array(x, np.float64).astype(dt))


def _area_ref(b, off, dt):
    return _r(_r(_r(b[2] - b[0], dt) + off, dt) * _r(_r(b[3] - b[1], dt) + off, dt), dt)


def _inter_ref(a, b, off, dt):
    w = _r(_r(min(a[2], b[2]) - max(a[0], b[0]), dt) + off, dt)
    h = _r(_r(min(a[3], b[3]) - max(a[1], b[1]), dt) + off, dt)
    return _r(max(w, 0.0) * max(h, 0.0), dt)


@SETTINGS
@given(seed=st.integers(0, 2 ** 31), repeat=st.integers(1, 3), off=st.sampled_from([None, 0.0, 1.0, 0.5]),
       chip_dt=st.sampled_from([("Ascend910A", np.float16), ("Ascend310P3", np.float16),
                                ("Ascend310P3", np.float32)]))
def test_vrpac_viou_vaadd_match_the_per_proposal_reference(seed, repeat, off, chip_dt):
    chip, dt = chip_dt
    rng = np.random.default_rng(seed)
    m = machine(chip)
    n = 16 * repeat
    boxes = _boxes(rng, n, dt)
    _put(m, P, boxes)
    if off is not None:
        pto.ub.set_rpn_offset(off)
    o = 1.0 if off is None else off          # reset value of the RPN offset register
    src, dst = m.ptr("ub", np.dtype(dt).name, P), m.ptr("ub", np.dtype(dt).name, D)
    pto.ub.vrpac(dst, src, repeat)
    assert list(_get(m, D, n, dt)) == [_area_ref(b, o, dt) for b in boxes]

    group = m.ptr("ub", np.dtype(dt).name, P + 16 * 8 * np.dtype(dt).itemsize * (repeat - 1))
    pto.ub.viou(dst, src, group, repeat)
    g = boxes[16 * (repeat - 1):]
    want = [_inter_ref(a, b, o, dt) for a in boxes for b in g]
    assert list(_get(m, D, n * 16, dt)) == want

    areas = rng.integers(0, 3000, n + 16).astype(dt)
    _put(m, S, areas)
    k = 32 // np.dtype(dt).itemsize                     # src1 one 32 B block further
    a0, a1 = m.ptr("ub", np.dtype(dt).name, S), m.ptr("ub", np.dtype(dt).name, S + 32)
    pto.ub.vaadd(dst, a0, a1, repeat)
    want = [_r(float(x) + float(y), dt) for x in areas[:n] for y in areas[k:k + 16]]
    assert list(_get(m, D, n * 16, dt)) == want


def test_repeat_zero_is_a_no_op_and_errors_name_the_operand():
    m = machine("Ascend910A")
    before = ub_bytes(m).copy()
    h = m.ptr("ub", "f16", 0)
    pto.ub.viou(h, h, h, 0)
    assert (ub_bytes(m) == before).all()
    with pytest.raises(IllegalOperand, match="src1 dtype f32 differs from dst dtype f16"):
        pto.ub.vaadd(h, h, m.ptr("ub", "f32", 64), 1)
    with pytest.raises(UnsupportedOp, match="vrpac"):
        pto.ub.vrpac(m.ptr("ub", "f32", 0), m.ptr("ub", "f32", 512), 1)
    with pytest.raises(IllegalOperand, match="repeat"):
        pto.ub.vrpac(h, h, 256)
    with pytest.raises(IllegalOperand, match="expects a number"):
        pto.ub.set_rpn_offset("one")
    m2 = machine("A2A3")
    with pytest.raises(UnsupportedOp, match="viou"):
        pto.ub.viou(m2.ptr("ub", "f16", 0), m2.ptr("ub", "f16", 0), m2.ptr("ub", "f16", 0), 1)


def _cor_ref(rows, vec, ir):
    for r, v in zip(rows.reshape(-1), vec.reshape(-1)):
        if v == 0:
            ir |= int(r)
    return ir


def _diag_ref(rows, ir, old):
    """RPN_COR_DIAG_KEEPS_ZERO_ENTRIES: an entry already 0 stays kept (and its row joins the register)."""
    out = []
    for k in range(16):
        if old[k] and ir >> k & 1:
            out.append(1)
        else:
            out.append(0)
            ir |= int(rows[k])
    return out, ir


@SETTINGS
@given(seed=st.integers(0, 2 ** 31), repeat=st.integers(0, 4), s0=st.integers(1, 3), s1=st.integers(1, 3),
       ir0=st.integers(0, 0xFFFF))
def test_rpn_cor_and_diag_match_the_sequential_reference(seed, repeat, s0, s1, ir0):
    rng = np.random.default_rng(seed)
    m = machine("Ascend910A")
    mat = rng.integers(0, 1 << 16, 512, dtype=np.uint16) & rng.integers(0, 1 << 16, 512, dtype=np.uint16)
    vec = (rng.random(512) < 0.5).astype(np.uint16) * rng.integers(1, 9, 512, dtype=np.uint16)
    _put(m, 0, mat)
    _put(m, 2048, vec)
    diag_old = (rng.random(16) < 0.7).astype(np.uint16) * rng.integers(1, 3, 16, dtype=np.uint16)
    _put(m, 4096, diag_old)
    pto.ub.set_rpn_cor_ir(ir0)
    pto.ub.rpn_cor(m.ptr("ub", "u16", 0), m.ptr("ub", "u16", 2048), repeat, rep_stride=(s0, s1))
    rows = np.stack([mat[r * s0 * 16:r * s0 * 16 + 16] for r in range(repeat)]) if repeat else mat[:0]
    ents = np.stack([vec[r * s1 * 16:r * s1 * 16 + 16] for r in range(repeat)]) if repeat else vec[:0]
    ir = _cor_ref(rows, ents, ir0)
    assert m.context(0).spr["RPN_COR_IR"] == ir
    pto.ub.rpn_cor_diag(m.ptr("ub", "u16", 4096), m.ptr("ub", "u16", 0))
    out, ir = _diag_ref(mat[:16], ir, diag_old)
    assert list(_get(m, 4096, 16, np.uint16)) == out
    assert m.context(0).spr["RPN_COR_IR"] == ir


def test_rpn_cor_errors():
    m = machine("Ascend910A")
    u = m.ptr("ub", "u16", 0)
    with pytest.raises(IllegalOperand, match="RPN_COR_IR was never set"):
        pto.ub.rpn_cor(u, u, 1)
    with pytest.raises(IllegalOperand, match="src0 holds 16-bit suppression words, got f32"):
        pto.ub.rpn_cor(m.ptr("ub", "f32", 0), u, 1)
    with pytest.raises(IllegalOperand, match="value"):
        pto.ub.set_rpn_cor_ir(1 << 16)


def test_assert_in_bounds_passes_inside_and_on_empty_ranges_and_raises_outside():
    machine("A2A3")
    pto.assert_in_bounds(0, 16, 16)
    pto.assert_in_bounds(20, 20, 16)                  # nothing accessed
    pto.assert_in_bounds(30, 10, 16)
    with pytest.raises(OutOfBounds, match=r"src needs elements \[8, 24\) but the tensor has only 16"):
        pto.assert_in_bounds(8, 24, 16, what="src")
    with pytest.raises(OutOfBounds, match="starts 2 elements before the tensor"):
        pto.assert_in_bounds(-2, 4, 16)


def test_assert_in_bounds_with_a_negative_size_says_the_tensor_has_no_room():
    """A size computed at run time from a start past the room's end is negative: the message says how far past
    the end the tensor starts, not "has only -3 elements"; an empty range still passes."""
    machine("A2A3")
    pto.assert_in_bounds(4, 4, -3)
    with pytest.raises(OutOfBounds, match=r"x needs elements \[0, 4\) but the tensor has no room: it starts 3 "
                                          r"elements past the end") as e:
        pto.assert_in_bounds(0, 4, -3, what="x")
    assert "only -3" not in str(e.value)


def test_assert_in_range_passes_at_both_ends_and_raises_outside():
    machine("A2A3")
    pto.assert_in_range(1, 1, 8)
    pto.assert_in_range(8, 1, 8)
    with pytest.raises(IllegalOperand, match=r"block count = 9 is outside \[1, 8\]"):
        pto.assert_in_range(9, 1, 8, what="block count")
    with pytest.raises(IllegalOperand, match=r"a run-time value = 0 is outside \[1, 8\]"):
        pto.assert_in_range(0, 1, 8)
