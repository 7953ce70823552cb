"""CANN's shared operator helpers ``impl.constant_util``, ``impl.common_util``, ``impl.util.util_common``
and ``impl.util.util_tik_comm_func``: CANN TIK operator files import them at the top, so without them
such a file failed with ModuleNotFoundError before its TIK code. The TIK helpers trace to ordinary TIK
calls; these kernels check their results bit-exact against numpy."""
import importlib

import numpy as np
import pytest

from pto_core.errors import IllegalOperand, UnknownName, UnsupportedOp
from tbe_compat import platform

from tbe import tik


def _run(ti, name, inputs, outputs, feed):
    ti.BuildCCE(kernel_name=name, inputs=list(inputs), outputs=list(outputs))
    return ti.tikdb.start_debug(feed_dict=feed, interactive=False)


def test_constant_util_values_and_import_styles():
    import impl.constant_util as constant
    from impl import constant_util
    from impl.constant_util import BLOCK_SIZE, STRIDE_ONE, VECTOR_BYTE_SIZE
    assert constant is constant_util
    assert (BLOCK_SIZE, VECTOR_BYTE_SIZE, STRIDE_ONE) == (32, 256, 1)
    assert (constant.REPEAT_STRIDE_EIGHT, constant.SID, constant.DEFAULT_NBURST, constant.MASK128,
            constant.DATA_TYPE_INT32, constant.CLOUD) == (8, 0, 1, 128, "int32", "cloud")


def test_constant_util_has_the_2021_sizes_a_dynamic_op_reads():
    """CANN's constant_util (2021 and later) ends with SIZE_SIXTEEN = 16 and SHAPE_SIZE_LIMIT = 2**31 - 1;
    a dynamic operator sizes its tiling and GM tensors with them (was UnsupportedOp 'not modelled')."""
    from impl import constant_util as constant
    ti = tik.Tik()
    tiling_gm = ti.Tensor("int64", (constant.SIZE_SIXTEEN,), name="tiling_gm", scope=tik.scope_gm)
    x_gm = ti.Tensor("float32", (constant.SHAPE_SIZE_LIMIT,), name="x_gm", scope=tik.scope_gm)
    y_gm = ti.Tensor("float32", (constant.SHAPE_SIZE_LIMIT,), name="y_gm", scope=tik.scope_gm)
    tiling_ub = ti.Tensor("int64", (constant.SIZE_SIXTEEN,), name="tiling_ub", scope=tik.scope_ubuf)
    ti.data_move(tiling_ub, tiling_gm, 0, 1, constant.SIZE_SIXTEEN * 8 // 32, 0, 0)
    n = ti.Scalar("int64", name="n")
    n.set_as(tiling_ub[0])
    x_ub = ti.Tensor("float32", (64,), name="x_ub", scope=tik.scope_ubuf)
    ti.data_move(x_ub, x_gm, 0, 1, n, 0, 0)
    ti.vec_adds(64, x_ub, x_ub, 1.0, 1, 8, 8)
    ti.data_move(y_gm, x_ub, 0, 1, n, 0, 0)
    ti.BuildCCE(kernel_name="k", inputs=[x_gm], outputs=[y_gm], flowtable=[tiling_gm])
    x = np.arange(16, dtype=np.float32)
    t = np.zeros(16, np.int64)
    t[0] = 2
    y, = ti.tikdb.start_debug({"x_gm": x, "tiling_gm": t, "y_gm": 16}, interactive=False)
    assert (constant.SIZE_SIXTEEN, constant.SHAPE_SIZE_LIMIT) == (16, 2 ** 31 - 1)
    assert np.asarray(y).reshape(-1)[:16].tobytes() == (x + 1).tobytes()


def test_unknown_names_raise_unsupported_op_at_the_user_line():
    from impl import common_util, constant_util
    with pytest.raises(UnsupportedOp, match=r"test_cann_impl\.py:\d+: impl\.constant_util\.NO_SUCH: not modelled"):
        constant_util.NO_SUCH
    with pytest.raises(UnsupportedOp, match=r"impl\.common_util\.conv_s4_to_s8"):
        common_util.conv_s4_to_s8
    with pytest.raises(UnsupportedOp, match="TBE DSL"):
        common_util.get_esp_min("float16")
    with pytest.raises(UnsupportedOp):
        exec("from impl.util.util_tik_comm_func import no_such_helper", {})


def test_common_util_get_data_size():
    from impl import common_util
    assert [common_util.get_data_size(d) for d in ("float16", "float32", "int8", "uint64")] == [2, 4, 1, 8]
    assert common_util.get_block_element("float16") == 16
    with pytest.raises(UnknownName, match="bfloat16"):
        common_util.get_data_size("bfloat16")


def test_common_util_exposes_the_constant_table_as_constant():
    """CANN's common_util.py starts with ``from impl import constant_util as constant`` and operators read
    ``common_util.constant.BLOCK_SIZE``; the facade refused that name with UnsupportedOp."""
    from impl import common_util, constant_util
    assert common_util.constant is constant_util
    assert common_util.constant.BLOCK_SIZE // common_util.get_data_size("float16") == 16
    ti = tik.Tik()
    n = common_util.constant.BLOCK_SIZE // common_util.get_data_size("float32")
    x = ti.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (n,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.vec_adds(n, ub, ub, 1.0, 1, common_util.constant.STRIDE_ONE, common_util.constant.STRIDE_ONE)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    xv = np.arange(n, dtype=np.float32)
    out, = _run(ti, "cu_const", [x], [y], {"x": xv})
    np.testing.assert_array_equal(out, xv + 1)


def test_util_common_pure_helpers():
    from impl.util import util_common as uc
    assert (uc.ceil(33, 16), uc.align(33, 16), uc.lcm(4, 6)) == (3, 48, 12)
    assert (uc.ceil_div_scalar(7, 2), uc.div_align_scalar(7, 4), uc.div_align_scalar(7, 4, "floor")) == (4, 8, 4)
    with pytest.raises(IllegalOperand, match="E62502"):
        uc.ceil(3, 0)
    d = {"shape": (2, -1), "ori_shape": (2, -1)}
    assert uc.is_unknown([d]) and uc.is_dynamic_input(d) and not uc.is_unknown_rank_input(d)
    assert not uc.is_unknown({"shape": (2, 3), "ori_shape": (2, 3)})
    z = {"sub_format": 2, "ori_format": "NCHW", "ori_shape": (64, 3, 3, 3)}
    assert uc.is_support_fractal_z_inputs([z, z]) and not uc.is_support_fractal_z_input({**z, "sub_format": 0})


def test_gm2ub_ub2gm_ceil_div_tail_copy():
    """A 40-element float16 copy: gm2ub/ub2gm round the burst up to whole blocks (48 elements)."""
    from impl.util import util_tik_comm_func as f
    ti = tik.Tik()
    x = ti.Tensor("float16", (48,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (48,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (48,), name="ub", scope=tik.scope_ubuf)
    f.gm2ub(ti, ub, x, 40)
    f.ub2gm(ti, y, ub, 40)
    data = np.arange(48, dtype=np.float16)
    (out,) = _run(ti, "copy40", [x], [y], {"x": data})
    np.testing.assert_array_equal(out.view(np.uint16), data.view(np.uint16))
    assert f.ceil_div(40, 16) == 3 and f.ceil_align(40, 16) == 48 and f.floor_align(40, 16) == 32


def test_gm2ub_refuses_wrong_scope():
    from impl.util import util_tik_comm_func as f
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    with pytest.raises(IllegalOperand, match="dst must be in local.UB"):
        f.gm2ub(ti, x, x, 16)


@pytest.mark.parametrize("soc", ["Ascend910", "Ascend910B1"])
def test_vector_helpers_split_into_repeats(soc):
    """600 float32 elements: 64 per repeat, 9 repeats + a 24-element tail, checked against numpy."""
    platform.set_current_compile_soc_info(soc)
    from impl.util import util_tik_comm_func as f
    n = 600
    ti = tik.Tik()
    a = ti.Tensor("float32", (n,), name="a", scope=tik.scope_gm)
    b = ti.Tensor("float32", (n,), name="b", scope=tik.scope_gm)
    y = ti.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("float32", (n,), name="z", scope=tik.scope_gm)
    ua = ti.Tensor("float32", (n,), name="ua", scope=tik.scope_ubuf)
    ub = ti.Tensor("float32", (n,), name="ub", scope=tik.scope_ubuf)
    uz = ti.Tensor("float32", (n,), name="uz", scope=tik.scope_ubuf)
    f.gm2ub(ti, ua, a, n)
    f.gm2ub(ti, ub, b, n)
    f.tik_func_vcomple(ti, "vmax", ua, ua, ub, n)
    f.tik_func_vmuls(ti, ua, ua, 0.5, n)
    f.tik_func_vadds(ti, ua, ua, -1.0, n)
    f.tik_func_vector(ti, uz, 3.0, n)
    f.ub2gm(ti, y, ua, n)
    f.ub2gm(ti, z, uz, n)
    rng = np.random.default_rng(1)
    da, db = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out_y, out_z = _run(ti, "vec", [a, b], [y, z], {"a": da, "b": db})
    want = (np.maximum(da, db) * np.float32(0.5)) + np.float32(-1.0)
    np.testing.assert_array_equal(out_y.view(np.uint32), want.view(np.uint32))
    np.testing.assert_array_equal(out_z, np.full(n, 3.0, np.float32))


def test_tik_func_vconv_f16_to_f32_and_back():
    platform.set_current_compile_soc_info("Ascend910")
    from impl.util import util_tik_comm_func as f
    n = 200
    ti = tik.Tik()
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
    ux = ti.Tensor("float16", (n,), name="ux", scope=tik.scope_ubuf)
    uy = ti.Tensor("float32", (n,), name="uy", scope=tik.scope_ubuf)
    f.gm2ub(ti, ux, x, n)
    f.tik_func_vconv(ti, uy, ux, n)
    f.ub2gm(ti, y, uy, n)
    data = np.linspace(-5, 5, n).astype(np.float16)
    (out,) = _run(ti, "conv", [x], [y], {"x": data})
    np.testing.assert_array_equal(out, data.astype(np.float32))



@pytest.mark.parametrize("src", ["int16", "int8", "uint8"])
def test_tik_func_vconv_converts_the_later_cann_pairs_to_float16(src):
    """Later CANN releases convert int16/int8/uint8 -> float16 too (the 2019 helper did nothing)."""
    platform.set_current_compile_soc_info("Ascend310P3")
    from impl.util import util_tik_comm_func as f
    n = 160
    ti = tik.Tik()
    x = ti.Tensor(src, (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    ux = ti.Tensor(src, (n,), name="ux", scope=tik.scope_ubuf)
    uy = ti.Tensor("float16", (n,), name="uy", scope=tik.scope_ubuf)
    f.gm2ub(ti, ux, x, n)
    f.tik_func_vconv(ti, uy, ux, n)
    f.ub2gm(ti, y, uy, n)
    info = np.iinfo(src)
    data = np.random.default_rng(0).integers(max(info.min, -2048), min(info.max, 2048) + 1, n).astype(src)
    (out,) = _run(ti, "conv16", [x], [y], {"x": data})
    np.testing.assert_array_equal(out, data.astype(np.float16))

def test_vector_helper_needs_a_trace_time_count():
    from impl.util import util_tik_comm_func as f
    ti = tik.Tik()
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    n = ti.Scalar("int32", init_value=128)
    with pytest.raises(IllegalOperand, match="must be a Python int"):
        f.tik_func_vector(ti, ub, 0, n)


@pytest.mark.parametrize("count", [5, 16, 21])
def test_move_out_non32_alignment_keeps_neighbours(count):
    """The last ``count`` float16 elements of a 32-element GM tensor are written from UB; elements
    before them keep their values (under one block, CANN reads the block back first)."""
    from impl import common_util
    ti = tik.Tik()
    x = ti.Tensor("float16", (32,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (32,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (32,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 2, 0, 0)
    ti.data_move(y, ub, 0, 1, 2, 0, 0)
    ti.vec_muls(32, ub, ub, 2.0, 1, 8, 8)
    common_util.move_out_non32_alignment({"instance": ti, "out_ub": ub, "out_gm": y, "gm_offset": 32 - count,
                                          "element_num": count, "dsize": 2})
    data = np.arange(32, dtype=np.float16)
    (out,) = _run(ti, "tail", [x], [y], {"x": data})
    want = data.copy()
    want[32 - count:] = data[:count] * 2
    np.testing.assert_array_equal(out, want)


def test_op_base_dispatches_on_the_tiling_key():
    from impl.util.util_tik_comm_func import OpBase

    class Copy(OpBase):
        def __init__(self):
            super().__init__()
            self.core_nums = 1
            self.kernel_name = "opbase_copy"
            self.op_init_gm([{"dtype": "float32", "shape": (8,), "ori_shape": (8,)}],
                            [{"dtype": "float32", "shape": (8,), "ori_shape": (8,)}],
                            tiling_info={"dtype": "int32", "shape": (8,)})
            self.tiling_key = self.tik_instance.Scalar("int32", name="key")
            self.regist_compute(1, self.scale, 2.0)
            self.regist_compute(2, self.scale, 3.0)

        def tiling_args(self):
            ub = self.tik_instance.Tensor("int32", (8,), name="t_ub", scope=tik.scope_ubuf)
            self.tik_instance.data_move(ub, self.tiling_gm, 0, 1, 1, 0, 0)
            self.tiling_key.set_as(ub[0])

        def scale(self, factor):
            ub = self.tik_instance.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
            self.tik_instance.data_move(ub, self.input_gm_list[0], 0, 1, 1, 0, 0)
            self.tik_instance.vec_muls(8, ub, ub, factor, 1, 8, 8)
            self.tik_instance.data_move(self.output_gm_list[0], ub, 0, 1, 1, 0, 0)

    op = Copy()
    op.op_run_compute()
    op.op_build_cce()
    data = np.arange(8, dtype=np.float32)
    (out,) = op.tik_instance.tikdb.start_debug(
        feed_dict={"input_gm_0": data, "tiling_gm": np.array([2, 0, 0, 0, 0, 0, 0, 0], np.int32)},
        interactive=False)
    np.testing.assert_array_equal(out, data * 3)


def test_modules_are_namespace_portions():
    for name in ("impl.common_util", "impl.constant_util", "impl.util.util_common", "impl.util.util_tik_comm_func"):
        assert importlib.import_module(name).__file__.endswith(name.rsplit(".", 1)[1] + ".py")


@pytest.mark.parametrize("mode", ["floor", "round"])
def test_tik_func_vconv_f32_to_s32_through_f16_on_ascend310(mode):
    """Ascend310 has no f322s32 vconv: the helper goes through float16. ``round`` is then the float16
    value rounded; ``floor`` is corrected back to the exact floor (CANN's error-term step)."""
    platform.set_current_compile_soc_info("Ascend310")
    from impl.util import util_tik_comm_func as f
    n = 300
    ti = tik.Tik()
    x = ti.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (n,), name="y", scope=tik.scope_gm)
    ux = ti.Tensor("float32", (n,), name="ux", scope=tik.scope_ubuf)
    uy = ti.Tensor("int32", (n,), name="uy", scope=tik.scope_ubuf)
    f.gm2ub(ti, ux, x, n)
    f.tik_func_vconv(ti, uy, ux, n, mode)
    f.ub2gm(ti, y, uy, n)
    d = (np.random.default_rng(0).standard_normal(n) * 50).astype(np.float32)
    d[:4] = [1.9999, -1.9999, 2.0001, 0.99999]
    (out,) = _run(ti, "f2i", [x], [y], {"x": d})
    want = np.floor(d) if mode == "floor" else np.rint(d.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(out, want.astype(np.int32))


def test_tik_func_vcomple_vdiv_without_vdiv_uses_newton_reciprocal():
    """Ascend310 has no vdiv: ``src0 * vrec(src1)`` refined by two Newton steps."""
    platform.set_current_compile_soc_info("Ascend310")
    from impl.util import util_tik_comm_func as f
    n = 160
    ti = tik.Tik()
    a = ti.Tensor("float16", (n,), name="a", scope=tik.scope_gm)
    b = ti.Tensor("float16", (n,), name="b", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    ua = ti.Tensor("float16", (n,), name="ua", scope=tik.scope_ubuf)
    ub = ti.Tensor("float16", (n,), name="ub", scope=tik.scope_ubuf)
    f.gm2ub(ti, ua, a, n)
    f.gm2ub(ti, ub, b, n)
    f.tik_func_vcomple(ti, "vdiv", ua, ua, ub, n)
    f.ub2gm(ti, y, ua, n)
    rng = np.random.default_rng(2)
    da = rng.uniform(-4, 4, n).astype(np.float16)
    db = rng.uniform(0.5, 4, n).astype(np.float16)
    (out,) = _run(ti, "div", [a, b], [y], {"a": da, "b": db})
    np.testing.assert_allclose(out.astype(np.float32), da.astype(np.float32) / db.astype(np.float32),
                               rtol=4e-3, atol=1e-3)


def test_later_cann_surface_vor_move_strides_and_op_base_kernel_name():
    """Later CANN releases: tik_func_vcomple "vor", gm2ub/ub2gm repeat/src_stride/dst_stride keywords and
    OpBase(kernel_name) (each was refused: UnknownName, TypeError, TypeError)."""
    from impl.util import util_tik_comm_func as f
    platform.set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    a = ti.Tensor("int16", (64,), name="a", scope=tik.scope_gm)
    b = ti.Tensor("int16", (32,), name="b", scope=tik.scope_gm)
    y = ti.Tensor("int16", (64,), name="y", scope=tik.scope_gm)
    ua = ti.Tensor("int16", (32,), name="ua", scope=tik.scope_ubuf)
    ub = ti.Tensor("int16", (32,), name="ub", scope=tik.scope_ubuf)
    f.gm2ub(ti, ua, a, 16, repeat=2, src_stride=1)          # blocks 0 and 2 of a
    f.gm2ub(ti, ub, b, 32)
    f.tik_func_vcomple(ti, "vor", ua, ua, ub, 32)
    f.tik_func_vector(ti, ub, 0, 32)
    f.ub2gm(ti, y, ub, 32)
    f.ub2gm(ti, y[32], ub, 32)
    f.ub2gm(ti, y[16], ua, 16, repeat=2, dst_stride=1)      # blocks 1 and 3 of y
    da = np.arange(64, dtype=np.int16) * 37
    db = (np.arange(32, dtype=np.int16) * 11) ^ 0x0F0F
    (out,) = _run(ti, "vor_strides", [a, b], [y], {"a": da, "b": db})
    got = np.concatenate([da[:16], da[32:48]]) | db
    want = np.zeros(64, np.int16)
    want[16:32], want[48:64] = got[:16], got[16:]
    np.testing.assert_array_equal(out, want)
    op = f.OpBase("named")
    assert op.kernel_name == "named" and f.OpBase().kernel_name is None


@pytest.mark.filterwarnings("error")
def test_tik_func_vector_fills_a_multi_dim_view_where_it_starts():
    """No FlatIndexWarning either: the helper's own flat indices are meant as such."""
    platform.set_current_compile_soc_info("Ascend910")
    from impl.util import util_tik_comm_func as f
    ti = tik.Tik()
    y = ti.Tensor("float16", (2, 128), name="y", scope=tik.scope_gm)
    u = ti.Tensor("float16", (2, 128), name="u", scope=tik.scope_ubuf)
    f.tik_func_vector(ti, u[0, :], 1.0, 128)
    f.tik_func_vector(ti, u[1, :], 2.0, 128)
    f.ub2gm(ti, y, u, 256)
    (out,) = _run(ti, "dup2", [], [y], {})
    assert (out[0] == 1).all() and (out[1] == 2).all()


@pytest.mark.parametrize("soc", ["Ascend910", "Ascend910B1"])
def test_helpers_do_nothing_in_code_that_never_runs(soc):
    """A tail branch for a Python count of 0 (CANN's sub_sample_labels with N a multiple of its batch):
    the tensor sized 0 declared under the statically false ``if_scope`` is an empty tensor, so the
    helpers there must do nothing, not fail on it; the live code's result is unchanged."""
    platform.set_current_compile_soc_info(soc)
    from impl.util import util_tik_comm_func as f
    from impl import common_util
    ti = tik.Tik()
    x = ti.Tensor("int32", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (16,), name="ub", scope=tik.scope_ubuf)
    f.gm2ub(ti, ub, x, 16)
    tail = 0
    with ti.if_scope(tail > 0):
        t_ub = ti.Tensor("int32", (tail,), name="t_ub", scope=tik.scope_ubuf)
        assert t_ub.shape == [0] and t_ub.storage.addr is None
        f.tik_func_vector(ti, t_ub, 0, tail)
        f.tik_func_vcomple(ti, "vadd", t_ub, t_ub, ub, tail)
        f.tik_func_vadds(ti, t_ub, t_ub, 1, tail)
        f.gm2ub(ti, t_ub, x, tail)
        f.ub2ub(ti, t_ub, ub, tail)
        f.ub2gm(ti, y, t_ub, tail)
        common_util.move_out_non32_alignment({"instance": ti, "out_ub": t_ub, "out_gm": y, "gm_offset": 0,
                                              "element_num": tail, "dsize": 4})
    f.tik_func_vcomple(ti, "vadd", ub, ub, ub, 16)
    f.ub2gm(ti, y, ub, 16)
    data = np.arange(16, dtype=np.int32)
    (out,) = _run(ti, "dead_tail", [x], [y], {"x": data})
    np.testing.assert_array_equal(out, data * 2)


@pytest.mark.parametrize("soc", ["Ascend310P3", "Ascend910B1"])  # vmins/vmaxs: not on v100 chips
def test_tik_func_vmins_vmaxs_and_the_module_level_tik(soc):
    """CANN's NMS operators import ``tik``, ``tik_func_vmins`` and ``tik_func_vmaxs`` from
    util_tik_comm_func (CANN's module imports tik at its top); 300 float16 elements = 2 full repeats
    of 128 + a 44-element tail, clamped into [-1, 2] and checked bit for bit."""
    platform.set_current_compile_soc_info(soc)
    from impl.util.util_tik_comm_func import tik as t, tik_func_vmaxs, tik_func_vmins
    from impl.util import util_tik_comm_func as f
    assert t.Tik is tik.Tik and t.scope_ubuf == tik.scope_ubuf
    n = 300
    ti = t.Tik()
    a = ti.Tensor("float16", (n,), name="a", scope=t.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=t.scope_gm)
    ua = ti.Tensor("float16", (n + 4,), name="ua", scope=t.scope_ubuf)
    f.gm2ub(ti, ua, a, n)
    tik_func_vmins(ti, ua, ua, 2.0, n)
    tik_func_vmaxs(ti, ua, ua, -1.0, n)
    f.ub2gm(ti, y, ua, n)
    da = (np.random.default_rng(2).standard_normal(n) * 3).astype(np.float16)
    out, = _run(ti, "clamp", [a], [y], {"a": da})
    want = np.maximum(np.minimum(da, np.float16(2.0)), np.float16(-1.0))
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def test_get_mask_rep_stride():
    """util_common.get_mask_rep_stride: (elements in 256 bytes, 8) per dtype; others refused."""
    from impl.util.util_common import get_mask_rep_stride
    ti = tik.Tik()
    got = {dt: get_mask_rep_stride(ti.Tensor(dt, (64,), name=f"t_{dt}", scope=tik.scope_ubuf))
           for dt in ("float16", "uint16", "float32", "int32", "uint32", "int8", "int64")}
    assert got == {"float16": (128, 8), "uint16": (128, 8), "float32": (64, 8), "int32": (64, 8),
                   "uint32": (64, 8), "int8": (256, 8), "int64": (32, 8)}
    with pytest.raises(UnknownName, match=r"test_cann_impl\.py:\d+: .*get_mask_rep_stride"):
        get_mask_rep_stride(ti.Tensor("uint8", (64,), name="u8", scope=tik.scope_ubuf))


def _sorted_records(scores, idx):
    """numpy model of vsort32 + vmrgsort: descending score, ties in input order (the index order here)."""
    order = np.lexsort((np.arange(len(scores)), -scores.astype(np.float64)))
    return scores[order], idx[order]


@pytest.mark.parametrize("n", [64, 96, 384, 512])   # 2 / 3 runs, 3 groups + a 3-run merge, 2 levels
def test_sort_score_idx_by_desc_init_index_gm2ub_for_vsort32(n):
    """CANN's NMS sort path on 910B1: gm2ub_for_vsort32 (3-D GM scores, block part + element tail),
    init_index (float16: a copy of the index table from ``offset``), vsort32 runs of 32 and
    sort_score_idx_by_desc merging them (ping-pong between the two tensors, result in the second);
    scores with ties, checked bit for bit against a stable descending numpy sort."""
    platform.set_current_compile_soc_info("Ascend910B1")
    from impl.util import util_tik_comm_func as f
    off = 40
    ti = tik.Tik()
    s_gm = ti.Tensor("float16", (2, 3, n + 5), name="s_gm", scope=tik.scope_gm)
    i_gm = ti.Tensor("uint32", (n + off,), name="i_gm", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n * 4,), name="y", scope=tik.scope_gm)
    s_ub = ti.Tensor("float16", (n,), name="s_ub", scope=tik.scope_ubuf)
    i_ub = ti.Tensor("uint32", (n,), name="i_ub", scope=tik.scope_ubuf)
    a = ti.Tensor("float16", (n * 4,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (n * 4,), name="b", scope=tik.scope_ubuf)
    f.gm2ub_for_vsort32(ti, s_gm, [1, 2, 3], s_ub, n)
    f.init_index(ti, i_gm, i_ub, off, n)
    ti.vsort32(a, s_ub, i_ub, n // 32)
    assert f.sort_score_idx_by_desc(ti, a, b, n * 4) == -1
    f.ub2gm(ti, y, b, n * 4)
    rng = np.random.default_rng(n)
    sc = (rng.integers(-20, 20, (2, 3, n + 5)) / 4).astype(np.float16)
    table = np.arange(n + off, dtype=np.uint32) * 3
    out, = _run(ti, "sortp", [s_gm, i_gm], [y], {"s_gm": sc, "i_gm": table})
    want_s, want_i = _sorted_records(sc[1, 2, 3:3 + n], table[off:off + n])
    rec = out.view(np.uint16).reshape(n, 4)
    np.testing.assert_array_equal(rec[:, 0], want_s.view(np.uint16))
    np.testing.assert_array_equal(rec[:, 2:].copy().view(np.uint32).ravel(), want_i)


def test_init_index_float32_adds_the_offset_and_sort_float32_level0():
    """init_index with dtype float32: the table's first ``do_lens`` entries plus ``offset``; the sort
    helper with dtype float32 at level 0 merges vsort32's 32-record float32 runs."""
    platform.set_current_compile_soc_info("Ascend910B1")
    from impl.util import util_tik_comm_func as f
    n = 128
    ti = tik.Tik()
    s_gm = ti.Tensor("float32", (1, 1, n), name="s_gm", scope=tik.scope_gm)
    i_gm = ti.Tensor("uint32", (n,), name="i_gm", scope=tik.scope_gm)
    y = ti.Tensor("float32", (n * 2,), name="y", scope=tik.scope_gm)
    s_ub = ti.Tensor("float32", (n,), name="s_ub", scope=tik.scope_ubuf)
    i_ub = ti.Tensor("uint32", (n,), name="i_ub", scope=tik.scope_ubuf)
    a = ti.Tensor("float32", (n * 2,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float32", (n * 2,), name="b", scope=tik.scope_ubuf)
    f.gm2ub_for_vsort32(ti, s_gm, [0, 0, 0], s_ub, n)
    f.init_index(ti, i_gm, i_ub, 1000, n, dtype="float32")
    ti.vsort32(a, s_ub, i_ub, n // 32)
    f.sort_score_idx_by_desc(ti, a, b, n * 2, level=0, dtype="float32")
    f.ub2gm(ti, y, b, n * 2)
    sc = (np.random.default_rng(5).integers(-9, 9, (1, 1, n)) / 2).astype(np.float32)
    table = np.arange(n, dtype=np.uint32)
    out, = _run(ti, "sortf", [s_gm, i_gm], [y], {"s_gm": sc, "i_gm": table})
    want_s, want_i = _sorted_records(sc.ravel(), table + 1000)
    rec = out.view(np.uint32).reshape(n, 2)
    np.testing.assert_array_equal(rec[:, 0], want_s.view(np.uint32))
    np.testing.assert_array_equal(rec[:, 1], want_i)


def test_sort_helpers_refuse_sizes_cann_refuses():
    platform.set_current_compile_soc_info("Ascend910B1")
    from impl.util import util_tik_comm_func as f
    ti = tik.Tik()
    a = ti.Tensor("float16", (1024,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (1024,), name="b", scope=tik.scope_ubuf)
    i_gm = ti.Tensor("uint32", (8192,), name="i_gm", scope=tik.scope_gm)
    i_ub = ti.Tensor("uint32", (8192,), name="i_ub", scope=tik.scope_ubuf)
    with pytest.raises(IllegalOperand, match=r"test_cann_impl\.py:\d+: .*multiple of 32 \* 1 \* 4 \*\* level = 128"):
        f.sort_score_idx_by_desc(ti, a, b, 200)
    with pytest.raises(IllegalOperand, match=r"multiple of 32 \* 1 \* 4 \*\* level = 512 \(level 2\)"):
        f.sort_score_idx_by_desc(ti, a, b, 640)     # one run left over at level 1, then 640 % 512
    with pytest.raises(IllegalOperand, match="multiple of 8 and at most 4096"):
        f.init_index(ti, i_gm, i_ub, 0, 8192)
    with pytest.raises(IllegalOperand, match="multiple of 8"):
        f.init_index(ti, i_gm, i_ub, 0, 12)


def test_gm2ub_for_vsort32_tail_reads_from_the_run_start_as_cann():
    """GM2UB_VSORT32_TAIL_FROM_START: CANN's helper fills the element tail dst[whole + i] from
    src[b, c, box + i] (the run's start); 37 float16 = 2 blocks + 5 elements; dst past 37 untouched."""
    platform.set_current_compile_soc_info("Ascend910B1")
    from impl.util import util_tik_comm_func as f
    ti = tik.Tik()
    s_gm = ti.Tensor("float16", (2, 2, 48), name="s_gm", scope=tik.scope_gm)
    y = ti.Tensor("float16", (48,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (48,), name="ub", scope=tik.scope_ubuf)
    f.tik_func_vector(ti, ub, -1.0, 48)
    n = ti.Scalar("int32", init_value=37)
    f.gm2ub_for_vsort32(ti, s_gm, [1, 0, 4], ub, n)
    f.ub2gm(ti, y, ub, 48)
    data = np.arange(2 * 2 * 48).astype(np.float16).reshape(2, 2, 48)
    out, = _run(ti, "g2u", [s_gm], [y], {"s_gm": data})
    run = data[1, 0, 4:]
    want = np.concatenate([run[:32], run[:5], np.full(11, -1, np.float16)])
    np.testing.assert_array_equal(out, want)


def test_util_binary_get_bit_len_sizes_a_kernel():
    """CANN TIK operators (ifmr, split_v_d, strided_slice_d ...) import ``get_bit_len`` from
    ``impl.util.util_binary`` at module level (was MissingModule before the TIK code ran); its build-flow
    matchers raise UnsupportedOp naming the line."""
    from impl.util.util_binary import get_bit_len
    from impl.util import util_binary
    assert importlib.import_module("impl.util.util_binary").__file__.endswith("util_binary.py")
    assert (get_bit_len("float16"), get_bit_len("int64"), get_bit_len("uint8")) == (16, 64, 8)
    n = 32 // (get_bit_len("float16") // 8) * 4
    ti = tik.Tik()
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    u = ti.Tensor("float16", (n,), name="u", scope=tik.scope_ubuf)
    ti.data_move(u, x, 0, 1, n * get_bit_len("float16") // 8 // 32, 0, 0)
    ti.data_move(y, u, 0, 1, n * get_bit_len("float16") // 8 // 32, 0, 0)
    d = np.arange(n, dtype=np.float16)
    (out,) = _run(ti, "bits", [x], [y], {"x": d})
    np.testing.assert_array_equal(out, d)
    with pytest.raises(UnsupportedOp, match=r"test_cann_impl\.py:\d+: impl\.util\.util_binary\.binary_match"):
        util_binary.binary_match("Add")
