"""The repeat-overlap check of the vector APIs (`vector_common._overlaps`, TIK's address-overlap rule for
repeat_times > 1) compares all pairs of consecutive repeats with numpy arrays; the loop over pairs it
replaced (still the path for huge addresses) must give the same verdict."""
import random
from types import SimpleNamespace

import numpy as np
import pytest

from pto_core import dtype
from tbe_compat.tik import vector_common as vc


def _op(dt: str, offset: int):
    return SimpleNamespace(dt=dtype(dt), static_offset=offset)


@pytest.mark.parametrize("unit", range(4))
def test_array_overlap_check_matches_the_loop_over_repeat_pairs(unit, monkeypatch):
    rng = random.Random(unit)
    verdicts = set()
    for _ in range(250):
        ddt, sdt = rng.choice(["f16", "f32", "s8", "s32"]), rng.choice(["f16", "f32", "s8", "s32"])
        par = 256 // max(dtype(ddt).bits // 8, dtype(sdt).bits // 8, 1)
        lanes = np.array([rng.random() < 0.7 for _ in range(par)]) if rng.random() < 0.5 else np.ones(par, bool)
        gd = vc.Geo(rng.choice([0, 1, 2, 8]), rng.choice([0, 1, 4, 8, 16, 255]))
        gs = vc.Geo(rng.choice([0, 1, 2, 8]), rng.choice([0, 1, 4, 8, 16, 255]))
        dst, src = _op(ddt, rng.randrange(0, 4096)), _op(sdt, rng.randrange(0, 4096))
        repeat = rng.choice([2, 3, 8, 64, 255])
        dbl = rng.choice([None, None, 8, 16])
        args = (dst, gd, src, gs, lanes, repeat, unit)
        fast = vc._overlaps(*args, many=True, dst_block_len=dbl)
        with monkeypatch.context() as m:
            m.setattr(vc, "_OVERLAP_ARRAY_LIMIT", 0)           # the loop over repeat pairs
            slow = vc._overlaps(*args, many=True, dst_block_len=dbl)
        assert fast == slow, (ddt, sdt, gd, gs, dst.static_offset, src.static_offset, repeat, dbl, lanes.tolist())
        verdicts.add(fast)
    assert verdicts == {True, False}
