"""Migrating a TIK vector kernel to PTO one call at a time: ``z = (x + y) * 0.5``.

Two cores each take 1024 float16 elements: two loads, ``vec_add``, ``vec_muls``, one
store. ``scaled_add(step)`` builds the kernel after ``step`` migration steps; each step
runs and must give step 0's outputs bit for bit (``migration_guide/worked_migration.md``
walks through it):

0. the TIK kernel as written;
1. both ``data_move`` GM -> UB become ``pto.mte_gm_ub`` (64 blocks of 32 bytes -> 2048 bytes);
2. ``vec_add`` becomes ``pto.ub.vadd`` (mask and repeat stride become clauses);
3. ``vec_muls`` becomes ``pto.ub.vmuls``;
4. ``data_move`` UB -> GM becomes ``pto.mte_ub_gm``: no TIK data or vector call is left;
5. the kernel as a plain PTO program (``scaled_add_pto``): the pointers, the multi-core
   loop and the synchronisation auto-sync inserted, written out.

    tik-run examples/migrate_vector_add.py
    tik-migrate examples/migrate_vector_add.py --kernel scaled_add_step2
"""
import numpy as np
from tbe import tik

from pto_core import pto
from pto_core.program import program

CORES = 2
PER_CORE = 1024                  # float16 elements per core
N = CORES * PER_CORE
LANES = 128                      # float16 lanes per vector repeat
REPEATS = PER_CORE // LANES      # 8
NBYTES = PER_CORE * 2            # 2048 bytes = 64 blocks of 32 bytes
STEPS = 5                        # TIK steps 0..4; step 5 is the plain PTO program


def scaled_add(step=0):
    """The kernel after ``step`` migration steps (BuildCCE name ``scaled_add_step<step>``)."""
    tik_instance = tik.Tik()
    x = tik_instance.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    y = tik_instance.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
    z = tik_instance.Tensor("float16", (N,), name="z", scope=tik.scope_gm)
    with tik_instance.for_range(0, CORES, block_num=CORES) as core:
        xa = tik_instance.Tensor("float16", (PER_CORE,), name="xa", scope=tik.scope_ubuf)
        ya = tik_instance.Tensor("float16", (PER_CORE,), name="ya", scope=tik.scope_ubuf)
        base = core * PER_CORE
        if step < 1:
            tik_instance.data_move(xa, x[base], 0, 1, NBYTES // 32, 0, 0)
            tik_instance.data_move(ya, y[base], 0, 1, NBYTES // 32, 0, 0)
        else:
            pto.mte_gm_ub(x[base].pto_ptr(), xa.pto_ptr(), 0, NBYTES, nburst=(1, NBYTES, NBYTES))
            pto.mte_gm_ub(y[base].pto_ptr(), ya.pto_ptr(), 0, NBYTES, nburst=(1, NBYTES, NBYTES))
        if step < 2:
            tik_instance.vec_add(LANES, xa, xa, ya, REPEATS, 8, 8, 8)
        else:
            pto.ub.vadd(xa.pto_ptr(), xa.pto_ptr(), ya.pto_ptr(), REPEATS, mask=LANES, rep_stride=(8, 8, 8))
        if step < 3:
            tik_instance.vec_muls(LANES, xa, xa, 0.5, REPEATS, 8, 8)
        else:
            pto.ub.vmuls(xa.pto_ptr(), xa.pto_ptr(), 0.5, REPEATS, mask=LANES, rep_stride=(8, 8))
        if step < 4:
            tik_instance.data_move(z[base], xa, 0, 1, NBYTES // 32, 0, 0)
        else:
            pto.mte_ub_gm(xa.pto_ptr(), z[base].pto_ptr(), NBYTES, nburst=(1, NBYTES, NBYTES))
    tik_instance.BuildCCE(kernel_name=f"scaled_add_step{step}", inputs=[x, y], outputs=[z])
    return tik_instance


def scaled_add_pto():
    """Step 5: the same kernel as a plain PTO program."""
    with program("scaled_add_pto", target="Ascend310") as k:
        x = k.gm_arg("x", "f16", (N,))
        y = k.gm_arg("y", "f16", (N,))
        z = k.gm_arg("z", "f16", (N,), io="out")
        xa = k.ptr("ub", "f16", 0)                   # where TIK placed xa and ya
        ya = k.ptr("ub", "f16", NBYTES)
        with k.for_(0, CORES, block_num=CORES) as core:
            base = core * PER_CORE
            pto.mte_gm_ub(x + base, xa, 0, NBYTES, nburst=(1, NBYTES, NBYTES))
            pto.mte_gm_ub(y + base, ya, 0, NBYTES, nburst=(1, NBYTES, NBYTES))
            pto.set_flag("MTE2", "V", 0)             # both loads complete before the vector unit reads
            pto.wait_flag("MTE2", "V", 0)
            pto.ub.vadd(xa, xa, ya, REPEATS, mask=LANES, rep_stride=(8, 8, 8))
            pto.ub.vmuls(xa, xa, 0.5, REPEATS, mask=LANES, rep_stride=(8, 8))
            pto.set_flag("V", "MTE3", 0)             # the result is complete before the store reads it
            pto.wait_flag("V", "MTE3", 0)
            pto.mte_ub_gm(xa, z + base, NBYTES, nburst=(1, NBYTES, NBYTES))
    return k.program


def reference(x, y):
    """float16 rounding after each operation, as the vector unit computes."""
    return ((x + y).astype(np.float16) * np.float16(0.5)).astype(np.float16)


def inputs(seed=7):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal(N).astype(np.float16), "y": rng.standard_normal(N).astype(np.float16)}


if __name__ == "__main__":
    feed = inputs()
    outputs = [scaled_add(step).tikdb.start_debug(dict(feed), interactive=False)[0] for step in range(STEPS)]
    outputs.append(scaled_add_pto().run(dict(feed))["z"])
    ok = np.array_equal(outputs[0], reference(**feed))
    for step, z in enumerate(outputs):
        same = z.tobytes() == outputs[0].tobytes()
        ok = ok and same
        print(f"scaled_add step {step}: {'identical to step 0' if same else 'DIFFERENT'}")
    print("migrate_vector_add:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
