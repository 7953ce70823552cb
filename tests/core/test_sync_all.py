"""pto.sync_all: an all-core barrier honoured by both schedulers."""
import numpy as np
import pytest

from kernel_helpers import handoff
from pto_core import pto
from pto_core.program import program


def _exchange_kernel(with_barrier: bool):
    with program("exchange", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (4, 8))
        w = k.gm_arg("w", "s32", (4, 8), io="workspace")
        y = k.gm_arg("y", "s32", (4, 8), io="out")
        ub = k.ptr("ub", "s32", 0)
        with k.for_(0, 4, block_num=4, dtype="s32") as c:
            pto.mte_gm_ub(x + c * 8, ub, 0, 32, nburst=(1, 32, 32))
            handoff("MTE2", "MTE3")
            pto.mte_ub_gm(ub, w + c * 8, 32, nburst=(1, 32, 32))
            if with_barrier:
                pto.sync_all()
            handoff("MTE3", "MTE2")
            pto.mte_gm_ub(w + ((c + 1) % 4) * 8, ub, 0, 32, nburst=(1, 32, 32))   # the next core's row
            handoff("MTE2", "MTE3")
            pto.mte_ub_gm(ub, y + c * 8, 32, nburst=(1, 32, 32))
    return k.program


@pytest.mark.parametrize("order,seed", [("sequential", 0), ("random", 1), ("random", 7)])
def test_sync_all_orders_every_core(order, seed):
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    out = _exchange_kernel(True).run({"x": x}, order=order, seed=seed)["y"]
    assert np.array_equal(out, np.roll(x, -1, axis=0))


def test_without_the_barrier_a_later_core_reads_stale_data():
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    out = _exchange_kernel(False).run({"x": x})["y"]       # sequential: core 0 reads w[1] before core 1 wrote it
    assert not np.array_equal(out, np.roll(x, -1, axis=0))
    assert np.array_equal(out[3], x[0])


def test_sync_all_prints_and_parses():
    from pto_core.asm import parse
    text = _exchange_kernel(True).to_asm()
    assert "pto.sync_all" in text and parse(text).to_asm() == text
