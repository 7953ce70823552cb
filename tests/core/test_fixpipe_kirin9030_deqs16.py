"""Kirin9030 FIXPIPE int32 -> int16 (DEQS16 / VDEQS16).

pto-isa ``include/pto/npu/kirin9030/common.hpp`` (``GetScalarPreQuantMode`` /
``GetVectorPreQuantMode``) maps an int32 accumulator with an int16 destination to
``QuantMode_t::DEQS16`` / ``VDEQS16`` on Kirin9030; ``deqs16_*`` used to be refused there.
"""
import numpy as np
import pytest

from pto_core import Machine, layout, pto
from pto_core.errors import UnsupportedOp
from pto_core.numerics.quant import make_word


def _acc(m, values):
    src = m.ptr("l0c", "s32", 0)
    m.write(src, layout.pack(values, "Nz", src.dtype, fractal=1024))
    return src


def _expected(acc, scale, offset):
    y = np.clip(acc.astype(np.int64) * scale, -(1 << 16), (1 << 16) - 1)   # exact products, S17
    return np.clip(y + offset, -32768, 32767).astype(np.int16)


ACC = (np.arange(16 * 32, dtype=np.int64).reshape(16, 32) * 4 * 97 - 99000).astype(np.int32)


def test_deqs16_scalar_on_kirin9030():
    m = Machine("Kirin9030")
    src = _acc(m, ACC)
    dst = m.ptr("l1", "s16", 0)
    pto.mte_l0c_l1(src, dst, 16, 32, 16, 32, pre_quant=(0.25, {"mode": "deqs16_scalar"}), nz2nd=True)
    got = m.read(dst, (16 * 32,)).reshape(16, 32)
    assert np.array_equal(got, _expected(ACC, 0.25, 0))
    assert m.reports == []


def test_deqs16_vec_on_kirin9030_reads_fb_words():
    m = Machine("Kirin9030")
    src = _acc(m, ACC)
    scales = np.where(np.arange(32) % 2 == 0, 0.25, 0.5)
    offsets = np.arange(32) * 7 - 100
    words = np.array([make_word(s, offset=o, offset_bits=17) for s, o in zip(scales, offsets)], np.uint64)
    m.write(m.ptr("fb", "u8", 0), words.view(np.uint8))
    dst = m.ptr("l1", "s16", 0)
    pto.mte_l0c_l1(src, dst, 16, 32, 16, 32, pre_quant=(m.ptr("fb", "f32", 0), {"mode": "deqs16_vec"}), nz2nd=True)
    got = m.read(dst, (16 * 32,)).reshape(16, 32)
    assert np.array_equal(got, _expected(ACC, scales, offsets))


def test_deqs16_still_absent_on_kirinx90():
    m = Machine("KirinX90")
    src = _acc(m, ACC)
    with pytest.raises(UnsupportedOp, match="deqs16_scalar does not exist on KirinX90"):
        pto.mte_l0c_l1(src, m.ptr("l1", "s16", 0), 16, 32, 16, 32,
                       pre_quant=(0.25, {"mode": "deqs16_scalar"}), nz2nd=True)
