"""Bad input to the PTO API, the program builder and the PTO-AS parser: a `pto_core.errors` class with
the user's location (``file:line`` of the call, or ``line:column`` of the text) and a fix -- never a bare
Python exception from inside an op, and never a silently different kernel. (Found by an argument fuzzer and a
PTO-AS mutation fuzzer; each test is one of their findings.)"""
import re

import numpy as np
import pytest

from pto_core import Machine, asm, pto
from pto_core.errors import AsmParseError, IllegalOperand, Provenance, PtoError, UninitializedRead
from pto_core.program import GmArg, program
from kernel_helpers import line_of

HERE = __file__


def _line_of(text: str) -> int:
    return line_of(HERE, text)


def _machine():
    m = Machine("A2A3")
    g = m.gm_tensor(np.arange(256, dtype=np.float16), name="g")
    return m, g, m.ptr("ub", "f16", 0), m.ptr("l0c", "f32", 0)


def test_eager_ops_reject_operands_of_the_wrong_kind_at_the_call():
    """None / str / list operands reached the op's execute function: AttributeError, TypeError."""
    m, g, ub, l0c = _machine()
    bad_calls = [
        (lambda: pto.mte_gm_ub(None, ub, 0, 64), "operand src: expects a pointer into gm, got NoneType"),
        (lambda: pto.mte_gm_ub(g, "ub", 0, 64), "operand dst: expects a pointer into ub, got str"),
        (lambda: pto.mte_gm_ub(g, ub, 0, "64"), "operand len_burst: expects an integer, got str"),
        (lambda: pto.mte_gm_ub(g, ub, [0], 64), "operand l2_cache_ctl: expects an integer, got list"),
        (lambda: pto.mad(ub, ub, l0c, None, 16, 16), "operand m: expects an integer, got NoneType"),
        (lambda: pto.ub.vadds(ub, ub, "2", 1), "operand scalar: expects a number, got str"),
        (lambda: pto.ub.vadd(ub, ub, ub, 1, mask=("x", 0)), "operand mask: expects an integer, got 'x'"),
        (lambda: pto.ub.vadd(ub, ub, ub, 1, mask=([1], 0)), "parameter %m0 must be a number"),
    ]
    for call, message in bad_calls:
        with pytest.raises(IllegalOperand, match=message) as e:
            call()
        assert e.value.where is not None and e.value.where.file == HERE and e.value.hint, e.value


def test_clause_errors_carry_the_call_site_and_a_fix():
    m, g, ub, l0c = _machine()
    with pytest.raises(IllegalOperand, match=r"nburst: takes 3\.\.3 parameters") as e:
        pto.mte_gm_ub(g, ub, 0, 64, nburst=(1, 2))
    assert (e.value.where.file, e.value.where.line) == (HERE, _line_of("nburst=(1, 2))"))
    assert "nburst=(%count, %src_stride, %dst_stride)" in e.value.hint


def test_recorded_ops_reject_constants_of_the_wrong_kind():
    """A builder kept a None length and the compiled kernel failed inside the op."""
    with program("k") as k:
        x = k.gm_arg("x", "f16", (64,))
        with pytest.raises(IllegalOperand, match="len_burst: expects an integer, got NoneType"):
            pto.mte_gm_ub(x, k.ptr("ub", "f16", 0), 0, None)


def test_registers_and_arguments_of_another_builder_are_rejected():
    """They compiled into a kernel that read a name it never defined (NameError)."""
    with program("a") as ka:
        r = ka.reg("s32", 5, name="r")
        s = ka.scalar_arg("s", "s32")
    with program("b") as kb:
        mine = kb.reg("s32", 0, name="mine")
        for other in (r, s):
            with pytest.raises(IllegalOperand, match="belongs to another kernel \\('a'\\), not to 'b'") as e:
                mine.set(other + 1)
            assert e.value.hint


def test_a_register_never_assigned_is_an_uninitialized_read():
    with program("u") as k:
        y = k.gm_arg("y", "s32", (8,), io="out")
        r = k.reg("s32", name="never")
        k.store(y, 0, r)
    with pytest.raises(UninitializedRead, match="register %never is read before any assignment"):
        k.program.run({})


def test_loop_steps_are_positive_after_conversion_to_the_loop_type():
    """step 2**32 in an s32 loop is 0 after the conversion: range() raised ValueError when the kernel ran."""
    with program("s") as k:
        with pytest.raises(IllegalOperand, match="must be positive \\(it is 0 as i32\\)"):
            k.for_(0, 4, 2 ** 32, dtype="s32")


def test_gm_argument_shapes_and_init_values_are_checked():
    for shape in ([2 ** 70], ["a"], [1.5], [-1], [], [float("inf")]):
        with pytest.raises(IllegalOperand, match="dimensions must be ints >= 1") as e:
            GmArg("x", "f16", shape)
        assert e.value.hint
    with pytest.raises(IllegalOperand, match="init value 'a' is not a number"):
        GmArg("x", "f16", (2,), io="out", init=[1.0, "a"])
    assert GmArg("x", "s32", [2, np.int64(3)]).shape == (2, 3)


KERNEL = """module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%x: !pto.ptr<f16, gm> {{{attrs}}}) {{
    %c0 = arith.constant {c0} : {t0}
    %p = pto.castptr %c0 : {t0} -> !pto.ptr<f16, ub>
    {op}
    return
  }}
}}
"""


def _parse(attrs="pto.shape = [16]", c0="0", t0="i64", op="pto.mte_gm_ub %x, %p, %c0, %c0 nburst(%c0, %c0, %c0) : "
           "!pto.ptr<f16, gm>, !pto.ptr<f16, ub>, i64, i64, i64, i64, i64"):
    return asm.parse(KERNEL.format(attrs=attrs, c0=c0, t0=t0, op=op), source_name="k.pto")


@pytest.mark.parametrize("kw, message, line", [
    (dict(attrs="pto.shape = [99999999999999999999]"), "dimensions must be ints >= 1", 2),      # was OverflowError
    (dict(attrs="pto.shape = [1e400]"), "dimensions must be ints >= 1", 2),                    # was OverflowError
    (dict(attrs="pto.shape = [-4]"), "dimensions must be ints >= 1", 2),                       # was accepted
    (dict(attrs="pto.shpe = [16]"), "unknown attribute 'pto.shpe'", 2),                        # was ignored
    (dict(c0="4294967296", t0="i32"), "constant 4294967296 does not fit i32", 3),              # wrapped to 0
    (dict(op="pto.set_flag[<PIPE_MTE2>, , <PIPE_MTE3>, <EVENT_ID0>]"), "expected an operand", 5),  # ValueError
    (dict(op="pto.mte_gm_bu %x, %p, %c0, %c0"), "unknown operation 'pto.mte_gm_bu'", 5),
])
def test_malformed_pto_as_is_a_parse_error_with_a_fix(kw, message, line):
    with pytest.raises(AsmParseError, match=message) as e:
        _parse(**kw)
    assert e.value.source_name == "k.pto" and e.value.line == line and e.value.hint, str(e.value)


def test_parse_errors_suggest_the_op_and_keep_the_verifiers_fix():
    with pytest.raises(AsmParseError) as e:
        _parse(op="pto.mte_gm_bu %x, %p, %c0, %c0")
    assert "did you mean pto.mte_gm_ub" in e.value.hint
    with pytest.raises(AsmParseError, match="nburst") as e:                   # the op's own hint survives
        _parse(op="pto.mte_gm_ub %x, %p, %c0, %c0 : !pto.ptr<f16, gm>, !pto.ptr<f16, ub>, i64, i64")
    assert e.value.hint


def test_scf_for_with_a_constant_step_of_zero_is_refused():
    """range() raised 'arg 3 must not be zero' when the parsed kernel ran."""
    with pytest.raises(AsmParseError, match="scf.for step %c0 is 0; loops count up"):
        _parse(op="scf.for %i = %c0 to %c0 step %c0 : i64 {\n    }")


def test_an_error_without_an_explicit_fix_states_what_its_limit_asks_for():
    assert IllegalOperand("x", limit="[1, 255]").hint == "pass a value in [1, 255]"
    assert IllegalOperand("x", limit="one of a, b").hint == "use one of a, b"
    assert IllegalOperand("x", limit="multiple of 32").hint == "use a multiple of 32"
    assert IllegalOperand("x", limit="> 0").hint == "pass a value > 0"
    assert IllegalOperand("x", limit="ub").hint is None and IllegalOperand("x", limit=7).hint is None
    assert IllegalOperand("x", limit="[1, 2]", hint="mine").hint == "mine"
    assert "Fix: pass a value in [1, 255]" in str(PtoError("bad", limit="[1, 255]"))


def test_a_legacy_fixpipe_mode_name_in_pre_quant_gets_the_pto_mode_as_its_fix():
    """A migrator writes TIK fixpipe's mode name (``int322fp16``, ``fp322fp16``) as the FIXPIPE pre_quant mode:
    the Fix names the PTO mode to write (deqf16_scalar / deqf16_vec, f32_f16), not the list of 40 modes."""
    m = Machine("A2A3")
    l0c = m.ptr("l0c", "s32", 0)
    gm = m.gm_alloc((16, 16), "f16", name="out")
    with pytest.raises(IllegalOperand, match="is not one of") as e:
        pto.mte_l0c_gm(l0c, gm, 16, 16, 16, 16, 0, 0, pre_quant=(0.3, {"mode": "int322fp16"}))
    assert "Fix: TIK fixpipe's 'int322fp16' is pre_quant=(np.float16(scale), {'mode': 'deqf16_scalar'})" in str(e.value)
    call_line = _line_of('{"mode": "int322fp16"}))')
    assert "deqf16_vec" in str(e.value) and f"test_user_errors.py:{call_line}" in str(e.value)
    with pytest.raises(IllegalOperand, match="'mode': 'f32_f16'"):
        pto.mte_l0c_gm(m.ptr("l0c", "f32", 0), gm, 16, 16, 16, 16, 0, 0, pre_quant=(0.0, {"mode": "fp322fp16"}))
    with pytest.raises(IllegalOperand, match="Fix: use one of no_convert"):      # other words: the list
        pto.mte_l0c_gm(l0c, gm, 16, 16, 16, 16, 0, 0, pre_quant=(0.3, {"mode": "deq"}))


def test_warn_at_shows_a_message_once_per_file_and_line_not_once_per_line_number():
    """warn_at keeps one warnings registry per user file, as Python keeps one per module: the same message at
    the same line number of two files is shown for each file, and once per file:line (was one shared registry,
    keyed by text/category/line only: the second file's warning was hidden under the "default" filter)."""
    import warnings
    from pto_core.errors import Provenance, warn_at

    class _Probe(UserWarning):
        pass

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        for f in ("/u/k_a.py", "/u/k_b.py", "/u/k_a.py", "/u/k_b.py"):
            warn_at("one text", _Probe, Provenance(f, 11, "tik.data_move"))
    assert [(r.filename, r.lineno) for r in rec] == [("/u/k_a.py", 11), ("/u/k_b.py", 11)]


def test_builder_calls_name_the_users_line_and_a_fix():
    """k.load / k.store / k.assign / k.ptr / k.gm_arg / k.if_ / k.for_ ... refused bad arguments with no
    file:line (only the `pto.<op>` calls and pointer arithmetic attached the user's line)."""
    calls = [
        (lambda k: k.assign(3, 1), "k.assign"),
        (lambda k: k.assign(k.reg("s32"), k.ptr("ub", "f16", 0)), "k.assign"),
        (lambda k: k.load(5), "k.load"),
        (lambda k: k.load(k.ptr("ub", "f16", 0), 1.5), "k.load"),
        (lambda k: k.load(k.ptr("ub", "f16", 0), 2 ** 64), "k.load"),
        (lambda k: k.store(5, 0, 1), "k.store"),
        (lambda k: k.store(k.ptr("ub", "f16", 0), 0, "x"), "k.store"),
        (lambda k: k.ptr("ub", "f16", 1.5), "k.ptr"),
        (lambda k: k.ptr("xx", "f16", 0), "k.ptr"),
        (lambda k: k.reg("f99"), "k.reg"),
        (lambda k: k.read_spr("NOPE"), "k.read_spr"),
        (lambda k: k.gm_arg("1x", "f16", (4,)), "k.gm_arg"),
        (lambda k: k.scalar_arg("s", "f99"), "k.scalar_arg"),
        (lambda k: k.break_(), "k.break_"),
        (lambda k: k.elif_(True), "k.elif_"),
        (lambda k: k.if_(k.ptr("ub", "f16", 0)), "k.if_"),
        (lambda k: k.for_(1, 4, block_num=4), "k.for_"),
    ]
    for call, name in calls:
        with pytest.raises(PtoError) as ei:
            with program("k", target="A2A3") as k:
                call(k)
        e = ei.value
        assert e.where is not None and (e.where.file, e.where.line) == (HERE, call.__code__.co_firstlineno), \
            (name, str(e))
        assert e.where.call == name and "Fix:" in str(e), str(e)
    # `where=` and a `k.at` block still decide the location
    site = Provenance("kernel.py", 7, "tik.data_move")
    with pytest.raises(PtoError) as ei:
        with program("k", target="A2A3") as k:
            with k.at(site):
                k.load(5)
    assert ei.value.where is site
    # a block left open (not through `with`) is refused at the end of the program, at the user's line
    with pytest.raises(PtoError, match="still open") as ei:
        with program("k", target="A2A3") as k:
            k.if_(True).__enter__()
    assert ei.value.where is not None and ei.value.where.file == HERE


def _offset_kernel(dtype, offset):
    """Copy x (64 f32) through UB and back out from ``ub + offset(s)`` (``s`` a scalar argument of ``dtype``)."""
    with program("k", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (64,))
        y = k.gm_arg("y", "f32", (64,), io="out")
        s = k.scalar_arg("s", dtype)
        ub = k.ptr("ub", "f32", 0)
        pto.mte_gm_ub(x, ub, 0, 256, nburst=(1, 256, 256))
        pto.set_flag("MTE2", "MTE3", 0)
        pto.wait_flag("MTE2", "MTE3", 0)
        pto.mte_ub_gm(ub + offset(s), y, 256, nburst=(1, 256, 256))      # OFFSET-LINE
    return k.program


def test_a_run_time_pointer_offset_past_int64_is_refused_not_wrapped():
    """An int offset outside int64 is refused when written (fa40a71); an offset expression whose exact value
    leaves int64 when the kernel runs was wrapped: ub + s * 4 with s = 2**62 read ub[0:64] silently. It is
    refused at the op's line with the same message; values inside int64 (negative ones too) are unchanged."""
    x = np.arange(64, dtype=np.float32)
    bad = [("s64", lambda s: s * 4, 2 ** 62, 2 ** 64), ("s64", lambda s: s - 1, -2 ** 63, -2 ** 63 - 1),
           ("s64", lambda s: s * 4, -2 ** 61 - 1, -2 ** 63 - 4), ("u64", lambda s: s, 2 ** 63, 2 ** 63)]
    for dt, offset, value, exact in bad:
        with pytest.raises(IllegalOperand, match="does not fit a 64-bit index") as ei:
            _offset_kernel(dt, offset).run({"x": x, "s": value})
        e = ei.value
        assert e.value == exact and e.hint and "at run time" in str(e), str(e)
        assert (e.where.file, e.where.line) == (HERE, _line_of("# OFFSET-LINE")), str(e)
    for dt, offset, value in [("s64", lambda s: s * 4, 0), ("u64", lambda s: s, 0), ("s64", lambda s: s - 1, 1),
                              ("s64", lambda s: s + 2 ** 62 - 2 ** 62, 0)]:
        assert (_offset_kernel(dt, offset).run({"x": x, "s": value})["y"] == x).all()


def test_an_explicit_s64_cast_of_a_u64_offset_wraps_as_c_does():
    """cast(u, "s64") of a u64 value >= 2**63 is C's conversion: 2**64 - 1 is -1, an offset inside int64. The
    run-time offset check looked through this explicit cast and refused it as the u64 value 2**64 - 1 (while
    cast(u, "s64") + 0 ran); a u64 value converted to the offset itself is still refused."""
    from pto_core.program import cast
    x = np.arange(64, dtype=np.float32)
    feed = {"x": x, "s": 2 ** 64 - 1}
    with program("k", target="A2A3") as k:
        xa = k.gm_arg("x", "f32", (64,))
        y = k.gm_arg("y", "f32", (1,), io="out")
        s = k.scalar_arg("s", "u64")
        k.store(y, 0, k.load(xa + 8, cast(s, "s64")))
    assert k.program.run(feed)["y"].tolist() == [7.0]
    with pytest.raises(IllegalOperand, match="does not fit a 64-bit index"):
        _offset_kernel("u64", lambda u: u).run({"x": x, "s": 2 ** 64 - 1})


def test_listing_statements_that_are_no_op_name_their_python_spelling():
    """h_user453: a tik-migrate listing prints `%mx = pto.load_scalar %3[%c0]` for `mx.set_as(red[0])`;
    `pto.load_scalar(...)` in Python said only "unknown op ... Fix: see the API reference". The Fix now gives the
    Python spelling of each such statement, and the closest op names for a misspelt op."""
    spelled = {"load_scalar": "k.load(ptr, i)", "store_scalar": "k.store(ptr, i, value)",
               "castptr": "k.ptr(space, dtype, addr)", "addptr": "p + n", "get_block_idx": "k.block_idx",
               "get_block_num": "k.block_num"}
    for name, python in spelled.items():
        with pytest.raises(AttributeError, match=f"unknown op 'pto.{name}'") as e:
            getattr(pto, name)
        assert python in str(e.value) and "see the API reference" not in str(e.value), str(e.value)
    with pytest.raises(AttributeError, match=r"did you mean pto\.mte_gm_ub"):
        pto.mte_gm_bu
    with pytest.raises(AttributeError, match=r"did you mean pto\.ub\.vadd\b"):
        pto.ub.vaddd
    with pytest.raises(AttributeError, match="see the API reference in migration_guide/pto_api.md"):
        pto.frobnicate


def test_a_clause_given_as_a_list_is_the_tuple():
    """h_user453: TIK writes a bit mask as the list [mask_h, mask_l]; `mask=[hi, lo]` was refused with
    "parameter %m0 must be a number ... got list" and a Fix asking for four words. A list is read as the tuple."""
    outs = []
    for mask in ((0x5, 0xF0F0), [0x5, 0xF0F0]):
        m = Machine("A2A3")
        a = m.gm_tensor(np.arange(128, dtype=np.float16), name="a")
        ub = m.ptr("ub", "f16", 0)
        pto.mte_gm_ub(a, ub, 0, 256, nburst=(1, 256, 256))
        pto.pipe_barrier("ALL")
        pto.ub.vector_dup(ub + 128, 0.0, 1, mask=128)
        pto.ub.vadd(ub + 128, ub, ub, 1, mask=mask)
        outs.append(m.read(ub + 128, (128,)).tobytes())
    assert outs[0] == outs[1] and outs[0] != np.zeros(128, np.float16).tobytes()
    texts = []
    for mask in ((0x5, 0xF0F0), [0x5, 0xF0F0]):
        with program("masked", target="A2A3") as k:
            ub = k.ptr("ub", "f16", 0)
            pto.ub.vadd(ub, ub, ub, 1, mask=mask)
        texts.append(k.program.to_asm())
    assert texts[0] == texts[1]
    with pytest.raises(IllegalOperand, match="parameter %m0 must be a number"):      # an inner list stays refused
        pto.ub.vadd(m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 0), 1, mask=[[1], 0])


def test_tik_round_mode_names_given_to_vconv_get_the_letter():
    """h_user453: `pto.ub.vconv(..., round="round")` (TIK's round_mode name) said "not one of r, a, f, c, z, o";
    the Fix now names the letter (or, for 'none' / '', leaving the clause out)."""
    from pto_core.ops.vector_conv import TIK_ROUND_MODE_LETTERS
    m = Machine("A2A3")
    dst, src = m.ptr("ub", "f16", 0), m.ptr("ub", "f32", 512)
    for name, letter in TIK_ROUND_MODE_LETTERS.items():
        with pytest.raises(IllegalOperand, match="is not one of r, a, f, c, z, o") as e:
            pto.ub.vconv(dst, src, 1, round=name, mask=64)
        want = f'round="{letter}"' if letter else "leave round= out"
        assert f"TIK's round_mode {name!r} is" in str(e.value) and want in str(e.value), str(e.value)


def test_tik_api_names_written_as_ops_name_the_pto_op():
    """h_user453: a migrator writes TIK's name after `pto.`: `pto.ub.vec_add` was offered `pto.ub.vcadd` (a
    reduction) by the closest-name match, `pto.data_move` / `pto.fixpipe` / `pto.vadd` nothing. The Fix now names
    the PTO op (the vec_<op> family by rule, the others from registry.TIK_API_OPS)."""
    from pto_core.ops import registry
    cases = {"ub.vec_add": "TIK's vec_add is pto.ub.vadd", "vec_add": "TIK's vec_add is pto.ub.vadd",
             "ub.vec_reduce_max": "TIK's vec_reduce_max is pto.ub.reduce_max",
             "ub.vec_dup": "TIK's vec_dup is pto.ub.vector_dup", "data_move": "pto.mte_gm_ub, pto.mte_ub_gm",
             "fixpipe": "TIK's fixpipe is pto.mte_l0c_gm for a GM dst; a UB dst is pto.mte_l0c_ub on A5, elsewhere "
                        "pto.mte_l0c_l1 into L1 then pto.mte_l1_ub",
             "ub.data_move": "pto.mte_ub_l1, pto.mte_l1_gm, pto.mte_ub_ub in 32-byte blocks", "mmad": "pto.mad (is_bias 0) or pto.mad_acc",
             "load3dv2": "pto.img2col", "vadd": "did you mean pto.ub.vadd? (the vector ops are under pto.ub)"}
    for name, fix in cases.items():
        obj = pto
        with pytest.raises(AttributeError) as e:
            for part in name.split("."):
                obj = getattr(obj, part)
        assert fix in str(e.value), str(e.value)
    for text in registry.TIK_API_OPS.values():           # every op the table names exists
        for op in re.findall(r"pto\.([\w.]+\w)", text):
            assert op in registry.OPS, op


def test_tik_names_the_closest_match_got_wrong_name_their_pto_op_or_say_there_is_none():
    """review457: the closest-name match behind an unknown op name offered another op for TIK names:
    pto.ub.vec_trans -> pto.ub.v4dtrans (the facade lowers vec_trans to pto.ub.vtranspose), pto.ub.vrpsort16 ->
    pto.ub.vmrgsort / vrsqrt (vbitsort), pto.ub.vbi -> pto.ub.vci, pto.ub.vcbd -> pto.ub.vbcb, pto.ub.vpadding ->
    pto.ub.vcpadd, pto.ub.scatter_vconv -> pto.ub.scatter_vln (instructions the simulator leaves out), and
    pto.ub.h_reduce_sum -> pto.ub.reduce_min (a composite API)."""
    cases = {"ub.vec_trans": "TIK's vec_trans is pto.ub.vtranspose", "ub.vrpsort16": "TIK's vrpsort16 is pto.ub.vbitsort",
             "ub.vmrgch": "TIK's vmrgch is pto.ub.vmergech", "vec_trans_scatter": "is pto.ub.vnchwconv",
             "ub.scatter_vnchwconv": "is pto.ub.vnchwconv",
             "ub.vbi": "TIK's vbi has no PTO op", "ub.vec_bi": "TIK's vec_bi has no PTO op: the simulator leaves its "
                                                                 "instruction vbi out",
             "ub.vcbd": "TIK's vcbd has no PTO op", "ub.vpadding": "TIK's vpadding has no PTO op",
             "ub.scatter_vconv": "TIK's scatter_vconv has no PTO op", "scatter_vmulconv": "has no PTO op",
             "ub.h_reduce_sum": "TIK's h_reduce_sum is a high-level API that becomes several PTO ops"}
    for name, fix in cases.items():
        obj = pto
        with pytest.raises(AttributeError) as e:
            for part in name.split("."):
                obj = getattr(obj, part)
        assert fix in str(e.value) and "did you mean" not in str(e.value), str(e.value)
