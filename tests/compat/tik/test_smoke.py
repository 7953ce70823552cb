"""Skeleton smoke test: a 2-core tiled GM -> UB -> GM copy with Scalars and if_scope."""
import numpy as np

from tbe import tik


def _tiled_copy(n_per_core=500, tile=256):
    ti = tik.Tik()
    total = 2 * n_per_core
    a = ti.Tensor("float32", (total + 8,), name="a", scope=tik.scope_gm)
    b = ti.Tensor("float32", (total + 8,), name="b", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (tile,), name="ub", scope=tik.scope_ubuf)
    with ti.for_range(0, 2, block_num=2) as core:
        base = ti.Scalar("int32", name="base", init_value=core * n_per_core)
        tiles = ti.Scalar("int32", name="tiles", init_value=n_per_core // tile)
        with ti.for_range(0, tiles) as t:
            ti.data_move(ub, a[base + t * tile], 0, 1, tile // 8, 0, 0)
            ti.data_move(b[base + t * tile], ub, 0, 1, tile // 8, 0, 0)
        tail = ti.Scalar("int32", name="tail", init_value=n_per_core - tiles * tile)
        with ti.if_scope(tail > 0):
            off = base + tiles * tile
            ti.data_move(ub, a[off], 0, 1, (tail + 7) // 8, 0, 0)
            ti.data_move(b[off], ub, 0, 1, (tail + 7) // 8, 0, 0)
    ti.BuildCCE(kernel_name="tiled_copy", inputs=[a], outputs=[b])
    return ti


def test_tiled_copy_two_cores():
    ti = _tiled_copy()
    x = np.random.default_rng(0).random(1008).astype(np.float32)
    out, = ti.tikdb.start_debug({"a": x}, interactive=False)
    np.testing.assert_array_equal(out[:1000], x[:1000])
    # the program is compiled once and reused
    exe = ti.tikdb.executable
    out2, = ti.tikdb.start_debug(feed_dict={"a": x + 1}, interactive=False)
    assert ti.tikdb.executable is exe
    np.testing.assert_array_equal(out2[:1000], x[:1000] + 1)


def test_registry_keeps_built_kernels():
    import tbe_compat
    ti = _tiled_copy()
    assert tbe_compat.kernels()["tiled_copy"] is ti
