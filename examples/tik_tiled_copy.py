"""A TIK kernel: tiled GM -> UB -> GM copy across 2 cores, with tail handling.

The work is split unevenly between the cores (Scalars computed from the core index),
each core copies full 256-element tiles, then the remaining whole 32-byte blocks, then
the last partial block by "address fallback" (re-copying the final 8 elements, which
overlap data already written with the same values). Run it with

    tik-run examples/tik_tiled_copy.py        (or: python examples/tik_tiled_copy.py)
"""
import numpy as np
from tbe import tik

N = 2011            # elements in total (not a multiple of the tile or of a 32-byte block)
TILE = 256          # float32 elements per UB tile
BLOCK = 8           # float32 elements per 32-byte block


def tiled_copy(n=N):
    tik_instance = tik.Tik()
    src = tik_instance.Tensor("float32", (n,), name="src", scope=tik.scope_gm)
    dst = tik_instance.Tensor("float32", (n,), name="dst", scope=tik.scope_gm)
    first = (n + 1) // 2                                # core 0 takes the larger half
    with tik_instance.for_range(0, 2, block_num=2) as core:
        ub = tik_instance.Tensor("float32", (TILE,), name="ub", scope=tik.scope_ubuf)
        count = tik_instance.Scalar("int32", name="count")
        base = tik_instance.Scalar("int32", name="base")
        with tik_instance.if_scope(core == 0):
            count.set_as(first)
            base.set_as(0)
        with tik_instance.else_scope():
            count.set_as(n - first)
            base.set_as(first)
        tiles = tik_instance.Scalar("int32", name="tiles", init_value=count // TILE)
        with tik_instance.for_range(0, tiles) as t:
            tik_instance.data_move(ub, src[base + t * TILE], 0, 1, TILE // BLOCK, 0, 0)
            tik_instance.data_move(dst[base + t * TILE], ub, 0, 1, TILE // BLOCK, 0, 0)
        done = tik_instance.Scalar("int32", name="done", init_value=tiles * TILE)
        blocks = tik_instance.Scalar("int32", name="blocks", init_value=(count - done) // BLOCK)
        with tik_instance.if_scope(blocks > 0):
            tik_instance.data_move(ub, src[base + done], 0, 1, blocks, 0, 0)
            tik_instance.data_move(dst[base + done], ub, 0, 1, blocks, 0, 0)
        with tik_instance.if_scope(count % BLOCK != 0):
            last = base + count - BLOCK                 # address fallback: the last full block
            tik_instance.data_move(ub, src[last], 0, 1, 1, 0, 0)
            tik_instance.data_move(dst[last], ub, 0, 1, 1, 0, 0)
    tik_instance.BuildCCE(kernel_name="tiled_copy", inputs=[src], outputs=[dst])
    return tik_instance


def reference(inputs):
    """Expected outputs for a start_debug feed dict (the pytest plugin's convention)."""
    return inputs["src"].copy()


if __name__ == "__main__":
    x = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    tik_instance = tiled_copy()
    y, = tik_instance.tikdb.start_debug(feed_dict={"src": x}, interactive=False)
    ok = np.array_equal(y, reference({"src": x}))
    print("tiled_copy:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
