"""tik.Tik forms, chip selection styles, BuildCCE (signature, keywords, chip freezing),
tikdb.start_debug rules (feed keys, shapes, dtypes, outputs, write-back, fill patterns),
the kernel registry and the error-class contract."""
import numpy as np
import pytest

import tbe_compat
from pto_core.errors import CapacityExceeded, GmOverreadWarning, IllegalOperand, UnknownName, UnsupportedOp
from tbe import tik
from tbe.common.platform import get_soc_spec, set_current_compile_soc_info

from .helpers import build, raises_tik, run


# ------------------------------------------------------------------ Tik forms and chips

def test_tik_construction_forms():
    tik.Tik()
    tik.Tik(disable_debug=False)
    tik.Tik(tik.Dprofile("v100", "cloud"))
    assert get_soc_spec("SOC_VERSION") == "Ascend910A"
    tik.Tik(tik.Dprofile())
    tik.Tik(tik.Dprofile)
    tik.Tik(err_msg_level=1)
    with raises_tik(IllegalOperand, match="err_msg_level must be 0 or 1"):
        tik.Tik(err_msg_level=2)
    with raises_tik(IllegalOperand, match="block_size must be 32"):
        tik.Tik(block_size=16)
    with raises_tik(IllegalOperand, match="profiling must be a tik.Dprofile"):
        tik.Tik("v100")


@pytest.mark.parametrize("style", ["before", "after", "dprofile", "te_set_version"])
def test_chip_selection_styles_before_or_after_tik(style):
    if style == "before":
        set_current_compile_soc_info("Ascend910B1")
        ti = tik.Tik()
    elif style == "after":
        ti = tik.Tik()
        set_current_compile_soc_info("Ascend910B1")
    elif style == "dprofile":
        ti = tik.Tik(tik.Dprofile("v200", "aic"))
    else:
        from te.platform.cce_conf import te_set_version
        ti = tik.Tik()
        with pytest.warns(FutureWarning):
            te_set_version("Ascend310P3")
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "chip", [x], [y])
    want = {"before": "Ascend910B1", "after": "Ascend910B1", "dprofile": "Ascend310P1", "te_set_version": "Ascend310P3"}
    assert ti.build.soc.soc_version == want[style]
    assert ti.program.target.name == want[style]
    assert np.array_equal(run(ti, {"x": np.ones(16, np.float16)})[0], np.ones(16, np.float16))
    assert ti.tikdb.executable.machine.target.name == want[style]


def test_build_freezes_the_chip_and_rechecks_capacities_and_support():
    set_current_compile_soc_info("Ascend310")                  # UB 248 KiB
    ti = tik.Tik()
    ti.Tensor("float16", (100000,), name="big", scope=tik.scope_ubuf)
    set_current_compile_soc_info("Ascend910B1")                # UB 192 KiB
    with raises_tik(CapacityExceeded, match="reach 200000 B, but Ascend910B1 has 196608 B"):
        build(ti, "too_big", [], [])
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    ti.set_atomic_add(1)
    set_current_compile_soc_info("Ascend310")
    with raises_tik(UnsupportedOp, match="set_atomic_add with float32 .* not supported on Ascend310"):
        build(ti, "atomic_then_310", [], [])


def test_build_recheck_counts_the_copies_a_thread_num_loop_tensor_reserves():
    """BuildCCE's capacity recheck and the declaration agree on a tensor declared in a thread_num=2 loop: two
    copies (THREAD_NUM_RESERVES_COPIES). Was: the recheck counted one copy, so a tile declared on Ascend310 and
    built after switching to Ascend910B1 passed (2 x 100000 B > 196608 B) though declaring it there is refused."""
    set_current_compile_soc_info("Ascend310")                  # UB 248 KiB
    ti = tik.Tik()
    with ti.for_range(0, 4, thread_num=2):
        ti.Tensor("float16", (50000,), name="tile", scope=tik.scope_ubuf)      # 2 x 100000 B
    set_current_compile_soc_info("Ascend910B1")                # UB 192 KiB
    with raises_tik(CapacityExceeded, match=r"reach 200000 B, but Ascend910B1 has 196608 B .*'tile' "
                                            r"2 x 100000 B \(one copy per buffer of its thread_num=2 for_range\)"):
        build(ti, "two_copies", [], [])
    ti = tik.Tik()                                             # the declaration on that chip says the same
    with ti.for_range(0, 4, thread_num=2):
        with raises_tik(CapacityExceeded, match="'tile' needs 2 x 100000 B = 200000 B"):
            ti.Tensor("float16", (50000,), name="tile", scope=tik.scope_ubuf)
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()                                             # one copy outside the loop: fits both chips
    ti.Tensor("float16", (50000,), name="tile", scope=tik.scope_ubuf)
    set_current_compile_soc_info("Ascend910B1")
    build(ti, "one_copy", [], [])


# ------------------------------------------------------------------ BuildCCE

def test_buildcce_keywords_and_argument_forms():
    ti = tik.Tik()
    x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ret = ti.BuildCCE("kw_kernel", (x), (y,), output_files_path="/nonexistent", enable_l2=True,   # B1, B2, B7
                      config={"double_buffer_non_reuse": True, "l2_mode": 1, "save_temp_cce_file": True})
    assert ret is ti                                            # B8: the return value is the instance
    assert [a.name for a in ti.program.args] == ["x", "y"]
    assert tbe_compat.kernels()["kw_kernel"] is ti


def test_buildcce_drops_none_inputs_as_absent_optional_inputs():
    """CANN ops pass an absent optional input (a bias) as None in BuildCCE inputs; it is no argument and
    takes no feed_dict key. None among the outputs is still an error."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.vec_adds(8, ub, ub, 1.5, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    with raises_tik(IllegalOperand, match=r"outputs\[1\] must be a GM tensor or InputScalar, got NoneType"):
        ti.BuildCCE(kernel_name="opt", inputs=[x, None], outputs=[y, None])
    ti.BuildCCE(kernel_name="opt", inputs=[x, None, None], outputs=[y])
    assert [a.name for a in ti.program.args] == ["x", "y"]
    got = ti.tikdb.start_debug({"x": np.arange(8, dtype=np.float32)}, False)[0]
    np.testing.assert_array_equal(got, np.arange(8, dtype=np.float32) + 1.5)


def test_buildcce_errors():
    ti = tik.Tik()
    x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    ws = ti.Tensor("float32", (8,), name="ws", scope=tik.scope_gm, is_workspace=True)
    ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
    x2 = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    with raises_tik(IllegalOperand, match="kernel_name is required"):
        ti.BuildCCE(inputs=[x], outputs=[])
    # TIK's format: ASCII letters, digits and _, not starting with a digit (dots and non-ASCII letters too)
    for bad in ("bad name", "", "1kernel", "add.v2", "\u6838\u51fd\u6570"):
        with raises_tik(IllegalOperand, match="identifier-like"):
            ti.BuildCCE(kernel_name=bad, inputs=[x, n], outputs=[])
    with raises_tik(IllegalOperand, match=r"inputs\[0\] \(tensor 'ub'\) is in UB"):
        ti.BuildCCE(kernel_name="k", inputs=[ub, n], outputs=[])
    with raises_tik(IllegalOperand, match="is a workspace"):
        ti.BuildCCE(kernel_name="k", inputs=[x, n], outputs=[ws])
    with raises_tik(IllegalOperand, match="two different kernel arguments are named 'x'"):
        ti.BuildCCE(kernel_name="k", inputs=[x, x2, n], outputs=[])
    with raises_tik(IllegalOperand, match="InputScalar 'n' is not listed in BuildCCE inputs"):
        ti.BuildCCE(kernel_name="k", inputs=[x], outputs=[])
    with raises_tik(IllegalOperand, match="config must be a dict with str keys"):
        ti.BuildCCE(kernel_name="k", inputs=[x, n], outputs=[], config={1: 2})
    with ti.for_range(0, 2):
        with raises_tik(IllegalOperand, match="inside a for_range/if_scope body"):
            ti.BuildCCE(kernel_name="k", inputs=[x, n], outputs=[])



def _argument_kernel(n_inputs, n_workspaces):
    """n_inputs GM inputs, one output, n_workspaces workspaces (each used, so all are real arguments)."""
    ti = tik.Tik()
    xs = [ti.Tensor("float16", (16,), name=f"x{i}", scope=tik.scope_gm) for i in range(n_inputs)]
    ws = [ti.Tensor("float16", (16,), name=f"w{i}", scope=tik.scope_gm, is_workspace=True) for i in range(n_workspaces)]
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, xs[0], 0, 1, 1, 0, 0)
    for w in ws:
        ti.data_move(w, ub, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    return ti, xs, y


def test_buildcce_argument_limit_counts_workspaces_and_says_what_to_do():
    """tik_api.md §3.2: inputs + flowtable + outputs + workspace + global tensors <= 192 (CANN 8.1
    `Tik._check_in_and_out_num`). Workspaces were not counted (190 inputs + 1 output + 2 workspaces built), and
    the error had no Fix (review spec422)."""
    ti, xs, y = _argument_kernel(190, 1)               # 192 arguments: accepted
    ti.BuildCCE(kernel_name="k", inputs=xs, outputs=[y])
    ti, xs, y = _argument_kernel(190, 2)               # 193 with the second workspace
    with raises_tik(IllegalOperand, match=r"test_build_debug\.py:\d+ .*193 kernel arguments \(190 inputs \+ 0 "
                                          r"flowtable \+ 1 outputs \+ 2 workspaces\) exceed the limit 192 Fix: "):
        ti.BuildCCE(kernel_name="k", inputs=xs, outputs=[y])
    ti.BuildCCE(kernel_name="k", inputs=xs[:189], outputs=[y])      # the refused call left nothing behind
    (out,) = run(ti, {f"x{i}": np.full(16, i + 1, np.float16) for i in range(189)})
    assert (out == 1).all()
    ti, xs, y = _argument_kernel(190, 1)               # empty outputs: TIK's fake output is an argument too
    with raises_tik(IllegalOperand, match=r"193 kernel arguments \(191 inputs \+ 0 flowtable \+ 1 output \(the one TIK "
                                          r"adds to an empty outputs list\) \+ 1 workspaces\)"):
        ti.BuildCCE(kernel_name="k", inputs=xs + [y], outputs=[])


def test_global_tensors_are_framework_arguments_counted_in_the_limit_and_not_listed():
    """GLOBAL_TENSORS_ARE_ARGUMENTS (CANN 8.1 tik_build.py `_set_global_tensor_list`, `_check_in_and_out_num`,
    `_check_non_inputs_outputs_tensor`): is_global_tensor=True GM tensors were accepted and ignored -- not counted in
    the 192-argument limit and listable as inputs. Now they count, listing one is an error with a Fix, and one
    with an init_value or on an on-chip scope is refused; the kernel still runs (an internal GM buffer)."""
    ti, xs, y = _argument_kernel(190, 0)
    g = ti.Tensor("float16", (16,), name="g", scope=tik.scope_gm, is_global_tensor=True)
    ti.BuildCCE(kernel_name="k", inputs=xs, outputs=[y])          # 190 + 1 + 1 global = 192: accepted
    ti, xs, y = _argument_kernel(190, 0)
    for i in range(2):
        g = ti.Tensor("float16", (16,), name=f"g{i}", scope=tik.scope_gm, is_global_tensor=True)
    with raises_tik(IllegalOperand, match=r"test_build_debug\.py:\d+ .*193 kernel arguments \(190 inputs \+ 0 "
                                          r"flowtable \+ 1 outputs \+ 0 workspaces \+ 2 global tensors\) exceed the "
                                          r"limit 192 Fix: "):
        ti.BuildCCE(kernel_name="k", inputs=xs, outputs=[y])
    ti = tik.Tik()
    x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    g = ti.Tensor("float32", (8,), name="g", scope=tik.scope_gm, is_global_tensor=True)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.data_move(g, ub, 0, 1, 1, 0, 0)                 # through the global tensor and back
    ti.data_move(ub, g, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    for ins, outs, what in (([x, g], [y], r"inputs\[1\]"), ([x], [y, g], r"outputs\[1\]")):
        with raises_tik(IllegalOperand,
                        match=rf"{what} \(tensor 'g'\) is a global tensor \(is_global_tensor=True\).*Fix: drop it"):
            ti.BuildCCE(kernel_name="k", inputs=ins, outputs=outs)
    ti.BuildCCE(kernel_name="k", inputs=[x], outputs=[y])
    (out,) = run(ti, {"x": np.arange(8, dtype=np.float32)})
    assert out.tolist() == list(range(8))
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match=r"init_value cannot be a global tensor.*Fix:"):
        ti.Tensor("float32", (8,), name="h", scope=tik.scope_gm, is_global_tensor=True, init_value=[0.0] * 8)
    with raises_tik(IllegalOperand, match=r"is_global_tensor applies to GM tensors only"):
        ti.Tensor("float32", (8,), name="u", scope=tik.scope_ubuf, is_global_tensor=True)


# ------------------------------------------------------------------ start_debug

def test_feed_dict_rules():
    ti = tik.Tik()
    x = ti.Tensor("float16", (2, 16), name="x", scope=tik.scope_gm)
    s = ti.InputScalar("int32", name="s")
    y = ti.Tensor("float16", (2, 16), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (2, 16), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 2, 0, 0)
    ti.data_move(y, ub, 0, 1, 2, 0, 0)
    build(ti, "feeds", [x, s], [y])
    good = np.ones((2, 16), np.float16)
    with raises_tik(UnknownName, match="missing 's'"):
        run(ti, {"x": good})
    with raises_tik(UnknownName, match="unexpected 'src_gm'"):                 # B13
        run(ti, {"x": good, "s": 1, "src_gm": good})
    with raises_tik(IllegalOperand, match="has dtype float32, tensor 'x' is float16"):
        run(ti, {"x": good.astype(np.float32), "s": 1})
    with raises_tik(IllegalOperand, match=r"has shape \(32,\), tensor 'x' is \[2, 16\]"):
        run(ti, {"x": good.reshape(32), "s": 1})
    with raises_tik(IllegalOperand, match="must be a numpy array"):
        run(ti, {"x": good.tolist(), "s": 1})
    with raises_tik(IllegalOperand, match="InputScalar 's' = 4294967296 does not fit int32"):
        run(ti, {"x": good, "s": 2**32})
    with raises_tik(IllegalOperand, match="InputScalar 's' is int32; got the float 1.5"):
        run(ti, {"x": good, "s": 1.5})
    with raises_tik(IllegalOperand, match="feed_dict must be a dict"):
        ti.tikdb.start_debug([good], False)
    out = ti.tikdb.start_debug({"x": good, "s": np.int32(3)}, True)            # interactive=True does not block
    assert isinstance(out, list) and len(out) == 1 and out[0].shape == (2, 16) and out[0].dtype == np.float16


def test_start_debug_before_build_is_an_error():
    with raises_tik(IllegalOperand, match="not built yet"):
        tik.Tik().tikdb.start_debug({}, False)


def test_outputs_in_order_with_view_shapes_and_gm_patterns():
    ti = tik.Tik()
    x = ti.Tensor("float32", (16,), name="x", scope=tik.scope_gm)
    a = ti.Tensor("float32", (4, 8), name="a", scope=tik.scope_gm)
    b = ti.Tensor("int32", (16,), name="b", scope=tik.scope_gm)
    c = ti.Tensor("float32", (8,), name="c", scope=tik.scope_gm, is_atomic_add=True)
    ub = ti.Tensor("float32", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 2, 0, 0)
    ti.data_move(a, ub, 0, 1, 1, 0, 0)                          # only row 0 of a is written
    build(ti, "views", [x], [a[0:1, 0:4], b.reinterpret_cast_to("float32"), a.reshape((32,)), c])
    xs = np.arange(16, dtype=np.float32)
    o1, o2, o3, o4 = run(ti, {"x": xs})
    assert o1.shape == (1, 4) and o1.tolist() == [[0, 1, 2, 3]]
    assert o2.dtype == np.float32 and o2.shape == (16,) and np.isnan(o2).all()   # untouched: NaN pattern
    assert o3.shape == (32,) and o3[:8].tolist() == list(range(8)) and np.isnan(o3[8:]).all()
    assert (o4 == 0).all()                                      # is_atomic_add outputs start at zero


def test_inputs_overwritten_by_the_kernel_are_written_back():
    ti = tik.Tik()
    x = ti.Tensor("int32", (16,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x[8], 0, 1, 1, 0, 0)
    ti.data_move(x, ub, 0, 1, 1, 0, 0)                          # in place on an input (B5)
    build(ti, "inplace", [x], [])                               # outputs=() (B3)
    xs = np.arange(16, dtype=np.int32)
    assert run(ti, {"x": xs}) == []
    assert xs.tolist() == list(range(8, 16)) * 2
    ro = np.arange(16, dtype=np.int32)
    ro.flags.writeable = False
    run(ti, {"x": ro})                                          # read-only feed arrays are left alone
    assert ro.tolist() == list(range(16))


def test_same_tensor_as_input_and_output_and_reused_names():
    ti = tik.Tik()
    old = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)   # B14: reused name, not in BuildCCE
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    with ti.for_range(0, 8) as i:
        ub[i].set_as(i * 2)
    ti.data_move(x, ub, 0, 1, 1, 0, 0)
    ti.data_move(old, ub, 0, 1, 1, 0, 0)
    build(ti, "inout", [x], [x])                               # B4
    xs = np.zeros(8, np.int32)
    out, = run(ti, {"x": xs})
    assert out.tolist() == [2 * i for i in range(8)] == xs.tolist()


def test_dynamic_gm_shape_from_an_input_scalar():
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float16", (2, n), name="x", scope=tik.scope_gm)     # T4
    y = ti.Tensor("float16", (2, n), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (1024,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, n * 2 // 16, 0, 0)
    ti.data_move(y, ub, 0, 1, n * 2 // 16, 0, 0)
    build(ti, "dyn", [x, n], [y])
    for size in (16, 48):
        xs = np.arange(2 * size, dtype=np.float16).reshape(2, size)
        out, = run(ti, {"x": xs, "n": size})
        assert out.shape == (2, size) and np.array_equal(out, xs)
    with raises_tik(IllegalOperand, match=r"has shape \(2, 16\), tensor 'x' is \[2, 32\]"):
        run(ti, {"x": np.zeros((2, 16), np.float16), "n": 32})


def test_registry_finds_kernels_whose_entry_returns_none():
    def entry():
        ti = tik.Tik()
        x = ti.Tensor("int8", (32,), name="x", scope=tik.scope_gm)
        ub = ti.Tensor("int8", (32,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x, 0, 1, 1, 0, 0)
        ti.data_move(x, ub, 0, 1, 1, 0, 0)
        ti.BuildCCE(kernel_name="returns_none", inputs=[x], outputs=[x])
    assert entry() is None
    ti = tbe_compat.kernels()["returns_none"]
    assert tbe_compat.kernel("returns_none") is ti and tik.kernels()["returns_none"] is ti
    assert tik.kernel("returns_none") is ti                      # also as tik.kernel (in tik.__all__)
    assert run(ti, {"x": np.arange(32, dtype=np.int8)})[0].tolist() == list(range(32))
    with pytest.raises(UnknownName, match="no kernel named 'nope'"):
        tbe_compat.kernel("nope")


def test_on_chip_fill_is_finite_so_x_times_zero_is_zero():
    """CHECKLIST §2.9.4: kernels zero uninitialised UB with x * 0; the on-chip fill is finite."""
    ti = tik.Tik()
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    v = ti.Scalar("float16", name="v")
    with ti.for_range(0, 16) as i:
        v.set_as(ub[i])
        ub[i].set_as(v * 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "zeroing", [], [y])
    assert (run(ti)[0] == 0).all()


# ------------------------------------------------------------------ the error contract

def test_errors_are_systemexit_and_runtimeerror_like_cann():
    ti = tik.Tik()
    try:
        ti.Tensor("float16", (0,), name="x", scope=tik.scope_ubuf)
    except SystemExit as e:
        assert isinstance(e, RuntimeError) and isinstance(e, IllegalOperand)
        assert "tik.Tensor" in str(e.code) and "TIK call stack" in str(e.code)
    else:
        pytest.fail("no error")
    with pytest.raises(RuntimeError):
        ti.Tensor("float16", (0,), name="x", scope=tik.scope_ubuf)
    quiet = tik.Tik(err_msg_level=1)
    with pytest.raises(IllegalOperand) as info:
        quiet.Tensor("float16", (0,), name="x", scope=tik.scope_ubuf)
    assert isinstance(info.value, RuntimeError) and not isinstance(info.value, SystemExit)


def test_uncaught_error_in_a_script_prints_the_report_and_exits_1(tmp_path):
    import subprocess
    import sys
    import os
    script = tmp_path / "bad_kernel.py"
    script.write_text("from tbe import tik\n"
                      "ti = tik.Tik()\n"
                      "ub = ti.Tensor('float16', (16,), name='ub', scope=tik.scope_ubuf)\n"
                      "g = ti.Tensor('float16', (16,), name='g', scope=tik.scope_gm)\n"
                      "ti.data_move(ub, g, 0, 1, 2, 0, 0)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.path.join(root, "tbe_compat", "aliases")]))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1
    assert f"{script}:5 in `tik.data_move`" in p.stderr and "tensor overflow" in p.stderr
    assert "Traceback" not in p.stderr


def test_tik_run_console_script_is_not_part_of_the_reported_call_stack(tmp_path):
    import subprocess
    import sys
    import os
    script = tmp_path / "bad_kernel.py"
    script.write_text("from tbe import tik\n"
                      "ti = tik.Tik()\n"
                      "ub = ti.Tensor('float16', (16,), name='ub', scope=tik.scope_ubuf)\n"
                      "g = ti.Tensor('float16', (16,), name='g', scope=tik.scope_gm)\n"
                      "ti.data_move(ub, g, 0, 1, 2, 0, 0)\n")
    launcher = tmp_path / "tik-run"          # what pip writes for the console_scripts entry point
    launcher.write_text("import sys\nfrom tbe_compat.cli import tik_run_main\nsys.exit(tik_run_main())\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=root)
    p = subprocess.run([sys.executable, str(launcher), str(script)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 1
    assert f"{script}:5 in <module>" in p.stderr and "tensor overflow" in p.stderr
    assert str(launcher) not in p.stderr


def test_missing_api_families_raise_a_clear_attribute_error():
    ti = tik.Tik()
    assert not hasattr(ti, "winograd_conv") and not hasattr(ti, "not_a_tik_api")
    with pytest.raises(UnsupportedOp, match="tik.winograd_conv is a TIK API this simulator does not implement yet") as info:
        ti.winograd_conv(None, None, None)
    assert isinstance(info.value, AttributeError) and info.value.where.file == __file__
    assert "migration_guide/tik_vector.md" in str(info.value)       # what to do: where the coverage is listed
    with pytest.raises(AttributeError, match="no attribute 'not_a_tik_api'"):
        ti.not_a_tik_api


def test_a_name_that_is_no_tik_api_names_the_users_line_and_the_closest_apis():
    """A typo (or a name from another DSL) is an AttributeError that is also a simulator error naming the
    call's line and the closest TIK names; ``hasattr`` stays False and private names stay plain."""
    ti = tik.Tik()
    assert not hasattr(ti, "vec_addd") and getattr(ti, "vec_addd", 7) == 7
    with pytest.raises(UnsupportedOp, match=r"tik.vec_addd is not a TIK API.*did you mean tik_instance.vec_add") \
            as info:
        ti.vec_addd(128, None, None, None, 1, 8, 8, 8)
    assert isinstance(info.value, AttributeError) and info.value.where.file == __file__
    with pytest.raises(AttributeError) as plain:
        ti._no_such_private_name
    assert not isinstance(plain.value, UnsupportedOp)


def test_a_name_the_tik_module_does_not_have_names_the_users_line_and_the_tik_spelling():
    """``tik.scope_l0a`` (a public TBE page's spelling of L0A) is an AttributeError that is also a simulator
    error naming the user's line and TIK's name ``tik.scope_ca``, through every import path of the module;
    ``hasattr``/``getattr`` defaults and dunder/private lookups stay plain Python."""
    import importlib
    for mod in ("tbe.tik", "te.tik", "impl.util.platform_adapter", "tbe_compat.tik"):
        m = importlib.import_module(mod)
        m = m.tik if mod == "impl.util.platform_adapter" else m
        assert not hasattr(m, "scope_l0a") and getattr(m, "scope_l0a", 3) == 3
        with pytest.raises(UnsupportedOp, match=r"tik.scope_l0a is not a TIK name.*tik.scope_ca") as info:
            m.scope_l0a
        assert isinstance(info.value, AttributeError) and info.value.where.file == __file__
    with pytest.raises(UnsupportedOp, match=r"did you mean tik.scope_ubuf"):
        tik.scope_ubuff
    for plain in ("__wrapped__", "_private_name"):
        with pytest.raises(AttributeError) as info:
            getattr(tik, plain)
        assert not isinstance(info.value, UnsupportedOp)


def test_a_property_whose_getter_raises_attribute_error_keeps_its_own_error():
    """Python drops a property's AttributeError and calls ``__getattr__``: the error must still name the
    attribute the getter could not read, not call the property "not a TIK API" (nor suggest itself)."""
    class MyTik(tik.Tik):
        @property
        def my_prop(self):
            return self.inner_missing_name

    ti = MyTik()
    with pytest.raises(AttributeError, match="inner_missing_name") as info:
        ti.my_prop
    assert "my_prop" not in str(info.value)
    assert not hasattr(ti, "my_prop") and getattr(ti, "my_prop", 5) == 5
    bare = tik.Tik.__new__(tik.Tik)                  # no __init__: `program` cannot read its builder
    with pytest.raises(AttributeError, match="_builder"):
        bare.program


def test_apis_the_public_sources_do_not_pin_down_raise_unsupported_with_the_reason():
    ti = tik.Tik()
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    with raises_tik(UnsupportedOp, match=r"set_scalar_to_cmpmask is not modelled: no public source says how the "
                                         r"Scalar's bits land in the 128-bit CMPMASK.*Fix: .*mov_tensor_to_cmpmask"):
        ti.set_scalar_to_cmpmask(ti.Scalar("uint64", init_value=3))
    with raises_tik(UnsupportedOp, match=r"tensor_padding_with_matrix is not modelled: the public sources do not "
                                         r"give the unit of repeat_times.*Fix: fill the matrix in UB with vec_dup"):
        ti.tensor_padding_with_matrix(l0a, 1, 1.0)
    with raises_tik(UnsupportedOp, match="set_l0_set_value is not modelled: the register it sets"):
        ti.set_l0_set_value(1.0, "float16")
    set_current_compile_soc_info("Ascend310B1")
    ti = tik.Tik()
    with raises_tik(UnsupportedOp, match="tik.tensor_padding_with_matrix is not supported on Ascend310B1"):
        ti.tensor_padding_with_matrix(ti.Tensor("float16", (256,), name="a", scope=tik.scope_ca), 1)


def test_init_value_tensors_are_internal_and_initialised():
    ti = tik.Tik()
    table = ti.Tensor("int32", (8,), name="table", scope=tik.scope_gm, init_value=[5, 6, 7, 8, 9, 10, 11, 12])
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, table, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    with raises_tik(IllegalOperand, match="has init_value; such tensors are internal"):
        ti.BuildCCE(kernel_name="init", inputs=[table], outputs=[y])
    build(ti, "init", [], [y])
    assert run(ti)[0].tolist() == [5, 6, 7, 8, 9, 10, 11, 12]
    with raises_tik(IllegalOperand, match="init_value applies to GM tensors only"):
        ti.Tensor("int32", (8,), name="u", scope=tik.scope_ubuf, init_value=[1])


def test_every_import_name_reaches_the_same_tik():
    import importlib
    import warnings
    import tbe_compat.tik as core
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        te_tik = importlib.import_module("te.tik")
    from tbe import tik as tbe_tik
    for mod in (te_tik, tbe_tik):
        for name in ("Tik", "Tensor", "Scalar", "InputScalar", "Expr", "all", "any", "negate", "scope_gm",
                     "scope_ubuf", "scope_cbuf", "scope_cbuf_out", "scope_cc", "scope_ca", "scope_cb", "Dprofile"):
            assert getattr(mod, name) is getattr(core, name), name


def _index_add_kernel():
    """var_out[idx[i]] += upd[i] for 8-float rows, reading var_out: CANN's inplace_index_add pattern
    (separate var / var_out tensors that the framework places on the same memory)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    var = ti.Tensor("float32", (4, 8), name="var", scope=tik.scope_gm)
    idx = ti.Tensor("int32", (8,), name="idx", scope=tik.scope_gm)
    upd = ti.Tensor("float32", (2, 8), name="upd", scope=tik.scope_gm)
    var_out = ti.Tensor("float32", (4, 8), name="var_out", scope=tik.scope_gm)
    iu = ti.Tensor("int32", (8,), name="iu", scope=tik.scope_ubuf)
    uu = ti.Tensor("float32", (2, 8), name="uu", scope=tik.scope_ubuf)
    row = ti.Tensor("float32", (8,), name="row", scope=tik.scope_ubuf)
    ti.data_move(iu, idx, 0, 1, 1, 0, 0)
    ti.data_move(uu, upd, 0, 1, 2, 0, 0)
    with ti.for_range(0, 2) as i:
        r = ti.Scalar("int32", name="r", init_value=iu[i])
        ti.data_move(row, var_out[r, 0], 0, 1, 1, 0, 0)
        ti.vec_add(8, row, row, uu[i, 0], 1, 8, 8, 8)
        ti.data_move(var_out[r, 0], row, 0, 1, 1, 0, 0)
    ti.BuildCCE("index_add", inputs=[var, idx, upd], outputs=[var_out])
    return ti


def test_start_debug_inplace_places_an_output_on_its_input():
    ti = _index_add_kernel()
    var = np.arange(32, dtype=np.float32).reshape(4, 8)
    upd = np.full((2, 8), 10, np.float32)
    feed = {"var": var.copy(), "idx": np.array([2, 0, 0, 0, 0, 0, 0, 0], np.int32), "upd": upd}
    out, = ti.tikdb.start_debug(feed, interactive=False, inplace={"var_out": "var"})
    want = var.copy()
    want[2] += 10
    want[0] += 10
    np.testing.assert_array_equal(out, want)


def test_start_debug_inplace_sizes_a_dynamic_shape_output_from_its_input():
    """CANN's dynamic scatter_update declares var / var_out as (MAX_INT32,) and writes var only: the
    in-place output takes the fed input's size (no feed_dict entry for it)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    var = ti.Tensor("float32", (2**31 - 1,), name="var", scope=tik.scope_gm)
    upd = ti.Tensor("float32", (2**31 - 1,), name="upd", scope=tik.scope_gm)
    var_out = ti.Tensor("float32", (2**31 - 1,), name="var_out", scope=tik.scope_gm)
    row = ti.Tensor("float32", (8,), name="row", scope=tik.scope_ubuf)
    ti.data_move(row, upd, 0, 1, 1, 0, 0)
    ti.data_move(var[16], row, 0, 1, 1, 0, 0)
    ti.BuildCCE("scatter_update", inputs=[var, upd], outputs=[var_out])
    v = np.arange(32, dtype=np.float32)
    out, = ti.tikdb.start_debug({"var": v.copy(), "upd": np.full(8, -1, np.float32)}, interactive=False,
                                inplace={"var_out": "var"})
    want = v.copy()
    want[16:24] = -1
    np.testing.assert_array_equal(out, want)


def test_start_debug_inplace_names_must_be_an_output_and_an_input():
    ti = _index_add_kernel()
    feed = {"var": np.zeros((4, 8), np.float32), "idx": np.zeros(8, np.int32), "upd": np.zeros((2, 8), np.float32)}
    with raises_tik(UnknownName, match=r"inplace 'var' -> 'var_out': needs a BuildCCE output name mapped to an "
                                       r"input name"):
        ti.tikdb.start_debug(feed, interactive=False, inplace={"var": "var_out"})
    with raises_tik(UnknownName, match=r"needs a BuildCCE output name mapped to an input name"):
        ti.tikdb.start_debug(feed, interactive=False, inplace={"var_out": ["var"]})      # was TypeError: unhashable


def test_an_input_scalar_may_make_a_gm_tensor_empty():
    """A framework passes an empty tensor (shape [0]) to a kernel that then reads nothing of it (CANN
    sparse_segment_sum_grad's tiling key 0); a read of it is out of bounds, a negative size an error."""
    def kernel(read: bool):
        ti = tik.Tik()
        n = ti.InputScalar("int32", name="n")
        x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
        ti.vector_dup(16, ub, 2.0, 1, 1, 8)
        with ti.if_scope(n > 0):
            ti.data_move(ub, x, 0, 1, 1, 0, 0)
        if read:
            ti.data_move(ub, x[8], 0, 1, 1, 0, 0)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
        ti.BuildCCE("empty_in", inputs=[x, n], outputs=[y])
        return ti
    out, = kernel(False).tikdb.start_debug({"x": np.zeros((0,), np.float16), "n": 0}, interactive=False)
    assert out.tolist() == [2.0] * 16
    with pytest.warns(GmOverreadWarning, match=r"reads float16 elements 8..23 \(bytes \[16, 48\)\) of tensor 'x' \(0 elements, 0 B"):
        kernel(True).tikdb.start_debug({"x": np.zeros((0,), np.float16), "n": 0}, interactive=False)
    with raises_tik(IllegalOperand, match=r"tensor 'x' is \[-1\]"):
        kernel(False).tikdb.start_debug({"x": np.zeros((0,), np.float16), "n": -1}, interactive=False)


def test_start_debug_block_dim_launches_only_the_first_blocks():
    """start_debug(block_dim=n) (simulator extension): a host whose tiling launches fewer blocks than the
    kernel's block_num runs blocks 0..n-1 only. Here every block writes the whole output (an unguarded
    kernel, as CANN cumsum's small-row path): all 4 blocks race; one block alone does not."""
    import warnings
    from pto_core.errors import ConfigError, GmRaceWarning
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("int32", (4, 8), name="z", scope=tik.scope_gm)
    with ti.for_range(0, 4, block_num=4) as b:
        ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
        zu = ti.Tensor("int32", (8,), name="zu", scope=tik.scope_ubuf)
        ti.data_move(ub, x, 0, 1, 1, 0, 0)
        ti.vec_adds(16, ub, ub, b + 1, 1, 8, 8)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)                 # every block: the whole of y
        ti.vec_dup(8, zu, b + 1, 1, 8)
        ti.data_move(z[b, 0], zu, 0, 1, 1, 0, 0)           # block b: row b of z
    ti.BuildCCE("blk", [x], [y, z])
    feed = {"x": np.arange(16, dtype=np.float16)}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        y1, z1 = ti.tikdb.start_debug(feed, interactive=False, block_dim=1)
    assert np.array_equal(y1, np.arange(16, dtype=np.float16) + 1)
    assert z1[0].tolist() == [1] * 8
    texts = [str(w.message) for w in seen]
    assert any("output 'z': 96 of 128 bytes hold no data the kernel wrote" in t for t in texts)   # rows 1..3
    assert not any(issubclass(w.category, GmRaceWarning) for w in seen)
    with pytest.warns(GmRaceWarning, match="GM race"):
        _, z4 = ti.tikdb.start_debug(feed, interactive=False)
    assert z4[:, 0].tolist() == [1, 2, 3, 4]
    with pytest.warns(GmRaceWarning):
        _, z2 = ti.tikdb.start_debug(feed, interactive=False, block_dim=np.int64(2))
    assert z2[:2, 0].tolist() == [1, 2]
    for bad in (0, 5, 1.5, True):
        with raises_tik(ConfigError, match=r"test_build_debug.py:\d+ .*block_dim = .* is not a block count in "
                                           r"\[1, 4\]"):
            ti.tikdb.start_debug(feed, interactive=False, block_dim=bad)


def test_an_int_fed_to_a_float_input_scalar_is_rounded_once():
    """A float InputScalar fed a Python int takes the int rounded once to its dtype, as a float Scalar's
    init_value does: float(v) first rounded 2**60 + 2**36 + 1 to 2**60 in float64 (float32 then gave 2**60, not
    2**60 + 2**37), and an int past float64's range was a bare OverflowError; it is inf."""
    set_current_compile_soc_info("Ascend910B1")
    for dt, v, want in (("float32", 2 ** 60 + 2 ** 36 + 1, 2.0 ** 60 + 2.0 ** 37),
                        ("float32", -(2 ** 60 + 2 ** 36 + 1), -(2.0 ** 60 + 2.0 ** 37)),
                        ("float32", np.uint64(2 ** 64 - 1), 2.0 ** 64), ("float16", 65519, 65504.0),
                        ("float32", 2 ** 1100, np.inf), ("float16", -2 ** 1100, -np.inf), ("float32", 1.5, 1.5)):
        ti = tik.Tik()
        out = ti.Tensor(dt, (16,), name="out", scope=tik.scope_gm)
        ub = ti.Tensor(dt, (16,), name="ub", scope=tik.scope_ubuf)
        s = ti.InputScalar(dt, name="isc")
        ti.vec_dup(16, ub, s, 1, 8)
        ti.data_move(out, ub, 0, 1, 16 * np.dtype(dt).itemsize // 32, 0, 0)
        build(ti, "isc_float", [s], [out])
        got = run(ti, {"isc": v})[0]
        assert (got == np.array(want, dtype=dt)).all(), (dt, v, got[0])


def test_an_output_listed_twice_is_refused_at_buildcce():
    """``outputs=[y, y]`` (meant: ``[y, st]``) was accepted: start_debug returned y twice and the script's
    ``y, st = ...`` silently compared the wrong array (user404). tik_api.md §3.2: argument names are unique.
    A tensor that is both an input and an output (in-place) stays legal, and so do different views of one tensor
    (test_outputs_in_order_with_view_shapes_and_gm_patterns)."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    with raises_tik(IllegalOperand, match=r"outputs\[1\] \(tensor 'y'\) is outputs\[0\] again") as e:
        ti.BuildCCE(kernel_name="k", inputs=[x], outputs=[y, y])
    assert "Fix: list each output tensor once" in str(e.value)
    with raises_tik(IllegalOperand, match=r"outputs\[2\] \(tensor 'y'\) is outputs\[0\] again"):
        ti.BuildCCE(kernel_name="k", inputs=[x], outputs=[y, x, y])
    ti.BuildCCE(kernel_name="k", inputs=[x, y], outputs=[y, y[0:8]])          # in place, and a view: fine
    assert [o.shape for o in ti.tikdb.start_debug({"x": np.ones(16, np.float16), "y": np.zeros(16, np.float16)},
                                                  interactive=False)] == [(16,), (8,)]


@pytest.mark.parametrize("tool, main", [("tik-run", "tik_run_main"), ("tik-migrate", "tik_migrate_main"),
                                        ("tik-compare-fixpipe", "tik_compare_fixpipe_main")])
def test_no_console_script_launcher_is_part_of_the_call_stack(tmp_path, tool, main):
    """h_user453: `./venv/bin/tik-run k.py` ran the launcher as `/cwd/./venv/bin/tik-run`, which the registered
    (normalised) path did not match, and tik-migrate / tik-compare-fixpipe never registered theirs: the TIK call
    stack of an error started at `venv/bin/tik-migrate:8 in <module>`."""
    import subprocess
    import sys
    import os
    script = tmp_path / "bad_kernel.py"
    script.write_text("from tbe import tik\n"
                      "ti = tik.Tik()\n"
                      "ub = ti.Tensor('float16', (16,), name='ub', scope=tik.scope_ubuf)\n"
                      "g = ti.Tensor('float16', (16,), name='g', scope=tik.scope_gm)\n"
                      "ti.data_move(ub, g, 0, 1, 2, 0, 0)\n")
    (tmp_path / "bin").mkdir()
    launcher = tmp_path / "bin" / tool
    launcher.write_text(f"import sys\nfrom tbe_compat.cli import {main}\nsys.exit({main}())\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=root)
    p = subprocess.run([sys.executable, os.path.join(".", "bin", tool), str(script)], capture_output=True,
                       text=True, env=env, timeout=60, cwd=tmp_path)
    assert "TIK call stack" in p.stderr and f"{script}:5 in <module>" in p.stderr, p.stderr
    assert f"bin{os.sep}{tool}:" not in p.stderr, p.stderr


def test_a_user_script_whose_path_extends_the_launchers_is_part_of_the_call_stack(tmp_path):
    """review457: frames were matched to the registered launcher / packages by string prefix, so with the
    launcher bin/tik-run registered, the user's bin/tik-run_kernel.py was taken for the launcher and left out
    of its own TIK call stack (and a folder pto_core_kernels next to the package pto_core likewise)."""
    import subprocess
    import sys
    import os
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "tik-run_kernel.py"
    script.write_text("from tbe import tik\n"
                      "ti = tik.Tik()\n"
                      "ub = ti.Tensor('float16', (16,), name='ub', scope=tik.scope_ubuf)\n"
                      "g = ti.Tensor('float16', (16,), name='g', scope=tik.scope_gm)\n"
                      "ti.data_move(ub, g, 0, 1, 2, 0, 0)\n")
    launcher = tmp_path / "bin" / "tik-run"
    launcher.write_text("import sys\nfrom tbe_compat.cli import tik_run_main\nsys.exit(tik_run_main())\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=root)
    p = subprocess.run([sys.executable, str(launcher), str(script)], capture_output=True, text=True, env=env,
                       timeout=60, cwd=tmp_path)
    assert "TIK call stack" in p.stderr and f"{script}:5 in <module>" in p.stderr, p.stderr
    from pto_core.ops import registry
    pkg = registry._INTERNAL[0]
    assert registry.is_internal_file(os.path.join(pkg, "memory.py"))
    assert not registry.is_internal_file(pkg + "_kernels" + os.sep + "k.py")
