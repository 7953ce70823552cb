"""tikdb.debug_print(expr): names resolved in the caller's frame, one pto.debug_eval, printed at run time."""
import numpy as np
import pytest

from pto_core import asm
from pto_core.errors import IllegalOperand, UnsupportedOp
from tbe import tik

from .helpers import raises_tik


def _run(ti, feed, outputs):
    ti.BuildCCE(kernel_name="dbg", inputs=[t for t, _ in feed], outputs=outputs)
    ti.tikdb.start_debug({t.name: a for t, a in feed}, interactive=False)
    return [text for _, text in ti.tikdb.executable.machine.printed]


def _values_kernel():
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    yb = ti.Tensor("int32", (2, 4), name="yb", scope=tik.scope_ubuf)
    s = ti.Scalar("int32", init_value=3)
    f = ti.Scalar("float32", init_value=1.5)
    arr = ti.ScalarArray("int32", 3, init_value=[1, 2, 3])
    scale = 7
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.data_move(yb, y, 0, 1, 1, 0, 0)
    view = ub[2:6]
    s.set_as(s + 1)
    ti.tikdb.debug_print("ub")
    ti.tikdb.debug_print("yb")
    ti.tikdb.debug_print("view")
    ti.tikdb.debug_print("yb[1]")
    ti.tikdb.debug_print("s")
    ti.tikdb.debug_print("s * 2 + f")
    ti.tikdb.debug_print("arr")
    ti.tikdb.debug_print('"a printed string"')
    ti.tikdb.debug_print('"text" + str(s), "text"')
    ti.tikdb.debug_print("scale + s, [v * 2 for v in arr], int(np.sum(yb))")
    ti.tikdb.debug_print("view.dtype, view.shape")
    ti.data_move(x, ub, 0, 1, 1, 0, 0)
    assert all(v is not None for v in (f, arr, scale, view))     # named only in the expressions
    return ti, [(x, np.arange(16, dtype=np.float16) / 4), (y, np.arange(8, dtype=np.int32) - 3)], [x]


def test_debug_print_scalars_arrays_tensors_and_python_forms(capsys):
    ti, feed, outs = _values_kernel()
    got = _run(ti, feed, outs)
    x = np.arange(16, dtype=np.float16) / 4
    y = (np.arange(8, dtype=np.int32) - 3).reshape(2, 4)
    assert got == [f"{x}\n", f"{y}\n", f"{x[2:6]}\n", f"{y[1]}\n", "4\n", "9.5\n", "[1, 2, 3]\n",
                   "a printed string\n", "('text4', 'text')\n", f"(11, [2, 4, 6], {int(y.sum())})\n",
                   "(dtype('float16'), (4,))\n"]
    assert capsys.readouterr().out == "".join(got)


def test_debug_print_survives_the_pto_as_round_trip():
    ti, feed, outs = _values_kernel()
    got = _run(ti, feed, outs)
    text = ti.program.to_asm()
    assert "pto.debug_eval" in text
    prog = asm.parse(text, allow_debug_eval=True)
    assert prog.to_asm() == text
    exe = prog.compile()
    exe.run({t.name: a for t, a in feed})
    assert [t for _, t in exe.machine.printed] == got


def test_debug_print_in_a_loop_prints_each_iteration():
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    acc = ti.Scalar("int32", init_value=0)
    v = ti.Scalar("int32")
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    with ti.for_range(0, 3) as i:
        v.set_as(ub[i])
        acc.set_as(acc + v)
        ti.tikdb.debug_print('"i=" + str(i) + " acc=" + str(acc)')
    ti.data_move(x, ub, 0, 1, 1, 0, 0)
    got = _run(ti, [(x, np.array([5, 6, 7, 0, 0, 0, 0, 0], np.int32))], [x])
    assert got == ["i=0 acc=5\n", "i=1 acc=11\n", "i=2 acc=18\n"]


class _Kernel:
    """Attribute chains (self.x) resolve in the caller's frame when debug_print is called."""

    def __init__(self):
        self.ti = tik.Tik()
        self.x = self.ti.Tensor("int32", (2, 8), name="x", scope=tik.scope_gm)
        self.tag = "core"

    def build(self):
        ti = self.ti
        with ti.for_range(0, 2, block_num=2) as b:
            self.x_ub = ti.Tensor("int32", (8,), name="x_ub", scope=tik.scope_ubuf)
            ti.data_move(self.x_ub, self.x[b, 0], 0, 1, 1, 0, 0)
            ti.tikdb.debug_print("self.tag, b, int(self.x_ub.sum())")
            ti.data_move(self.x[b, 0], self.x_ub, 0, 1, 1, 0, 0)


def test_debug_print_multi_core_prints_in_core_order():
    k = _Kernel()
    k.build()
    got = _run(k.ti, [(k.x, np.arange(16, dtype=np.int32).reshape(2, 8))], [k.x])
    assert got == ["('core', 0, 28)\n", "('core', 1, 92)\n"]
    assert [c for c, _ in k.ti.tikdb.executable.machine.printed] == [0, 1]


def test_debug_print_honours_is_printf_to_screen(capsys):
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    ti.set_printf_params(is_printf_to_screen=False)
    s = ti.Scalar("int32", init_value=2)
    ti.tikdb.debug_print("s")
    assert s is not None
    assert _run(ti, [(x, np.zeros(8, np.int32))], [x]) == ["2\n"]
    assert capsys.readouterr().out == ""


def test_debug_print_in_code_that_never_runs_is_dropped():
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    with ti.if_scope(1 > 2):
        ti.tikdb.debug_print("not_defined_anywhere")
    assert _run(ti, [(x, np.zeros(8, np.int32))], [x]) == []


@pytest.mark.parametrize("expr, match", [
    ("s +", r"expr 's \+' is not a Python expression"),
    ("nope + 1", r"name 'nope' of expr 'nope \+ 1' is not defined where debug_print is called"),
    ("cfg", r"cfg in expr 'cfg' is a dict: debug_print can print Scalars"),
    ("", r"expr must be a non-empty str"),
])
def test_debug_print_bad_expr_is_an_error_at_the_users_line(expr, match):
    ti = tik.Tik()
    s = ti.Scalar("int32", init_value=0)
    cfg = {"a": 1}
    with raises_tik(IllegalOperand, match=match) as info:
        ti.tikdb.debug_print(expr)
    assert s is not None and cfg
    assert "test_debug_print.py" in str(info.value)


def test_debug_print_run_time_exception_names_the_line():
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    s = ti.Scalar("int32", init_value=0)
    ti.tikdb.debug_print("10 // s")
    assert s is not None
    line = "test_debug_print.py:"
    ti.BuildCCE(kernel_name="dbg", inputs=[x], outputs=[x])
    with raises_tik(IllegalOperand, match=r"evaluating '10 // s' raised ZeroDivisionError") as info:
        ti.tikdb.start_debug({"x": np.zeros(8, np.int32)}, interactive=False)
    assert line in str(info.value)


def test_debug_print_of_a_packed_tensor_is_unsupported():
    ti = tik.Tik()
    t = ti.Tensor("int4", (16,), name="t", scope=tik.scope_ubuf) 
    with raises_tik(UnsupportedOp, match=r"debug_print of int4 tensor t"):
        ti.tikdb.debug_print("t")
    assert t is not None


def test_a_name_a_comprehension_rebinds_is_the_callers_outside_it():
    """Python scoping: ``s, [s * 2 for s in [1, 2]]`` reads the caller's ``s`` outside the comprehension (and
    the first iterable is the caller's too); the name was left unbound and the run failed with a NameError."""
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    s = ti.Scalar("int32", init_value=5)
    arr = ti.ScalarArray("int32", 2, init_value=[1, 2])
    ti.tikdb.debug_print("s, [s * 2 for s in [1, 2]]")
    ti.tikdb.debug_print("[arr for arr in arr]")
    ti.tikdb.debug_print("{k: v for k, v in [(s, arr)]}")
    assert s is not None and arr is not None
    assert _run(ti, [(x, np.zeros(8, np.int32))], [x]) == ["(5, [2, 4])\n", "[1, 2]\n", "{5: [1, 2]}\n"]


def test_debug_print_resolves_names_when_called_not_when_run():
    """Named choice DEBUG_PRINT_RESOLVES_AT_TRACE (tik_core.md "tikdb.debug_print"): rebinding a name after
    the call does not change what that call prints (TIK's debugger would print the new object)."""
    class Holder:
        pass

    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    a = ti.Tensor("int32", (8,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("int32", (8,), name="b", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, 1, 0, 0)
    ti.vec_dup(8, b, 5, 1, 8)
    h = Holder()
    h.buf, s = a, ti.Scalar("int32", init_value=2)
    ti.tikdb.debug_print("h.buf, s")
    h.buf, s = b, ti.Scalar("int32", init_value=9)
    ti.tikdb.debug_print("h.buf, s")
    assert s is not None                                  # named only in the expression
    ti.data_move(x, b, 0, 1, 1, 0, 0)
    got = _run(ti, [(x, np.arange(8, dtype=np.int32) + 1)], [x])
    assert got == [f"{(np.arange(8, dtype=np.int32) + 1, 2)}\n", f"{(np.full(8, 5, np.int32), 9)}\n"]
