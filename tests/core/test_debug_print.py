"""pto.debug_print: C printf formatting of run-time scalar values (against Python's own
%-formatting of the same values), the machine console, record-time checks, PTO-AS round trip."""
import pytest
from hypothesis import given, settings, strategies as st

from pto_core import Machine, pto
from pto_core.asm import parse, print_program
from pto_core.errors import IllegalOperand
from pto_core.ops.debug import format_c
from pto_core.program import program


@settings(max_examples=60, deadline=None)
@given(st.integers(-2 ** 40, 2 ** 40), st.floats(-1e6, 1e6, allow_nan=False), st.integers(0, 9), st.integers(1, 6))
def test_format_matches_c_semantics(i, x, width, prec):
    fmt = f"i=%0{width}d x=%.{prec}f e=%{width}.{prec}e |%-{width}d| %%"
    assert format_c(fmt, (i, x, x, i)) == (
        f"i={i:0{width}d} x={x:.{prec}f} e={x:{width}.{prec}e} |{i:<{width}d}| %")


def test_format_hex_octal_char_and_truncation():
    assert format_c("%x %#X %o %c %d", (255, 255, 8, 65, 3.9)) == "ff 0XFF 10 A 3"
    assert format_c("%x", (-1,)) == "ffffffffffffffff"              # 64-bit two's complement, as C


def test_debug_print_writes_to_the_console(capsys):
    m = Machine("A2A3")
    m.activate()
    pto.debug_print(values=(7, 0.5), fmt="n=%d v=%.3f\n")
    pto.debug_print(fmt="done\n")
    assert m.printed == [(0, "n=7 v=0.500\n"), (0, "done\n")]
    assert capsys.readouterr().out == "n=7 v=0.500\ndone\n"


def test_conversion_count_is_checked_when_recorded():
    m = Machine("A2A3")
    m.activate()
    with pytest.raises(IllegalOperand, match=r"format 'a=%d b=%d' has 2 conversion\(s\) for 1 value\(s\)"):
        pto.debug_print(values=(1,), fmt="a=%d b=%d")
    with pytest.raises(IllegalOperand, match=r"values: takes 0..6 parameters .* got 7"):
        pto.debug_print(values=tuple(range(7)), fmt="%d" * 7)


def test_debug_print_in_a_program_round_trips_through_pto_as(capsys):
    with program("dp", target="A2A3") as k:
        with k.for_(0, 3, name="i") as i:
            pto.debug_print(values=(i,), fmt="it\t%d\n")
    text = print_program(k.program)
    assert 'fmt = "it\\t%d\\n"' in text
    again = parse(text)
    m = Machine("A2A3")
    again.compile().run(machine=m)
    assert [t for _, t in m.printed] == ["it\t0\n", "it\t1\n", "it\t2\n"]
    assert print_program(again) == text


def test_screen_false_keeps_the_text_off_stdout(capsys):
    with program("quiet", target="A2A3") as k:
        pto.debug_print(values=(5,), fmt="q=%d\n", screen=False)
        pto.debug_print(fmt="loud\n")
    text = print_program(k.program)
    assert "screen = false" in text and print_program(parse(text)) == text
    m = Machine("A2A3")
    parse(text).compile().run(machine=m)
    assert [t for _, t in m.printed] == ["q=5\n", "loud\n"]
    assert capsys.readouterr().out == "loud\n"


def test_debug_eval_binds_values_arrays_tensors_and_constants(capsys):
    """pto.debug_eval (TIK tikdb.debug_print): the expression sees scalars, lists, strided tensor views and
    constants under dotted names; it round-trips through PTO-AS."""
    with program("de", target="A2A3") as k:
        t = k.gm_arg("t", "s32", (8,))
        with k.for_(0, 2, name="i") as i:
            pto.debug_eval(values=(i, 1, 2), tensors=(t,), expr="o.n * 10 + i, a, x, tag",
                           bind=repr((("i", "s", 0), ("a", "a", 1, 2), ("x", "t", 0, (2, 2), (4, 2)),
                                      ("tag", "c", "k"), ("o.n", "c", 3))))
    text = print_program(k.program)
    again = parse(text, allow_debug_eval=True)
    assert print_program(again) == text
    m = Machine("A2A3")
    import numpy as np
    again.compile().run({"t": np.arange(8, dtype=np.int32)}, machine=m)
    x = np.array([[0, 2], [4, 6]], np.int32)
    assert [s for _, s in m.printed] == [f"({30 + j}, [1, 2], {x!r}, 'k')\n" for j in range(2)]


def test_debug_eval_checks_its_bind_when_recorded():
    m = Machine("A2A3")
    m.activate()
    with pytest.raises(IllegalOperand, match=r"bind entry \('x', 's', 1\) does not match the 1 value\(s\)"):
        pto.debug_eval(values=(1,), expr="x", bind="(('x', 's', 1),)")
    with pytest.raises(IllegalOperand, match=r"bind must be a tuple literal"):
        pto.debug_eval(expr="x", bind="__import__('os')")
    with pytest.raises(IllegalOperand, match=r"is not a Python expression"):
        pto.debug_eval(expr="x +", bind="()")


@pytest.mark.parametrize("expr, words", [
    ("().__class__.__base__.__subclasses__()", r"attribute '__subclasses__'"),
    ("__import__('os')", r"name '__import__'"),
    ("np.save('/tmp/x', x)", r"attribute 'save'"),
    ("x.tofile('/tmp/x')", r"attribute 'tofile'"),
    ("[g.gi_frame.f_back for g in [(i for i in x)]]", r"attribute 'f_back'"),
    ("'{0.__class__}'.format(x)", r"attribute 'format'"),
    ("(lambda: 1)()", r"Lambda syntax"),
])
def test_debug_eval_refuses_expressions_that_reach_past_the_values(expr, words):
    """A PTO-AS file is data: its debug_eval text may read the bound values, np.<function> and data attributes,
    nothing that reaches the interpreter, the file system or other objects (checked when recorded or parsed
    and again before evaluating)."""
    m = Machine("A2A3")
    m.activate()
    with pytest.raises(IllegalOperand, match=words):
        pto.debug_eval(values=(3,), expr=expr, bind="(('x', 's', 0),)")
    pto.debug_eval(values=(3,), expr="np.sum(np.array([x, x])), x.bit_length(), str(x)", bind="(('x', 's', 0),)",
                   screen=False)
    assert m.printed[-1][1] == "(np.int64(6), 2, '3')\n"


@pytest.mark.parametrize("expr, bind, words", [
    # a comprehension variable named like a bound root is any object: the bound name's attributes are not its own
    ("[t.tofile('/tmp/x') for t in [np.array([1])]]", (("t.tofile", "c", 0),), r"attribute 'tofile'"),
    ("[s.version for s in [b.__globals__['sys'] for b in [a.__class__.__init__]]]",
     (("a.__class__.__init__.x", "c", 0), ("b.__globals__", "c", 0), ("s.version", "c", 0)), r"bind name"),
    ("[b.__globals__ for b in [np.sum]]", (("b.__globals__", "c", 0),), r"bind name 'b.__globals__'"),
    ("x", (("_x", "c", 0),), r"bind name '_x'"),
    ("[np.array for np in [x]]", (("x", "c", 0),), r"attribute 'array'"),
    ("x", (("x.y", "c", 0), ("x.y.z", "c", 0)), r"extends the bound value 'x.y'"),
])
def test_debug_eval_bind_names_cannot_open_other_objects(expr, bind, words):
    """A PTO-AS file chooses its bind names: they name fresh namespaces only (no '__' part, never set on an
    existing object) and do not cover a comprehension variable of the same name."""
    from pto_core.ops import debug
    m = Machine("A2A3")
    m.activate()
    with pytest.raises(IllegalOperand, match=words):
        pto.debug_eval(expr=expr, bind=repr(bind))
    assert not hasattr(debug._Obj.__init__, "x")


def test_debug_eval_keeps_private_and_nested_bound_names():
    m = Machine("A2A3")
    m.activate()
    pto.debug_eval(values=(2,), expr="self._n + self.a.b, [k * 2 for k in [1]]",
                   bind=repr((("self._n", "s", 0), ("self.a.b", "c", 5))), screen=False)
    assert m.printed[-1][1] == "(7, [2])\n"


def test_a_pto_as_file_cannot_bind_names_that_open_the_sandbox():
    """The PTO-AS text is checked when parsed: this file reached the simulator module's globals (sys)."""
    from pto_core.errors import PtoError
    text = ('module attributes {pto.target_arch = "a2a3"} {\n  func.func @esc() {\n'
            '    pto.debug_eval {expr = "[s.version for s in [b.__globals__[\\"sys\\"] for b in [a.__class__.__init__]]]"'
            ', bind = "((\'a.__class__.__init__.x\', \'c\', 0), (\'b.__globals__\', \'c\', 0), (\'s.version\', \'c\', 0))"}\n'
            '    return\n  }\n}\n')
    with pytest.raises(PtoError, match=r"bind name 'a.__class__.__init__.x'"):
        parse(text, allow_debug_eval=True)


def test_pto_as_text_with_debug_eval_parses_only_when_trusted(tmp_path, capsys):
    """DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED: a debug_eval op runs a Python expression, so text holding one is an
    AsmParseError at its line unless the caller trusts it (allow_debug_eval=True, pto-run --allow-debug-eval)."""
    from pto_core.asm import DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED
    from pto_core.cli import pto_run_main
    from pto_core.errors import AsmParseError
    assert DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED
    text = ('module attributes {pto.target_arch = "a2a3"} {\n  func.func @k() {\n'
            '    pto.debug_eval {expr = "1 + 2", bind = "()"}\n    return\n  }\n}\n')
    with pytest.raises(AsmParseError, match=r":3:5: pto.debug_eval evaluates a Python expression .* allow_debug_eval"):
        parse(text)
    m = Machine("A2A3")
    parse(text, allow_debug_eval=True).compile().run(machine=m)
    assert m.printed == [(0, "3\n")]
    f = tmp_path / "k.pto"
    f.write_text(text)
    assert pto_run_main([str(f)]) != 0 and "allow-debug-eval" in capsys.readouterr().err
    assert pto_run_main(["--allow-debug-eval", str(f)]) == 0 and "3" in capsys.readouterr().out


def test_debug_eval_constant_is_fresh_each_evaluation():
    """A list constant the expression sorts in place is the bound literal again on the next iteration, run,
    machine and program (the checked layout is shared per text, `_prepared`)."""
    import numpy as np
    printed = []
    for name in ("c1", "c2"):
        with program(name, target="A2A3") as k:
            k.gm_arg("t", "s32", (8,))
            with k.for_(0, 2, name="i") as i:
                pto.debug_eval(values=(i,), expr="(c[0], c.sort())[0]",
                               bind=repr((("i", "s", 0), ("c", "c", [3, 1, 2]))), screen=False)
        m = Machine("A2A3")
        k.program.compile().run({"t": np.arange(8, dtype=np.int32)}, machine=m)
        printed += [s for _, s in m.printed]
    assert printed == ["3\n"] * 4
