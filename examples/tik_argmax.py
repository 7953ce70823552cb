"""A TIK kernel: argmax of each row of a float16 matrix with ``vcmax``.

One ``vcmax`` per row writes, for each of the row's 8 repeats of 128 lanes, the pair
(maximum, lane index of its first occurrence) -- the index as the raw integer bits of a
float16 slot. A second ``vcmax`` over the 8 maxima (the even slots: mask 0x5555) picks the
largest and the slot it came from, first occurrence on ties; the scalar unit reads the
indices through a uint16 view and forms ``repeat * 128 + lane``. (TIK conditions cannot
compare float16 Scalars, so the comparison stays on the vector unit, as in CANN's
arg_max_with_value.) Run it with

    tik-run examples/tik_argmax.py        (or: python examples/tik_argmax.py)
"""
import numpy as np
from tbe import tik

ROWS = 4
COLS = 1024         # 8 repeats of 128 float16 lanes
REPEATS = COLS // 128


def argmax_kernel(rows=ROWS):
    tik_instance = tik.Tik()
    x = tik_instance.Tensor("float16", (rows, COLS), name="x", scope=tik.scope_gm)
    out = tik_instance.Tensor("int32", (rows, 8), name="out", scope=tik.scope_gm)
    buf = tik_instance.Tensor("float16", (rows, COLS), name="buf", scope=tik.scope_ubuf)
    pairs = tik_instance.Tensor("float16", (2 * REPEATS,), name="pairs", scope=tik.scope_ubuf)
    best = tik_instance.Tensor("float16", (16,), name="best", scope=tik.scope_ubuf)
    res = tik_instance.Tensor("int32", (rows, 8), name="res", scope=tik.scope_ubuf)
    tik_instance.data_move(buf, x, 0, 1, rows * COLS // 16, 0, 0)
    tik_instance.vec_dup(rows * 8, res, 0, 1, 8)
    index_bits = pairs.reinterpret_cast_to("uint16")
    best_bits = best.reinterpret_cast_to("uint16")
    with tik_instance.for_range(0, rows) as r:
        tik_instance.vcmax(128, pairs, buf[r, 0], REPEATS, 1, 1, 8)
        tik_instance.vcmax([0, 0x5555], best, pairs, 1, 1, 1, 8)    # the 8 maxima: slots 0, 2, ..., 14
        slot = tik_instance.Scalar("int32", name="slot", init_value=best_bits[1])    # 2 * winning repeat
        lane = tik_instance.Scalar("int32", name="lane", init_value=index_bits[slot + 1])
        res[r, 0].set_as(slot // 2 * 128 + lane)
    tik_instance.data_move(out, res, 0, 1, rows * 8 // 8, 0, 0)
    tik_instance.BuildCCE(kernel_name="argmax", inputs=[x], outputs=[out])
    return tik_instance


def reference(x):
    """The whole output: each row's argmax in column 0, zeros elsewhere."""
    out = np.zeros((x.shape[0], 8), np.int32)
    out[:, 0] = x.argmax(axis=1)
    return out


if __name__ == "__main__":
    rng = np.random.default_rng(8)
    x = rng.integers(-2000, 2000, (ROWS, COLS)).astype(np.float16)
    x[1, 700] = x[1, 900] = 3000                       # a tie: the first occurrence wins
    tik_instance = argmax_kernel()
    out, = tik_instance.tikdb.start_debug(feed_dict={"x": x}, interactive=False)
    ok = np.array_equal(out, reference(x))
    print("argmax:", out[:, 0].tolist(), "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
