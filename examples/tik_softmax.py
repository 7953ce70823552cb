"""A TIK kernel: softmax over the rows of a float16 matrix, split across 2 cores.

Per row (128 elements = one float16 repeat): ``vec_reduce_max`` -> row maximum (read into a
Scalar), ``vec_adds(-max)``, ``vec_exp``, ``vec_reduce_add`` -> row sum, then ``vec_muls`` by
the reciprocal computed on the scalar unit. Run it with

    tik-run examples/tik_softmax.py        (or: python examples/tik_softmax.py)

The result is compared with numpy (float64 softmax) within float16 accuracy.
"""
import numpy as np
from tbe import tik

ROWS = 16           # rows in total, 8 per core
COLS = 128          # float16 elements per row: one repeat
CORES = 2


def softmax_kernel(rows=ROWS):
    tik_instance = tik.Tik()
    x = tik_instance.Tensor("float16", (rows, COLS), name="x", scope=tik.scope_gm)
    y = tik_instance.Tensor("float16", (rows, COLS), name="y", scope=tik.scope_gm)
    per_core = rows // CORES
    with tik_instance.for_range(0, CORES, block_num=CORES) as core:
        buf = tik_instance.Tensor("float16", (per_core, COLS), name="buf", scope=tik.scope_ubuf)
        red = tik_instance.Tensor("float16", (16,), name="red", scope=tik.scope_ubuf)
        work = tik_instance.Tensor("float16", (16,), name="work", scope=tik.scope_ubuf)
        tik_instance.data_move(buf, x[core * per_core, 0], 0, 1, per_core * COLS // 16, 0, 0)
        with tik_instance.for_range(0, per_core) as r:
            row = buf[r, 0]
            tik_instance.vec_reduce_max(COLS, red, row, work, 1, 8)
            row_max = tik_instance.Scalar("float16", name="row_max", init_value=red[0])
            tik_instance.vec_adds(COLS, row, row, -row_max, 1, 8, 8)
            tik_instance.vec_exp(COLS, row, row, 1, 8, 8)
            tik_instance.vec_reduce_add(COLS, red, row, work, 1, 8)
            total = tik_instance.Scalar("float32", name="total")
            total.set_as(red[0])
            inv = tik_instance.Scalar("float32", name="inv", init_value=1.0 / total)
            inv16 = tik_instance.Scalar("float16", name="inv16")
            tik_instance.scalar_conv("", inv16, inv)
            tik_instance.vec_muls(COLS, row, row, inv16, 1, 8, 8)
        tik_instance.data_move(y[core * per_core, 0], buf, 0, 1, per_core * COLS // 16, 0, 0)
    tik_instance.BuildCCE(kernel_name="softmax", inputs=[x], outputs=[y])
    return tik_instance


#: float16 results within this of the float64 softmax (the pytest plugin's tolerance for this script)
TOLERANCE = {"atol": 2e-3}


def reference(x):
    e = np.exp(x.astype(np.float64) - x.astype(np.float64).max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


if __name__ == "__main__":
    from tbe.common.platform import set_current_compile_soc_info
    set_current_compile_soc_info("Ascend910A")      # float16 exp/ln and scalar_conv on this chip
    x = np.random.default_rng(3).uniform(-4, 4, (ROWS, COLS)).astype(np.float16)
    tik_instance = softmax_kernel()
    y, = tik_instance.tikdb.start_debug(feed_dict={"x": x}, interactive=False)
    err = np.abs(y.astype(np.float64) - reference(x)).max()
    ok = err < TOLERANCE["atol"] and np.allclose(y.astype(np.float64).sum(axis=1), 1, atol=2e-2)
    print(f"softmax: max abs error {err:.2e}:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
