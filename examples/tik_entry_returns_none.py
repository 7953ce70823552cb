"""A TIK kernel whose entry function returns None (common in real operator code).

``interleave`` builds a kernel that interleaves two float16 vectors block by block
(32-byte blocks, using data_move's destination gaps) and returns nothing; the driver
finds the built kernel by its ``kernel_name`` in ``tbe_compat.kernels()``.

    tik-run examples/tik_entry_returns_none.py
"""
import numpy as np
from tbe import tik

import tbe_compat

BLOCKS = 12         # 32-byte blocks per input (16 float16 values each)


def interleave(kernel_name="interleave_blocks"):
    tik_instance = tik.Tik()
    a = tik_instance.Tensor("float16", (BLOCKS * 16,), name="a", scope=tik.scope_gm)
    b = tik_instance.Tensor("float16", (BLOCKS * 16,), name="b", scope=tik.scope_gm)
    out = tik_instance.Tensor("float16", (2 * BLOCKS * 16,), name="out", scope=tik.scope_gm)
    ub = tik_instance.Tensor("float16", (2 * BLOCKS * 16,), name="ub", scope=tik.scope_ubuf)
    # BLOCKS bursts of 1 block; destination gap 1 block: a -> even blocks, b -> odd blocks
    tik_instance.data_move(ub, a, 0, BLOCKS, 1, 0, 1)
    tik_instance.data_move(ub[16], b, 0, BLOCKS, 1, 0, 1)
    tik_instance.data_move(out, ub, 0, 1, 2 * BLOCKS, 0, 0)
    tik_instance.BuildCCE(kernel_name=kernel_name, inputs=[a, b], outputs=[out])


def reference(inputs):
    a, b = inputs["a"], inputs["b"]
    return np.stack([a.reshape(BLOCKS, 16), b.reshape(BLOCKS, 16)], axis=1).reshape(-1)


if __name__ == "__main__":
    rng = np.random.default_rng(4)
    a = rng.standard_normal(BLOCKS * 16).astype(np.float16)
    b = rng.standard_normal(BLOCKS * 16).astype(np.float16)
    assert interleave() is None
    tik_instance = tbe_compat.kernels()["interleave_blocks"]
    out, = tik_instance.tikdb.start_debug({"a": a, "b": b}, False)
    ok = np.array_equal(out, reference({"a": a, "b": b}))
    print("interleave_blocks:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
