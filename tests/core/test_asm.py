"""PTO-AS text: printing, parsing, the print -> parse -> print fixed point, errors with line:column."""
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core import Ptr, asm, dtype, pto
from pto_core.errors import AsmParseError, IllegalOperand, Provenance
from pto_core.ops import registry
from pto_core.program import OpStmt, program

from program_gen import random_program, same
from program_testops import testops, with_asm_form  # noqa: F401  (testops: fixture)

pytestmark = pytest.mark.usefixtures("testops")


def roundtrip(prog, **kw):
    text = asm.print_program(prog, **kw)
    again = asm.parse(text, source_name="k.pto")
    assert asm.print_program(again, **kw) == text
    return text, again


# ----------------------------------------------------------------------------- golden text

def _accumulate():
    with program("accumulate", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (16,))
        y = k.gm_arg("y", "s32", (16,), io="out")
        n = k.scalar_arg("n", "s32")
        acc = k.reg("s32", 0, name="acc")
        with k.for_(0, 16) as i:
            v = k.load(x, i)
            acc += v
            with k.if_(acc > n):
                acc -= n
            k.store(y, i, acc)
    return k.program


GOLDEN = """\
module attributes {pto.target_arch = "a2a3"} {
  func.func @accumulate(%x: !pto.ptr<i32, gm> {pto.shape = [16]}, %y: !pto.ptr<i32, gm> {pto.io = "out", pto.shape = [16]}, %n: i32) {
    %c0_i32 = arith.constant 0 : i32
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    %acc = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc_1 = %c0_i32) -> (i32) {
      %0 = pto.load_scalar %x[%i] : !pto.ptr<i32, gm> -> i32
      %acc_2 = arith.addi %acc_1, %0 : i32
      %1 = arith.cmpi sgt, %acc_2, %n : i32
      %acc_3 = scf.if %1 -> (i32) {
        %acc_4 = arith.subi %acc_2, %n : i32
        scf.yield %acc_4 : i32
      } else {
        scf.yield %acc_2 : i32
      }
      pto.store_scalar %acc_3, %y[%i] : !pto.ptr<i32, gm>, i32
      scf.yield %acc_3 : i32
    }
    return
  }
}
"""


def test_golden_text_of_a_loop_with_a_loop_carried_register():
    text, again = roundtrip(_accumulate())
    assert text == GOLDEN
    x = np.arange(16, dtype=np.int32)
    assert again.run({"x": x, "n": 20})["y"].tolist() == _accumulate().run({"x": x, "n": 20})["y"].tolist()


def test_ops_print_with_operands_clauses_and_types():
    with program("ops") as k:
        a = k.ptr("l0a", "f16", 0)
        b = k.ptr("l0b", "f16", 0)
        c = k.ptr("l0c", "f32", 0x400)
        pto.t_matmul(a, b, c, 16, 16, 32, acc=True, unit_flag="check_and_set")
        pto.t_sync("CUBE", "FIXP", 0)
        g = k.gm_arg("g", "s32", (4,), io="out")
        r = k.reg("s64", 3, name="r")
        pto.t_demo(g, 4, mode="a", scale=(r, 2, {"kind": "x"}), bias=True, flagc=True, sat=False)
    text, _ = roundtrip(k.program)
    assert ("pto.t_matmul %0, %1, %2, %c16_i64, %c16_i64, %c32_i64 acc unit_flag(check_and_set) : "
            "!pto.ptr<f16, l0a>, !pto.ptr<f16, l0b>, !pto.ptr<f32, l0c>, i64, i64, i64") in text
    assert "%2 = pto.castptr %c1024_i64 : i64 -> !pto.ptr<f32, l0c>" in text
    assert "pto.t_sync[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]" in text
    assert ("pto.t_demo %g, %c4_i64 mode(a) scale(%c3_i64, %c2_i64, kind = x) bias flagc nosat : "
            "!pto.ptr<i32, gm>, i64, i64, i64") in text


def test_clause_values_survive_the_text_and_reach_execute():
    with program("clauses") as k:
        g = k.gm_arg("g", "s32", (5,), io="out")
        s = k.scalar_arg("s", "s32")
        pto.t_demo(g, 1, mode="b", scale=(s, {"kind": "y"}), bias=s + 1, sat="preserve_nan")
        pto.t_demo(g + 1, 1, scale=(1, 2))
        pto.t_demo(g + 2, 1, bias=True, sat=True)
        pto.t_demo(g + 3, 1, flagc=True)
        pto.t_demo(g + 4, 1)
    _, again = roundtrip(k.program)
    want = [2 + 40 + 2000 + 20005 + 3000000, 210, 10000 + 1000000, 100000, 0]
    assert k.program.run({"s": 4})["g"].tolist() == want
    assert again.run({"s": 4})["g"].tolist() == want


@pytest.mark.parametrize("form,text", [("quoted", 'pto.t_bar "PIPE_V"'), ("angle", "pto.t_bar <PIPE_V>"),
                                       ("bracket", "pto.t_bar[<PIPE_V>]"), ("generic", 'pto.t_bar "PIPE_V"')])
def test_asm_form_of_an_op_spec(form, text):
    base = registry.OpSpec("t_bar", "sync", "S", (registry.Operand("pipe", "pipe"),), lambda ctx, pipe: None)
    registry.register(with_asm_form(base, form))
    try:
        with program("f") as k:
            pto.t_bar("V")
        printed, again = roundtrip(k.program)
        assert text in printed and again.body[0].call.operands == ("V",)
    finally:
        del registry.OPS["t_bar"]


def test_locations_carry_provenance_through_the_text():
    with program("loc") as k:
        g = k.gm_arg("g", "s32", (4,), io="out")
        with k.at(Provenance("kernel.py", 12, "tik.vec_dup")):
            pto.t_fill(g, 4, 7)
        with k.for_(0, 2, where=Provenance("kernel.py", 13, "tik.for_range")):
            pass
    text, again = roundtrip(k.program, locations=True)
    assert 'loc("tik.vec_dup"("kernel.py":12:0))' in text and '} loc("tik.for_range"("kernel.py":13:0))' in text
    assert again.body[0].where == Provenance("kernel.py", 12, "tik.vec_dup")
    plain = asm.parse(asm.print_program(k.program), source_name="k.pto")
    op = plain.body[0]
    assert isinstance(op, OpStmt) and op.where.file == "k.pto" and op.where.call == "pto.t_fill"


def test_multicore_kernels_print_block_queries_and_block_num():
    with program("mc") as k:
        y = k.gm_arg("y", "s32", (4,), io="out")
        with k.for_(0, 4, block_num=4, name="core", dtype="s32") as c:
            k.store(y, c, c * 10)
    text, again = roundtrip(k.program)
    assert "attributes {pto.block_num = 4 : i64}" in text and "%0 = pto.get_block_idx" in text
    assert "%core = arith.trunci %0 : i64 to i32" in text
    assert again.block_num == 4 and again.run()["y"].tolist() == [0, 10, 20, 30]
    with program("mcs") as k:
        nb = k.scalar_arg("nb", "s32")
        with k.for_(0, nb, block_num=nb):
            pass
    text, again = roundtrip(k.program)
    assert 'attributes {pto.block_num = "nb"}' in text and again.block_num is again.arg("nb")


def test_break_continue_return_and_pointer_registers_round_trip():
    with program("flow") as k:
        x = k.gm_arg("x", "s32", (8,))
        o = k.gm_arg("o", "s32", (2,), io="out")
        acc = k.reg("s32", 0, name="acc")
        with k.for_(0, 8, dtype="s32") as i:
            v = k.load(x, i)
            with k.if_(v < 0):
                k.break_()
            with k.if_(v == 3):
                k.continue_()
            acc += v
        k.store(o, 0, acc)
        with k.if_(acc > 100):
            k.return_()
        k.store(o, 1, acc * 2)
    text, again = roundtrip(k.program)
    assert "pto.break %acc_1 : i32" in text and "pto.continue %acc_1 : i32" in text and "pto.return" in text
    x = np.array([1, 2, 3, 4, -1, 9, 9, 9], dtype=np.int32)
    assert again.run({"x": x})["o"].tolist() == k.program.run({"x": x})["o"].tolist() == [7, 14]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 31), st.booleans(), st.booleans())
def test_random_programs_print_parse_print_is_a_fixed_point_and_runs_the_same(seed, ops, locations):
    prog, inputs = random_program(seed, ops=ops)
    _, again = roundtrip(prog, locations=locations)
    got, want = again.run(inputs), prog.run(inputs)
    for name in want:
        assert same(got[name], want[name]), (seed, name)


# ----------------------------------------------------------------------------- hand-written text

HANDWRITTEN = """\
// A kernel as PTOAS tools write it: constants mid-body, abbreviated addptr types,
// multi-result loops with %r#i uses, index_cast, a nested module and locations.
module attributes {pto.backend = "vpto", pto.target_arch = "a5"} {
  module attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    func.func @scale_rows(%src: !pto.ptr<f32, gm> {pto.shape = [4, 8]},
                          %dst: !pto.ptr<f32, gm> {pto.io = "out", pto.shape = [4, 8]},
                          %rows: i32) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c64_i64 = arith.constant 64 : i64
      %cst = arith.constant 5.000000e-01 : f32
      %n = arith.index_cast %rows : i32 to index
      %s:2 = scf.for %r = %c0 to %n step %c1 iter_args(%sum = %cst, %cnt = %c0) -> (f32, index) {
        %base = arith.muli %r, %c8 : index
        %row = pto.addptr %src, %base : <f32, gm> -> <f32, gm>
        %out = pto.addptr %dst, %base : <f32, gm> -> <f32, gm>
        %inner:2 = scf.for %j = %c0 to %c8 step %c1 iter_args(%a = %sum, %b = %cnt) -> (f32, index) {
          %v = pto.load_scalar %row[%j] : !pto.ptr<f32, gm> -> f32
          %w = arith.mulf %v, %cst : f32
          pto.store_scalar %w, %out[%j] : !pto.ptr<f32, gm>, f32   // one element
          %a2 = arith.addf %a, %w : f32
          %b2 = arith.addi %b, %c1 : index
          scf.yield %a2, %b2 : f32, index
        } loc("kernel.py":10:4)
        scf.yield %inner#0, %inner#1 : f32, index
      }
      pto.t_sync["PIPE_V", "PIPE_MTE3", "EVENT_ID1"]
      pto.t_sync[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID2>]
      pto.t_sync "PIPE_S", #pto.pipe<PIPE_FIX>, <EVENT_ID7>
      %ub = pto.castptr %c64_i64 : i64 -> !pto.ptr<f32, ub>
      pto.t_fill %ub, %c1_i64, %s#0 : !pto.ptr<f32, ub>, i64, f32
      %c1_i64 = arith.constant 1 : i64
      return
    }
  }
}
"""


def test_parse_handwritten_ptoas_style_text():
    bad = HANDWRITTEN.replace("      %c1_i64 = arith.constant 1 : i64\n", "")
    fixed = bad.replace("      %c0 = arith.constant 0 : index\n",
                        "      %c0 = arith.constant 0 : index\n      %c1_i64 = arith.constant 1 : i64\n")
    prog = asm.parse(fixed, source_name="scale.pto")
    assert prog.target.name == "A5" and [a.name for a in prog.args] == ["src", "dst", "rows"]
    src = np.arange(32, dtype=np.float32).reshape(4, 8)
    exe = prog.compile()
    out = exe.run({"src": src, "rows": 3})["dst"]
    assert out[:3].tolist() == (src[:3] * 0.5).tolist() and np.isnan(out[3]).all()
    total = exe.machine.read(Ptr("ub", dtype("f32"), 64, 0, exe.machine.context(0)), 1)[0]
    assert total == 0.5 + (src[:3] * 0.5).sum()
    syncs = [s.call.operands for s in prog.body if isinstance(s, OpStmt) and s.call.spec.name == "t_sync"]
    assert syncs == [("V", "MTE3", 1), ("V", "MTE3", 2), ("S", "FIX", 7)]
    text = asm.print_program(prog)
    assert asm.print_program(asm.parse(text)) == text
    with pytest.raises(AsmParseError, match="use of undefined value %c1_i64") as ei:
        asm.parse(HANDWRITTEN, source_name="scale.pto")
    assert (ei.value.line, ei.value.column) == (32, 23)


def test_target_override_and_kernel_selection():
    two = GOLDEN.replace("module attributes {pto.target_arch = \"a2a3\"} {\n", "module {\n") \
        .replace("  }\n}\n", "  }\n" + GOLDEN.split("\n", 1)[1].replace("@accumulate", "@other"))
    assert asm.parse(two, kernel="other").name == "other"
    assert asm.parse(two, kernel="accumulate", target="A5").target.name == "A5"
    assert asm.parse(two, kernel="other").target.name == "A2A3"       # default target
    with pytest.raises(AsmParseError, match="2 kernels"):
        asm.parse(two)
    with pytest.raises(AsmParseError, match="no kernel named 'x'"):
        asm.parse(two, kernel="x")


def _kernel(body: str, args: str = "%x: !pto.ptr<i32, gm> {pto.shape = [4]}, %n: i32") -> str:
    return (f"module {{\n  func.func @k({args}) {{\n" + textwrap.indent(textwrap.dedent(body), "    ") +
            "    return\n  }\n}\n")


@pytest.mark.parametrize("body,line,col,message", [
    ("%a = arith.addi %n %n : i32\n", 3, 24, "expected ','"),
    ("%a arith.addi %n, %n : i32\n", 3, 8, "expected '='"),
    ("%a = arith.addi %n, %m : i32\n", 3, 25, "undefined value %m"),
    ("%a = arith.addi %n, %n : i64\n", 3, 21, "type mismatch: %n has type i32, expected i64"),
    ("%a = arith.divui %n, %n : i32\n", 3, 10, "arith.divui needs unsigned integer"),
    ("%a = arith.addf %n, %n : i32\n", 3, 10, "arith.addf needs float"),
    ("%a = arith.cmpi foo, %n, %n : i32\n", 3, 21, "unsupported predicate 'foo'"),
    ("%a = arith.extsi %n : i32 to i16\n", 3, 10, "expected arith.trunci"),
    ("%a = arith.frobnicate %n : i32\n", 3, 10, "unknown operation 'arith.frobnicate'"),
    ("pto.nosuchop %n : i32\n", 3, 5, "unknown operation 'pto.nosuchop'"),
    ("%a = arith.constant 1 : i32\n%a = arith.constant 2 : i32\n", 4, 5, "redefinition of %a"),
    ("%a = arith.constant 1.5 : i32\n", 3, 25, "needs an integer constant"),
    ("%a = arith.constant \"x\n", 3, 25, "unexpected character"),
    ("%a = arith.constant 1 : i33\n", 3, 29, "unknown scalar type 'i33'"),
    ("pto.break\n", 3, 5, "pto.break outside a loop"),
    ("%c = arith.constant 0 : index\n%r = scf.for %i = %c to %c step %c iter_args(%a = %c) -> (index) {\n}\n",
     5, 5, "must end with scf.yield of 1 values"),
    ("%c = arith.constant 0 : index\nscf.for %i = %c to %c step %c {\n  scf.yield %c : index\n}\n", 5, 17,
     "scf.yield takes no values here"),
    ("%t = arith.constant true\n%r = scf.if %t -> (i32) {\n  scf.yield %n : i32\n}\n", 4, 17,
     "needs an else branch"),
    ("pto.t_fill %x, %n : !pto.ptr<i32, gm>, i32\n", 3, 5, "takes 3 operands"),
    ("pto.t_matmul %x, %x, %x, %n, %n, %n : !pto.ptr<i32, gm>, !pto.ptr<i32, gm>, !pto.ptr<i32, gm>, i32, i32, "
     "i32\n", 3, 5, "operand lhs: pointer in gm is not allowed"),
    ("%v = pto.load_scalar %x[%n] : !pto.ptr<i32, gm> -> f32\n", 3, 10, "gives i32"),
    ("pto.store_scalar %n, %x[%n] : !pto.ptr<i32, gm>, i64\n", 3, 22, "type mismatch"),
    ("%p = pto.castptr %x : !pto.ptr<i32, gm> -> !pto.ptr<i32, ub>\n", 3, 10, "cannot change the memory space"),
    ("%p = pto.addptr %x, %x : <i32, gm> -> <i32, gm>\n", 3, 25, "must be an integer offset"),
    ('%r = pto.get_spr "RSVD_CNT"[1] : i64\n', 3, 22, r"no special register word RSVD_CNT\[1\]"),
    ('%r = pto.get_spr "CTRL"[0] : i64\n', 3, 22, "no special register word CTRL"),
    ('%r = pto.get_spr RSVD_CNT[0] : i64\n', 3, 22, "expected a special register name string"),
    ('%r = pto.get_spr "VMS4_SR"[%n] : i64\n', 3, 32, "expected a constant word index"),
    ('%r = pto.get_spr "VMS4_SR"[3] : i32\n', 3, 10, "pto.get_spr returns i64"),
    ("%a = arith.bitcast %n : i32 to f16\n", 3, 10, "arith.bitcast needs equal widths"),
    ("%a = arith.constant 1 : i64\n%p = pto.castptr %a : i64 -> !pto.ptr<f32, ub>\n"
     "%q = pto.castptr %p : !pto.ptr<f32, ub> -> i32\n", 5, 10, "pto.castptr of a pointer gives i64"),
    ("%a = arith.constant 1.5 : f32\n%p = pto.castptr %a : f32 -> !pto.ptr<f32, ub>\n", 4, 22,
     "pto.castptr needs an integer address"),
    ("%a = arith.constant true : i32\n", 3, 25, "true/false constants have type i1"),
    ("%a = arith.constant 0 : !pto.ptr<f32, ub>\n", 3, 25, "arith.constant makes scalars"),
    ("%a = arith.addi %x, %x : !pto.ptr<i32, gm>\n", 3, 10, "does not take pointers"),
    ("%a = arith.sitofp %x : !pto.ptr<i32, gm> to f32\n", 3, 10, "converts scalars"),
    ("%a#1 = arith.constant 1 : i32\n", 3, 5, "result numbers are only for uses"),
    ("%c = arith.constant 1 : index\n%r:2 = scf.for %i = %c to %c step %c iter_args(%a = %c) -> (index) {\n"
     "  scf.yield %a : index\n}\n", 4, 5, "scf.for has 1 results, not 2"),   # it named %i, the loop variable
    ("%t = arith.constant true\n%r, %s = scf.if %t -> (i32) {\n  scf.yield %n : i32\n} else {\n"
     "  scf.yield %n : i32\n}\n", 4, 5, "scf.if has 1 results, 2 names given"),        # it named %t, the condition
    ("%a = arith.addi %n#0, %n : i32\n", 3, 21, "has one result; write %n"),
    ("%c = arith.constant 0 : index\n%r = scf.for %i = %c to %c step %c iter_args(%a = %c) -> (index, index) {\n"
     "}\n", 4, 18, "1 iter_args but 2 result types"),
    ("%c = arith.constant 0 : index\n%r = scf.for %i = %c to %c step %c iter_args(%a = %c) -> (index) {\n"
     "  scf.yield %a, %a : index, index\n}\n", 5, 7, "scf.yield needs 1 values"),
    ('%a = arith.addi %n, %n loc("k.py":3:1) : i32\n', 3, 28, "expected ':' and a type, found a location"),
    ("%v = pto.load_scalar %x[%x] : !pto.ptr<i32, gm> -> i32\n", 3, 29, "must be an integer"),
])
def test_parse_errors_give_line_column_and_what_was_expected(body, line, col, message):
    with pytest.raises(AsmParseError, match=message) as ei:
        asm.parse(_kernel(body), source_name="bad.pto")
    e = ei.value
    assert (e.line, e.column) == (line, col), str(e)
    assert str(e).startswith(f"bad.pto:{line}:{col}: ")
    assert e.hint and " Fix: " in str(e), str(e)                  # every parse error says what to do


@pytest.mark.parametrize("text,message", [
    ("", "expected 'module'"),
    ("module {\n  func.func @k() {\n  }\n}\n", "expected 'return' before the end of the function"),
    ("module {\n  func.func @k(%x: !pto.ptr<f32, gm> {pto.io = \"out\"}) {\n    return\n  }\n}\n",
     "has no shape, so the caller must pass it"),
    ("module {\n  func.func @k(%x: !pto.ptr<f32, ub> {pto.shape = [1]}) {\n    return\n  }\n}\n",
     "arguments must be GM pointers"),
    ('module attributes {pto.target_arch = "z9"} {\n}\n', "unknown target 'z9'"),
    ("module {\n  func.func @k() attributes {pto.block_num = \"q\"} {\n    return\n  }\n}\n",
     "not a scalar argument"),
    ("module {\n  func.func @k() {\n    return\n  }\n}\n}", "expected end of input"),
    ("module {\n  func.func private @k() {\n    return\n  }\n}\n", "defines no kernel"),
    ("module {\n  func.func @k() {\n    return\n  }\n  func.func @k() {\n    return\n  }\n}\n",
     "redefinition of function @k"),
    ("module {\n  func.func @k() {\n    scf.yield\n  }\n}\n", "scf.yield outside a loop or if"),
    ("module {\n  func.func @k(%x: !foo.bar) {\n    return\n  }\n}\n", "unsupported type !foo.bar"),
])
def test_structural_parse_errors(text, message):
    with pytest.raises(AsmParseError, match=message) as ei:
        asm.parse(text)
    assert " Fix: " in str(ei.value), str(ei.value)


def test_integer_literals_with_leading_zeros_are_decimal_everywhere():
    # MLIR's decimal-literal is digit+, so `007` is 7 (Python's int(text, 0) rejects it): constants, attribute
    # values, loc() line numbers and hex literals all go through one reading
    text = ("module {\n  func.func @k(%y: !pto.ptr<i32, gm> {pto.io = \"out\", pto.shape = [004]}) {\n"
            "    %v = arith.constant 007 : i32\n    %w = arith.constant 0x0A : i32\n"
            "    %c = arith.constant 00 : index\n    %c1 = arith.constant 01 : index\n"
            "    %s = arith.addi %v, %w : i32\n"
            "    pto.store_scalar %s, %y[%c] : !pto.ptr<i32, gm>, i32 loc(\"k.py\":012:0)\n"
            "    pto.store_scalar %v, %y[%c1] : !pto.ptr<i32, gm>, i32\n    return\n  }\n}\n")
    prog = asm.parse(text, source_name="z.pto")
    assert prog.gm_args[0].shape == (4,)
    assert any(getattr(s, "where", None) is not None and s.where.line == 12 for s in prog.body)
    out = prog.compile().run({})["y"]
    assert out[0] == 17 and out[1] == 7


@pytest.mark.parametrize("value", ["1.5", "[2]", "true", "0 : i64", "-2 : i64"])
def test_block_num_that_is_not_a_positive_int_is_a_parse_error(value):
    text = f"module {{\n  func.func @k() attributes {{pto.block_num = {value}}} {{\n    return\n  }}\n}}\n"
    with pytest.raises(AsmParseError, match=r"pto.block_num = .*must be an int >= 1") as ei:
        asm.parse(text, source_name="bn.pto")
    assert str(ei.value).startswith("bn.pto:2:")


@pytest.mark.parametrize("value,ok", [("65535 : i64", True), ("65536 : i64", False), ("99999999999 : i64", False)])
def test_a_launch_of_more_than_65535_blocks_is_refused_before_any_core_is_made(value, ok):
    """MAX_LAUNCH_BLOCKS: a huge pto.block_num would allocate one core per block; a launch over TIK's
    block_num range is a ConfigError before the run (the limit itself compiles)."""
    from pto_core.errors import ConfigError
    text = f"module {{\n  func.func @k() attributes {{pto.block_num = {value}}} {{\n    return\n  }}\n}}\n"
    exe = asm.parse(text, source_name="bn.pto").compile()
    if ok:
        return
    with pytest.raises(ConfigError, match=r"launches \d+ blocks; a launch takes at most 65535"):
        exe.run({})


@pytest.mark.parametrize("body,args,line", [
    ("pto.barrier " + "[" * 5000 + "\n", "", 3),
    ("", "%x: !pto.ptr<i32, gm> {pto.shape = " + "[" * 5000 + "4}", 2),
])
def test_brackets_nested_thousands_deep_are_a_parse_error_not_a_recursion_error(body, args, line):
    with pytest.raises(AsmParseError, match="nested too deeply") as ei:
        asm.parse(_kernel(body, args), source_name="deep.pto")
    assert ei.value.line == line


def test_parse_file_reads_from_disk(tmp_path):
    path = tmp_path / "acc.pto"
    path.write_text(GOLDEN)
    prog = asm.parse_file(str(path))
    assert prog.name == "accumulate" and prog.body[1].where.file == str(path)


@pytest.mark.skipif(not all(n in registry.OPS for n in ("set_flag", "set_flag_dyn", "pipe_barrier", "barrier")),
                    reason="needs the sync ops")
def test_real_sync_ops_print_in_their_documented_forms():
    with program("sync") as k:
        with k.for_(0, 2, dtype="s32") as i:
            pto.set_flag("MTE2", "V", 3)
            pto.wait_flag("MTE2", "V", 3)
            pto.set_flag_dyn("V", "MTE3", i)
            pto.wait_flag_dyn("V", "MTE3", i)
            pto.pipe_barrier("ALL")
            pto.barrier("V")
    text, again = roundtrip(k.program)
    for line in ("pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID3>]",
                 "pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID3>]",
                 "pto.set_flag_dyn[<PIPE_V>, <PIPE_MTE3>, %0] : i64", 'pto.pipe_barrier "PIPE_ALL"',
                 "pto.barrier <PIPE_V>"):
        assert line in text
    assert again.run() == {} and k.program.run() == {}


def test_list_of_pointers_operands_print_parse_and_run():
    with program("gather") as k:
        x = k.gm_arg("x", "s32", (8, 4))
        y = k.gm_arg("y", "s32", (3, 4), io="out")
        ub = k.ptr("ub", "s32", 0)
        pto.t_copy(x, ub, 32)
        pto.pipe_barrier("ALL") if "pipe_barrier" in registry.OPS else None
        j = k.scalar_arg("j", "s32")
        pto.t_gather(ub + 64, [ub + 4 * j, ub, ub + 28], 4)
        pto.pipe_barrier("ALL") if "pipe_barrier" in registry.OPS else None
        pto.t_copy(ub + 64, y, 12)
    text, again = roundtrip(k.program)
    assert "pto.t_gather %" in text and ", [%" in text and "], %c4_i64 : " in text
    xs = np.arange(32, dtype=np.int32).reshape(8, 4)
    want = np.stack([xs[5], xs[0], xs[7]])
    assert k.program.run({"x": xs, "j": 5})["y"].tolist() == want.tolist() == again.run({"x": xs, "j": 5})["y"].tolist()
    with program("bad") as k:
        with pytest.raises(IllegalOperand, match="expects a list of pointers"):
            pto.t_gather(k.ptr("ub", "s32", 0), k.ptr("ub", "s32", 0), 4)


def test_special_register_reads_print_parse_and_stay_between_the_ops():
    with program("spr", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (128,))
        c = k.gm_arg("c", "s32", (8,), io="out")
        src, dst = k.ptr("ub", "f32", 0), k.ptr("ub", "f32", 0x400)
        pto.mte_gm_ub(x, src, 0, 512, nburst=(1, 0, 0))
        pto.set_flag("MTE2", "V", 0)
        pto.wait_flag("MTE2", "V", 0)
        for slot, pattern in enumerate((1, 3)):       # two reads of the same register, one op apart
            pto.ub.vreduce(dst, src, 2, pattern=pattern, blk_stride=(1,), rep_stride=(8, 0))
            k.store(c, slot, k.read_spr("RSVD_CNT"))
    text, again = roundtrip(k.program)
    assert text.count('pto.get_spr "RSVD_CNT"[0] : i64') == 2
    feed = {"x": np.arange(128, dtype=np.float32)}
    assert list(again.run(feed)["c"][:2]) == [64, 32] == list(k.program.run(feed)["c"][:2])



def test_shared_subexpressions_print_once_not_once_per_path():
    # an expression built in a Python loop is a DAG reaching its root by 2**40 paths: printing it (and
    # the builder's checks) must walk each node once; the text runs like a numpy reference
    with program("dag", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (16,))
        y = k.gm_arg("y", "s32", (16,), io="out")
        n = k.scalar_arg("n", "s32")
        a = k.reg("s32", 0, name="a")
        with k.for_(0, 16) as i:
            a.set(k.load(x, i))
            e = a
            for _ in range(40):
                e = (e + e) & 0xFFFF
            k.store(y, i, e + n)
    text = asm.print_program(k.program)
    assert text.count("arith.addi") == 41
    xs = np.arange(16, dtype=np.int32) * 7 - 30
    ref = xs.astype(np.int64)
    for _ in range(40):
        ref = (ref + ref) & 0xFFFF
    got = asm.parse(text).compile().run({"x": xs, "n": 5})["y"]
    np.testing.assert_array_equal(got, (ref + 5).astype(np.int32))
    # the interpreter's code generator binds shared nodes to locals: inline code had 2**40 copies
    direct = k.program.run({"x": xs, "n": 5})["y"]
    np.testing.assert_array_equal(direct, (ref + 5).astype(np.int32))


def test_poison_with_a_reason_round_trips_and_errors_where_used():
    """``ub.poison {pto.why = "..."}`` (`Undef.why`): printed and parsed back; the value errors with that
    message only when used, so an unused select arm runs the same from the text as from the program."""
    text = GOLDEN.replace("    %c0_i32 = arith.constant 0 : i32\n",
                          "    %c0_i32 = arith.constant 0 : i32\n"
                          "    %pw = ub.poison {pto.why = \"index 4 outside \\\"arr\\\"\"} : i32\n"
                          "    %true = arith.constant true\n"
                          "    %c0_i32_1 = arith.select %true, %c0_i32, %pw : i32\n", 1) \
        .replace("iter_args(%acc_1 = %c0_i32)", "iter_args(%acc_1 = %c0_i32_1)", 1)
    prog = asm.parse(text)
    again = asm.print_program(prog)
    assert 'ub.poison {pto.why = "index 4 outside \\"arr\\""} : i32' in again
    assert asm.print_program(asm.parse(again)) == again
    with pytest.raises(AsmParseError, match=r"pto.why is the message .*: a \"string\""):
        asm.parse(text.replace('{pto.why = "index', '{pto.why = 4, x = "index', 1))


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_strings_round_trip_and_print_on_one_line(text):
    """Any string (here a run-time check's hint) prints, parses and prints back the same, and its literal holds no
    character an editor counts as a line break: CR, VT, FF, NEL, U+2028 ... printed raw made the editor's line
    numbers differ from the parser's (review414); they print as MLIR byte escapes \\HH."""
    with program("k", target="A2A3") as k:
        n = k.scalar_arg("n", "i64")
        pto.assert_in_range(n, 0, 3, what="n", hint=text + "\r\x0b\x0c\x85\u2028\u2029\x00")
    printed = asm.print_program(k.program)
    assert len(printed.splitlines()) == printed.count("\n")
    again = asm.parse(printed, target="A2A3")
    assert asm.print_program(again) == printed
    with pytest.raises(IllegalOperand) as info:
        again.run({"n": 7})
    assert info.value.hint == text + "\r\x0b\x0c\x85\u2028\u2029\x00"


def test_a_string_byte_escape_is_read_as_mlir_reads_it():
    prog = asm.parse('module {\n  func.func @k(%n: i64) {\n    pto.assert_in_range %n, 0, 3 {what = "n", '
                     'hint = "A\\41 \\C3\\A9 \\"q\\" \\\\41"} : i64\n    return\n  }\n}\n')
    with pytest.raises(IllegalOperand) as info:
        prog.run({"n": 9})
    assert info.value.hint == 'AA \u00e9 "q" \\41'


@pytest.mark.parametrize("odd", ["\udcff", "\ud800", "\udcc3\udca9", "x\udcc3\udca9\ud83d\ude00"])
def test_lone_surrogates_print_as_byte_escapes_and_read_back(odd):
    """A script in a directory whose name is not UTF-8 has a file name with Python's surrogateescape characters
    (U+DC80..U+DCFF); printed raw, they made the text unwritable as UTF-8 (tik-migrate -o failed with a
    UnicodeEncodeError, review416). They print as the bytes they stand for (other lone surrogates as their
    surrogatepass bytes) and read back as the same string."""
    with program("k", target="A2A3") as k:
        n = k.scalar_arg("n", "i64")
        with k.at(Provenance(f"/d{odd}/k.py", 3, "tik.f")):
            pto.assert_in_range(n, 0, 3, what="n", hint=f"h{odd}")
    text, again = roundtrip(k.program, locations=True)
    text.encode("utf-8")
    assert again.body[0].where == Provenance(f"/d{odd}/k.py", 3, "tik.f")
    with pytest.raises(IllegalOperand) as info:
        again.run({"n": 7})
    assert info.value.hint == f"h{odd}"
    if odd == "\udcff":
        assert 'loc("tik.f"("/d\\FF/k.py":3:0))' in text
