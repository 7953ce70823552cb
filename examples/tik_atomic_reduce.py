"""A TIK kernel: multi-core reduction into GM with set_atomic_add.

Four cores each add their rows of ``x`` (shape (16, 64), float32) into one output row
``y`` (64,) declared with ``is_atomic_add=True`` (the framework clears it before the
launch, so it starts at zero). Atomic float32 add needs an Ascend910-class chip.

    tik-run examples/tik_atomic_reduce.py
"""
import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

CORES, ROWS, COLS = 4, 16, 64


def atomic_row_sum():
    set_current_compile_soc_info("Ascend910")
    tik_instance = tik.Tik(disable_debug=False)
    x = tik_instance.Tensor("float32", (ROWS, COLS), name="x", scope=tik.scope_gm)
    y = tik_instance.Tensor("float32", (COLS,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    rows_per_core = ROWS // CORES
    with tik_instance.for_range(0, CORES, block_num=CORES) as core:
        ub = tik_instance.Tensor("float32", (COLS,), name="ub", scope=tik.scope_ubuf)
        with tik_instance.for_range(0, rows_per_core) as r:
            tik_instance.data_move(ub, x[core * rows_per_core + r, 0], 0, 1, COLS // 8, 0, 0)
            tik_instance.set_atomic_add(1)              # 1 = float32
            tik_instance.data_move(y, ub, 0, 1, COLS // 8, 0, 0)
            tik_instance.set_atomic_add(0)
    tik_instance.BuildCCE(kernel_name="atomic_row_sum", inputs=[x], outputs=[y])
    return tik_instance


def reference(inputs):
    """Float32 accumulation in the cores' order (core 0 rows first), as the hardware adds."""
    acc = np.zeros(COLS, np.float32)
    for row in inputs["x"]:
        acc = (acc + row).astype(np.float32)
    return acc


if __name__ == "__main__":
    x = np.random.default_rng(2).standard_normal((ROWS, COLS)).astype(np.float32)
    tik_instance = atomic_row_sum()
    y, = tik_instance.tikdb.start_debug(feed_dict={"x": x}, interactive=False)
    ok = np.array_equal(y, reference({"x": x}))
    print("atomic_row_sum:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
