"""A TIK kernel with a dynamic shape: InputScalars and a flowtable.

The length ``total`` of the GM tensors is an InputScalar (the feed arrays may have any
length); the host computes the tiling (``tiles``, ``tail``) and passes it through
``BuildCCE(flowtable=[...])``, as production dynamic-shape kernels do. The kernel
computes ``y = 3 * x - 1`` (int32): full tiles move through UB and are updated element
by element with Scalars; the tail reuses the same code (``total`` must be >= 8).

    tik-run examples/tik_dynamic_shape.py 777
"""
import sys

import numpy as np
from tbe import tik

TILE = 64           # int32 elements per tile (8 blocks)


def affine_kernel():
    tik_instance = tik.Tik()
    total = tik_instance.InputScalar("int32", name="total")
    tiles = tik_instance.InputScalar("int32", name="tiles")
    tail = tik_instance.InputScalar("int32", name="tail")
    x = tik_instance.Tensor("int32", (total,), name="x", scope=tik.scope_gm)
    y = tik_instance.Tensor("int32", (total,), name="y", scope=tik.scope_gm)
    ub = tik_instance.Tensor("int32", (TILE,), name="ub", scope=tik.scope_ubuf)
    value = tik_instance.Scalar("int32", name="value")

    def affine(count):
        with tik_instance.for_range(0, count) as i:
            value.set_as(ub[i])
            ub[i].set_as(value * 3 - 1)

    with tik_instance.for_range(0, tiles) as t:
        tik_instance.data_move(ub, x[t * TILE], 0, 1, TILE // 8, 0, 0)
        affine(TILE)
        tik_instance.data_move(y[t * TILE], ub, 0, 1, TILE // 8, 0, 0)
    with tik_instance.if_scope(tail > 0):
        # whole blocks, then the final partial block by address fallback (needs total >= 8)
        start = tiles * TILE
        blocks = tail // 8
        with tik_instance.if_scope(blocks > 0):
            tik_instance.data_move(ub, x[start], 0, 1, blocks, 0, 0)
            affine(blocks * 8)
            tik_instance.data_move(y[start], ub, 0, 1, blocks, 0, 0)
        with tik_instance.if_scope(tail % 8 != 0):
            tik_instance.data_move(ub, x[total - 8], 0, 1, 1, 0, 0)
            with tik_instance.if_scope(blocks > 0):
                affine(8)
            with tik_instance.else_scope():
                # nothing of the last block was written yet: update all of it
                affine(8)
            tik_instance.data_move(y[total - 8], ub, 0, 1, 1, 0, 0)
    tik_instance.BuildCCE(kernel_name="affine_dynamic", inputs=[x, total], outputs=[y],
                          flowtable=[tiles, tail])
    return tik_instance


def tiling(n):
    return {"total": n, "tiles": n // TILE, "tail": n % TILE}


def reference(inputs):
    return (inputs["x"].astype(np.int64) * 3 - 1).astype(np.int32)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    x = np.random.default_rng(3).integers(-1000, 1000, n).astype(np.int32)
    tik_instance = affine_kernel()
    y, = tik_instance.tikdb.start_debug(feed_dict={"x": x, **tiling(n)}, interactive=False)
    ok = np.array_equal(y, reference({"x": x}))
    print(f"affine_dynamic (n={n}):", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
