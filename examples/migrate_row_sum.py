"""Migrating a TIK kernel to PTO one call at a time (a mixed kernel at every step).

The kernel is the multi-core float32 row sum of ``tik_atomic_reduce.py``: four cores add
their rows of ``x`` (16, 64) into ``y`` (64,) with GM atomic adds. ``row_sum(step)``
builds it after ``step`` migration steps; every step runs, and its outputs must equal
step 0's bit for bit:

0. the TIK kernel as written;
1. ``data_move`` GM -> UB becomes ``pto.mte_gm_ub`` on the tensors' PTO pointers
   (``tensor.pto_ptr()``): TIK counts 32-byte blocks, PTO counts bytes;
2. ``set_atomic_add(1)`` / ``set_atomic_add(0)`` become ``pto.set_atomic_f32()`` +
   ``pto.set_atomic_add()`` / ``pto.set_atomic_none()``;
3. ``data_move`` UB -> GM becomes ``pto.mte_ub_gm``: no TIK data call is left; the TIK
   container still provides the tensors, the loops and the automatic synchronisation;
4. the same kernel as a plain PTO program (``pto_core.program``): kernel arguments,
   a UB pointer, the multi-core loop and the ``set_flag``/``wait_flag`` pairs auto-sync
   inserted in steps 0-3, written out.

    tik-run examples/migrate_row_sum.py
    tik-migrate examples/migrate_row_sum.py --kernel row_sum_step2     # what step 2 became
"""
import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from pto_core import pto
from pto_core.program import program

CORES, ROWS, COLS = 4, 16, 64
ROW_BYTES = COLS * 4                       # one float32 row: 256 bytes = 8 blocks of 32 bytes
STEPS = 4                                  # TIK steps 0..3; step 4 is the plain PTO program


def row_sum(step=0):
    """The TIK kernel after ``step`` migration steps (BuildCCE name ``row_sum_step<step>``)."""
    set_current_compile_soc_info("Ascend910")
    tik_instance = tik.Tik()
    x = tik_instance.Tensor("float32", (ROWS, COLS), name="x", scope=tik.scope_gm)
    y = tik_instance.Tensor("float32", (COLS,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    rows_per_core = ROWS // CORES
    with tik_instance.for_range(0, CORES, block_num=CORES) as core:
        ub = tik_instance.Tensor("float32", (COLS,), name="ub", scope=tik.scope_ubuf)
        with tik_instance.for_range(0, rows_per_core) as r:
            row = x[core * rows_per_core + r, 0]
            if step < 1:
                tik_instance.data_move(ub, row, 0, 1, COLS // 8, 0, 0)
            else:   # 1 burst of 8 blocks -> 1 burst of 256 bytes (l2_cache_ctl 0)
                pto.mte_gm_ub(row.pto_ptr(), ub.pto_ptr(), 0, ROW_BYTES, nburst=(1, ROW_BYTES, ROW_BYTES))
            if step < 2:
                tik_instance.set_atomic_add(1)      # 1 = float32
            else:
                pto.set_atomic_f32()
                pto.set_atomic_add()
            if step < 3:
                tik_instance.data_move(y, ub, 0, 1, COLS // 8, 0, 0)
            else:
                pto.mte_ub_gm(ub.pto_ptr(), y.pto_ptr(), ROW_BYTES, nburst=(1, ROW_BYTES, ROW_BYTES))
            if step < 2:
                tik_instance.set_atomic_add(0)
            else:
                pto.set_atomic_none()
    tik_instance.BuildCCE(kernel_name=f"row_sum_step{step}", inputs=[x], outputs=[y])
    return tik_instance


def row_sum_pto():
    """Step 4: the kernel as a plain PTO program (no TIK left)."""
    with program("row_sum_pto", target="Ascend910") as k:
        x = k.gm_arg("x", "f32", (ROWS, COLS))
        y = k.gm_arg("y", "f32", (COLS,), io="out", fill="zero")     # TIK is_atomic_add: cleared before launch
        ub = k.ptr("ub", "f32", 0)
        rows_per_core = ROWS // CORES
        with k.for_(0, CORES, block_num=CORES) as core:
            with k.for_(0, rows_per_core) as r:
                pto.mte_gm_ub(x + (core * rows_per_core + r) * COLS, ub, 0, ROW_BYTES,
                              nburst=(1, ROW_BYTES, ROW_BYTES))
                pto.set_atomic_f32()
                pto.set_atomic_add()
                pto.set_flag("MTE2", "MTE3", 0)          # the load is complete before the store reads UB
                pto.wait_flag("MTE2", "MTE3", 0)
                pto.mte_ub_gm(ub, y, ROW_BYTES, nburst=(1, ROW_BYTES, ROW_BYTES))
                pto.set_atomic_none()
                pto.set_flag("MTE3", "MTE2", 0)          # the next iteration's load overwrites UB
                pto.wait_flag("MTE3", "MTE2", 0)
    return k.program


def reference(inputs):
    """Float32 accumulation in the cores' order (core 0 rows first), as the hardware adds."""
    acc = np.zeros(COLS, np.float32)
    for row in inputs["x"]:
        acc = (acc + row).astype(np.float32)
    return acc


if __name__ == "__main__":
    x = np.random.default_rng(5).standard_normal((ROWS, COLS)).astype(np.float32)
    outputs = [row_sum(step).tikdb.start_debug({"x": x}, interactive=False)[0] for step in range(STEPS)]
    outputs.append(row_sum_pto().run({"x": x})["y"])
    ok = np.array_equal(outputs[0], reference({"x": x}))
    for step, y in enumerate(outputs):
        same = y.tobytes() == outputs[0].tobytes()
        ok = ok and same
        print(f"row_sum step {step}: {'identical to step 0' if same else 'DIFFERENT'}")
    print("migrate_row_sum:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
