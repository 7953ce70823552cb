"""Defects a new user hit running the tools end to end (each: the fixed behaviour, and the case that
keeps working): unwritten outputs are reported, cube extent errors explain the padded shapes,
start_debug says what an unexpected feed key is, the CLIs' --soc / missing-script / traceback
reports, tik-migrate's stdout carries only the listing and shows hidden float constants, and
tik-compare-fixpipe says when a script failed before BuildCCE."""
import os
import sys
import warnings

import numpy as np
import pytest

from pto_core.errors import OutOfBounds, UninitializedReadWarning, UnknownName
from tbe import tik
from tbe_compat import migrate
from tbe_compat.cli import tik_run_main
from tbe_compat.compare import compare_script
from tbe_compat.migrate import main as tik_migrate
from tbe_compat.tik import container as tik_container

from .helpers import build, copy_kernel, raises_tik, run

HERE = os.path.abspath(__file__)


# ------------------------------------------------------------------ outputs the kernel never wrote

def _copy_of(listed: bool):
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    return build(ti, "copy", [x] if listed else [], [y])


def test_an_input_missing_from_buildcce_warns_at_the_start_debug_line():
    ti = _copy_of(listed=False)           # x is then an unfed workspace: y would be the 0xFF launch fill
    with pytest.warns(UninitializedReadWarning) as rec:
        out, = ti.tikdb.start_debug({}, interactive=False)
    assert np.isnan(out).all()
    msg = str(rec[0].message)
    assert "output 'y': 256 of 256 bytes hold no data the kernel wrote" in msg
    assert "BuildCCE(inputs=[...])" in msg
    assert rec[0].filename == HERE
    assert ti.tikdb.executable.unwritten_outputs == {"y": (256, 256, 0)}


def test_a_kernel_that_writes_every_output_byte_does_not_warn():
    ti = copy_kernel()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UninitializedReadWarning)
        out, = run(ti, {"x": np.arange(128, dtype=np.float16)})
    assert out.tobytes() == np.arange(128, dtype=np.float16).tobytes()
    assert ti.tikdb.reports == [] and ti.tikdb.executable.unwritten_outputs == {}


def _padded_output_view(blocks: int):
    """BuildCCE's output is ``o[:2, :]`` of a GM tensor padded by one row (CANN's STFT on 310P returns
    ``output_data_310p[:batches]``); the kernel stores ``blocks`` 32-byte blocks of it."""
    ti = tik.Tik()
    a = ti.Tensor("float32", (2, 64), name="a", scope=tik.scope_gm)
    o = ti.Tensor("float32", (3, 64), name="o", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (2, 64), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, a, 0, 1, 16, 0, 0)
    ti.data_move(o, ub, 0, 1, blocks, 0, 0)
    return build(ti, "padded", [a], [o[:2, :]])


def test_an_output_view_counts_only_its_own_bytes():
    """The padding row outside the returned view is not output data: no warning when the view is all
    written (it warned '256 of 768 bytes'); a hole inside the view is counted against the view."""
    x = np.arange(128, dtype=np.float32).reshape(2, 64)
    ti = _padded_output_view(16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UninitializedReadWarning)
        out, = ti.tikdb.start_debug({"a": x}, interactive=False)
    np.testing.assert_array_equal(out, x)
    ti = _padded_output_view(12)
    with pytest.warns(UninitializedReadWarning, match=r"output 'o': 128 of 512 bytes .* \(first at byte 0x180\)"):
        out, = ti.tikdb.start_debug({"a": x}, interactive=False)
    np.testing.assert_array_equal(out.reshape(-1)[:96], x.reshape(-1)[:96])


# ------------------------------------------------------------------ cube extents

def _int8_matmul(m_rows: int):
    ti = tik.Tik()
    a = ti.Tensor("int8", (2, m_rows, 32), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("int8", (2, 32, 32), name="b", scope=tik.scope_cbuf)
    c = ti.Tensor("int32", (2, 32, 16), name="c", scope=tik.scope_cbuf_out)
    ti.matmul(c, a, b, 20, 64, 32)
    return ti


def test_matmul_a_sized_for_the_unpadded_m_says_m_is_padded_to_16():
    with raises_tik(OutOfBounds, match=r"m=20 is padded to a multiple of 16 \(32\).*shape \(2, 32, 32\)"):
        _int8_matmul(20)
    _int8_matmul(32)                       # the padded shape is accepted


# ------------------------------------------------------------------ feed_dict keys

def test_start_debug_says_what_an_unexpected_key_names():
    ti = copy_kernel()
    x = np.ones(128, np.float16)
    with raises_tik(UnknownName, match=r"unexpected 'y' \(a BuildCCE output: start_debug returns it"):
        run(ti, {"x": x, "y": x})
    with raises_tik(UnknownName, match=r"unexpected 'ub' \(an on-chip UB tensor"):
        run(ti, {"x": x, "ub": x})
    with raises_tik(UnknownName, match=r"unexpected 'q'; |unexpected 'q' \(limit"):
        run(ti, {"x": x, "q": x})
    assert run(ti, {"x": x})[0].tobytes() == x.tobytes()


def test_start_debug_names_a_tik_object_used_as_a_feed_key():
    """{x: arr} (the Tensor, not its name) used to report a tensor comparison ('operand self: comparing
    tensor view ... needs a single element ... vcmpv_*'); an InputScalar key a str comparison."""
    ti = copy_kernel()
    x_tensor, = ti.build.inputs
    x = np.ones(128, np.float16)
    with raises_tik(UnknownName, match=r"operand feed_dict: feed_dict key is the tensor object 'x', not its name "
                                       r"Fix: key the feed by the name= string: \{'x': ...\}"):
        run(ti, {x_tensor: x})
    si = tik.Tik()
    y = si.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = si.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    s = si.InputScalar(dtype="float16", name="s")
    si.vec_dup(128, ub, s, 1, 8)
    si.data_move(y, ub, 0, 1, 8, 0, 0)
    build(si, "dup", [s], [y])
    with raises_tik(UnknownName, match=r"feed_dict key is the InputScalar object 's', not its name"):
        run(si, {s: 3})
    assert (run(si, {"s": 3})[0] == 3).all()
    assert run(ti, {"x": x})[0].tobytes() == x.tobytes()


def test_missing_feed_of_a_tensor_without_name_says_where_it_was_declared(monkeypatch):
    """With TENSOR_NAME_AND_SHAPE_REQUIRED off, Tensor(...) without name= is named tensor_<n>; the feed error names
    that default and the declaration line, so the user can find which tensor 'tensor_0' is (ux304). A named tensor
    gets no such note. (On, the default, the declaration itself is refused: test_tensors.py.)"""
    monkeypatch.setattr(tik_container, "TENSOR_NAME_AND_SHAPE_REQUIRED", False)
    ti = tik.Tik()
    a = ti.Tensor("float16", (16,), scope=tik.scope_gm)
    declared = sys._getframe().f_lineno - 1
    o = ti.Tensor("float16", (16,), name="o", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, a, 0, 1, 1, 0, 0)
    ti.vec_adds(16, ub, ub, 1.0, 1, 8, 8)
    ti.data_move(o, ub, 0, 1, 1, 0, 0)
    build(ti, "auto", [a], [o])
    with raises_tik(UnknownName, match=rf"missing 'tensor_0' \(the tensor declared at \S*test_userflow.py:{declared} "
                                       r"without name=: its default name\); unexpected 'a'"):
        run(ti, {"a": np.ones(16, np.float16)})
    assert (run(ti, {"tensor_0": np.ones(16, np.float16)})[0] == 2).all()
    with raises_tik(UnknownName, match=r"missing 'x'( ;|;|$| \(limit)") as e:
        run(copy_kernel(), {})
    assert "default name" not in str(e.value)


def test_an_expression_as_a_feed_key_is_named_not_compared():
    """{s + 1: 2}: an unnamed TIK expression key reached the key matching, whose == built a TIK comparison
    ('cannot use str 'x' as a scalar operand of a comparison' in tik.Expr.__eq__) (h_review311)."""
    si = tik.Tik()
    y = si.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = si.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    s = si.InputScalar(dtype="float16", name="s")
    si.vec_dup(128, ub, s, 1, 8)
    si.data_move(y, ub, 0, 1, 8, 0, 0)
    build(si, "dup", [s], [y])
    with raises_tik(UnknownName, match=r"feed_dict key is a TIK scalar expression, not an input name"):
        run(si, {"s": 3, s + 1: 4})
    assert (run(si, {"s": 3})[0] == 3).all()


def test_an_explicit_name_equal_to_a_default_name_gets_no_default_name_note(monkeypatch):
    """name='tensor_1' given explicitly, then Tensor(...) without name= (also 'tensor_1', with
    TENSOR_NAME_AND_SHAPE_REQUIRED off): the missing-feed error said the explicit one was 'declared ... without
    name=' (h_review311)."""
    monkeypatch.setattr(tik_container, "TENSOR_NAME_AND_SHAPE_REQUIRED", False)
    ti = tik.Tik()
    a = ti.Tensor("float16", (16,), name="tensor_1", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), scope=tik.scope_ubuf)
    o = ti.Tensor("float16", (16,), name="o", scope=tik.scope_gm)
    assert ub.name == a.name == "tensor_1"
    ti.data_move(ub, a, 0, 1, 1, 0, 0)
    ti.data_move(o, ub, 0, 1, 1, 0, 0)
    build(ti, "collide", [a], [o])
    with raises_tik(UnknownName, match=r"missing 'tensor_1'") as e:
        run(ti, {})
    assert "without name=" not in str(e.value)
    assert (run(ti, {"tensor_1": np.ones(16, np.float16)})[0] == 1).all()


def test_start_debug_names_a_gm_tensor_missing_from_the_inputs():
    ti = _copy_of(listed=False)
    with raises_tik(UnknownName, match=r"unexpected 'x' \(a GM tensor BuildCCE does not list as an input"):
        run(ti, {"x": np.ones(128, np.float16)})


# ------------------------------------------------------------------ CLIs

def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_cli_soc_errors_name_the_option_not_the_launcher(tmp_path, capsys):
    script = _write(tmp_path, "ok.py", "print('ran')\n")
    assert tik_run_main(["--soc", "Ascend999", script]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tik-run: error: operand --soc: unsupported SoC version 'Ascend999'") and ".py:" not in err
    assert tik_migrate(["--soc", "Ascend910B1:Cube", script]) == 2
    assert "operand --soc: unsupported core type 'Cube'" in capsys.readouterr().err
    assert tik_run_main(["--soc", "Ascend910B1", script]) == 0
    assert capsys.readouterr().out == "ran\n"


def test_cli_empty_soc_and_a_folder_as_script_are_usage_errors(tmp_path, capsys):
    """`--soc ""` is an unknown chip (it used to be ignored: the script ran on the default chip), and a folder
    given as the script is named as a folder, not as missing; tik-run, tik-migrate and tik-compare-fixpipe."""
    from tbe_compat.cli import tik_compare_fixpipe_main
    script = _write(tmp_path, "ok.py", "print('ran')\n")
    for main in (tik_run_main, tik_migrate, tik_compare_fixpipe_main):
        assert main(["--soc", "", script]) == 2
        out, err = capsys.readouterr()
        assert "operand --soc: unsupported SoC version ''" in err and "ran" not in out
        assert main([str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert f"script {str(tmp_path)!r} is a folder, not a file" in err and "does not exist" not in err


def test_cli_a_device_or_pipe_as_script_is_not_called_missing(tmp_path, capsys):
    """A path that exists but is no regular file (/dev/null, a FIFO) was reported as "does not exist"."""
    from tbe_compat.cli import tik_compare_fixpipe_main
    for main in (tik_run_main, tik_migrate, tik_compare_fixpipe_main):
        assert main([os.devnull]) == 2
        err = capsys.readouterr().err
        assert f"script {os.devnull!r} is not a regular file" in err and "Fix:" in err
        assert "does not exist" not in err


def test_tik_run_soc_names_cann20_gives_a_2020_kernel_the_name_it_tests(tmp_path, capsys):
    from tbe_compat import platform
    script = _write(tmp_path, "soc.py", "from tbe.common import platform as tbe_platform\n"
                                        "print(tbe_platform.get_soc_spec('SOC_VERSION'))\n")
    try:
        assert tik_run_main(["--soc", "Ascend910", "--soc-names", "cann20", script]) == 0
        assert capsys.readouterr().out == "Ascend910\n"
    finally:
        platform.set_soc_version_naming("current")
    assert tik_run_main(["--soc", "Ascend910", script]) == 0
    assert capsys.readouterr().out == "Ascend910A\n"


_V200_BRANCH = """
import numpy as np
from tbe import tik
from tbe.common import platform as tbe_platform
v200 = tbe_platform.get_soc_spec("SOC_VERSION") in ("Ascend710", "Ascend610", "Ascend615")
cores = tbe_platform.get_soc_spec("CORE_NUM")
ti = tik.Tik()
x = ti.Tensor("int32", (cores, 8), name="x", scope=tik.scope_gm)
y = ti.Tensor("int32", (cores, 8), name="y", scope=tik.scope_gm)
with ti.for_range(0, cores, block_num=cores) as c:
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x[c, 0], 0, 1, 1, 0, 0)
    if v200:                       # int32 vadds exists on v200 only
        ti.vadds(8, ub, ub, 7, 1, 1, 1, 8, 8)
    ti.data_move(y[c, 0], ub, 0, 1, 1, 0, 0)
ti.BuildCCE(kernel_name="v200_branch", inputs=[x], outputs=[y])
data = np.arange(cores * 8, dtype=np.int32).reshape(cores, 8)
out, = ti.tikdb.start_debug({"x": data}, interactive=False)
print(cores, v200, bool(np.array_equal(out, data + 7)))
"""


def test_tik_run_accepts_the_pre_release_name_a_2021_kernel_selects(tmp_path, capsys):
    """CANN 5.x kernels and op tests select "Ascend710" (the 8-core 310P) and branch on SOC_VERSION."""
    script = _write(tmp_path, "v200.py", _V200_BRANCH)
    assert tik_run_main(["--soc", "Ascend710", script]) == 0
    assert capsys.readouterr().out == "8 True True\n"
    assert tik_run_main(["--soc", "Ascend310P3", script]) == 0           # current name: the v100 branch
    assert capsys.readouterr().out == "8 False False\n"
    assert tik_run_main(["--soc", "Ascend920A", script]) == 2
    assert "pre-release CANN name that matches no modelled part" in capsys.readouterr().err


def test_tik_run_without_a_script_asks_for_the_script_only(capsys):
    with pytest.raises(SystemExit) as e:
        tik_run_main([])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "required: script" in err and "args" not in err.splitlines()[-1]


def test_tik_run_tracebacks_show_the_script_frames_only(tmp_path, capsys):
    bad = _write(tmp_path, "bad.py", "x = (\n")
    assert tik_run_main([bad]) == 1
    err = capsys.readouterr().err
    assert "SyntaxError" in err and "cli.py" not in err
    boom = _write(tmp_path, "boom.py", "def f():\n    raise ValueError('boom')\nf()\n")
    assert tik_run_main([boom]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n  File \"" + boom + "\", line 3")
    assert "cli.py" not in err and err.rstrip().endswith("ValueError: boom")


_DEQ = """
import numpy as np
from tbe import tik
print("script says hello")
ti = tik.Tik()
a = ti.Tensor("int8", (2, 32, 32), name="a", scope=tik.scope_cbuf)
b = ti.Tensor("int8", (2, 32, 32), name="b", scope=tik.scope_cbuf)
c = ti.Tensor("int32", (2, 32, 16), name="c", scope=tik.scope_cbuf_out)
a_gm = ti.Tensor("int8", (2, 32, 32), name="a_gm", scope=tik.scope_gm)
b_gm = ti.Tensor("int8", (2, 32, 32), name="b_gm", scope=tik.scope_gm)
o = ti.Tensor("float16", (2, 20, 16), name="o", scope=tik.scope_gm)
ti.data_move(a, a_gm, 0, 1, 64, 0, 0)
ti.data_move(b, b_gm, 0, 1, 64, 0, 0)
ti.matmul(c, a, b, 20, 64, 32)
ti.fixpipe(o, c, 2, 40, 0, 0, extend_params={"quantize_params": {"mode": "int322fp16", "mode_param": SCALE}})
ti.BuildCCE(kernel_name="deq", inputs=[a_gm, b_gm], outputs=[o])
"""


def test_tik_migrate_listing_on_stdout_script_output_on_stderr_and_float_constants_shown(tmp_path, capsys):
    script = _write(tmp_path, "deq.py", _DEQ.replace("SCALE", "0.3"))
    assert tik_migrate([script, "--width", "0"]) == 0
    out, err = capsys.readouterr()
    assert "script says hello" in err and "script says hello" not in out
    fix = next(ln for ln in out.splitlines() if "pto.mte_l0c_gm" in ln)
    assert "pre_quant(%cst, mode = deqf16_scalar)" in fix
    assert "// %cst = 0.300048828125 : f32" in fix          # the legacy scale as float16, the value to write
    trace = migrate.trace_script(script)
    rows = migrate.listing(trace.kernels["deq"], constants=True)   # listed constants: no comment needed
    assert not any("// %cst" in t for r in rows for t in r.pto)
    assert any(t == "%cst = arith.constant 0.300048828125 : f32" for r in rows for t in r.pto)


def test_tik_migrate_does_not_annotate_self_describing_constants(tmp_path, capsys):
    script = _write(tmp_path, "deq.py", _DEQ.replace("SCALE", "0.5"))
    rows = migrate.listing(migrate.trace_script(script).kernels["deq"])
    capsys.readouterr()
    move = next(t for r in rows for t in r.pto if t.startswith("pto.mte_gm_l1 "))
    assert "//" not in move and "%c2048_i64" in move


def test_compare_says_the_script_failed_before_buildcce(tmp_path, capsys):
    bad = _write(tmp_path, "bad.py", _DEQ.replace("SCALE", "0.3").replace("(2, 32, 32), name=\"a\"",
                                                                          "(2, 20, 32), name=\"a\""))
    res = compare_script(bad)
    assert res.exit_status == 3
    assert res.notes == ["the script failed before it built a kernel (its error is below)"]
    assert "bad.py:12 in `tik.data_move`" in res.script_error
    empty = _write(tmp_path, "empty.py", "x = 1\n")
    assert compare_script(empty).notes == ["the script built no kernel (no BuildCCE call)"]
    capsys.readouterr()


def test_an_output_written_only_for_its_first_n_elements_names_the_range_not_written():
    """A dynamic-shape output the kernel stores only the first n elements of: the warning names the
    element range left out, what it holds (the launch fill; stale memory on a device) and a Fix for
    that case, not only the unlisted-input one (h_ux261)."""
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float32", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 16, 0, 0)
    ti.data_move(y, ub, 0, 1, n // 8, 0, 0)
    ti.BuildCCE(kernel_name="first_n", inputs=[x, n], outputs=[y])
    xs = np.arange(128, dtype=np.float32)
    with pytest.warns(UninitializedReadWarning) as rec:
        out, = ti.tikdb.start_debug({"x": xs, "n": 40}, interactive=False)
    msg = str(rec[0].message)
    assert "output 'y': 352 of 512 bytes hold no data the kernel wrote: elements [40, 128) (first at byte 0xa0)" in msg
    assert "initial contents" in msg and "0xff" in msg and "first n elements of a dynamic shape" in msg
    assert np.array_equal(out[:40], xs[:40]) and np.isnan(out[40:]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UninitializedReadWarning)
        ti.tikdb.start_debug({"x": xs, "n": 128}, interactive=False)


def test_the_unwritten_output_warning_lists_at_most_three_ranges():
    ti = tik.Tik()
    x = ti.Tensor("int16", (16, 16), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int16", (16, 16), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int16", (16, 16), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 16, 0, 0)
    ti.data_move(y, ub, 0, 8, 1, 1, 1)                  # rows 0, 2, ..., 14: rows 1, 3, ..., 15 not written
    ti.BuildCCE(kernel_name="rows", inputs=[x], outputs=[y])
    with pytest.warns(UninitializedReadWarning,
                      match=r"elements \[16, 32\), \[48, 64\), \[80, 96\) and 5 more range\(s\) \(first at byte 0x20\)"):
        ti.tikdb.start_debug({"x": np.zeros((16, 16), np.int16)}, interactive=False)


def test_the_warning_of_an_output_left_partly_unwritten_names_the_ops_storing_to_it():
    """h_user440: a fixpipe given burst_len in float16 (dst) units wrote half of its output; the warning at the
    start_debug line named the missing elements but not the store to check. It now names the stores' sites."""
    from tbe.common.platform import set_current_compile_soc_info
    from tbe_compat.tik import debug as D
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (2, 32, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (2, 32, 16), name="b_gm", scope=tik.scope_gm)
    c_gm = ti.Tensor("float16", (2, 32, 16), name="c_gm", scope=tik.scope_gm)
    a_l1 = ti.Tensor("float16", (2, 32, 16), name="a_l1", scope=tik.scope_cbuf)
    b_l1 = ti.Tensor("float16", (2, 32, 16), name="b_l1", scope=tik.scope_cbuf)
    acc = ti.Tensor("float32", (2, 32, 16), name="acc", scope=tik.scope_cbuf_out)
    ti.data_move(a_l1, a_gm, 0, 1, 64, 0, 0)
    ti.data_move(b_l1, b_gm, 0, 1, 64, 0, 0)
    ti.matmul(acc, a_l1, b_l1, 32, 32, 32)
    ti.fixpipe(c_gm, acc, 2, 32 * 16 * 2 // 32, 0, 0,           # burst_len in f16 units: half the rows
               extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    line = sys._getframe().f_lineno - 2
    ti.BuildCCE(kernel_name="half_out", inputs=[a_gm, b_gm], outputs=[c_gm])
    feed = {"a_gm": np.ones((2, 32, 16), np.float16), "b_gm": np.ones((2, 32, 16), np.float16)}
    with pytest.warns(UninitializedReadWarning, match=r"output 'c_gm': 1024 of 2048 bytes hold no data the kernel "
                      r"wrote: elements \[512, 1024\) \(first at byte 0x400\); stored by tik.fixpipe at "
                      rf"test_userflow.py:{line}\. Elements never stored"):
        ti.tikdb.start_debug(feed, interactive=False)
    assert D.output_store_sites(ti.program, "a_gm") == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert D.output_store_sites(ti.program, "c_gm") == [f"tik.fixpipe at test_userflow.py:{line}"]
