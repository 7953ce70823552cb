"""A TIK kernel: ``z = x + y`` on float32 vectors across 2 cores, with tail handling.

The cores get uneven shares (computed with Scalars from the core index). Each core moves its
share to UB, adds full repeats of 64 lanes with one ``vec_add`` (a Scalar repeat count),
then the tail of its share (fewer than 64 elements) with a second ``vec_add`` whose mask is
the tail length -- masked-off lanes are not touched. Run it with

    tik-run examples/tik_vector_add_tail.py        (or: python examples/tik_vector_add_tail.py)
"""
import numpy as np
from tbe import tik

N = 2000            # float32 elements in total
FIRST = 1032        # core 0's share (core 1 gets N - FIRST); both are whole 32-byte blocks
LANES = 64          # float32 lanes per repeat
BLOCK = 8           # float32 elements per 32-byte block


def vector_add(n=N, first=FIRST):
    tik_instance = tik.Tik()
    x = tik_instance.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
    y = tik_instance.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
    z = tik_instance.Tensor("float32", (n,), name="z", scope=tik.scope_gm)
    share = max(first, n - first)
    with tik_instance.for_range(0, 2, block_num=2) as core:
        xa = tik_instance.Tensor("float32", (share,), name="xa", scope=tik.scope_ubuf)
        ya = tik_instance.Tensor("float32", (share,), name="ya", scope=tik.scope_ubuf)
        count = tik_instance.Scalar("int32", name="count")
        base = tik_instance.Scalar("int32", name="base")
        with tik_instance.if_scope(core == 0):
            count.set_as(first)
            base.set_as(0)
        with tik_instance.else_scope():
            count.set_as(n - first)
            base.set_as(first)
        blocks = tik_instance.Scalar("int32", name="blocks", init_value=count // BLOCK)
        tik_instance.data_move(xa, x[base], 0, 1, blocks, 0, 0)
        tik_instance.data_move(ya, y[base], 0, 1, blocks, 0, 0)
        full = tik_instance.Scalar("int32", name="full", init_value=count // LANES)
        tail = tik_instance.Scalar("int32", name="tail", init_value=count % LANES)
        tik_instance.vec_add(LANES, xa, xa, ya, full, 8, 8, 8)
        with tik_instance.if_scope(tail > 0):
            done = full * LANES
            tik_instance.vec_add(tail, xa[done], xa[done], ya[done], 1, 8, 8, 8)
        tik_instance.data_move(z[base], xa, 0, 1, blocks, 0, 0)
    tik_instance.BuildCCE(kernel_name="vector_add_tail", inputs=[x, y], outputs=[z])
    return tik_instance


def reference(x, y):
    return x + y


if __name__ == "__main__":
    rng = np.random.default_rng(5)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    tik_instance = vector_add()
    z, = tik_instance.tikdb.start_debug(feed_dict={"x": x, "y": y}, interactive=False)
    ok = np.array_equal(z, reference(x, y))
    print("vector_add_tail:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
