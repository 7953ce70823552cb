"""Spellings of real PTOAS text that the parser accepts (checked against the public PTOAS
docs and generated IR; see migration_guide/pto_programs.md §5 "PTOAS spellings"), each with
a passing and a failing case."""
import textwrap

import numpy as np
import pytest

from pto_core import asm, dtype
from pto_core.errors import AsmParseError, ConfigError, IllegalOperand
from pto_core.program import GmArg

# A whole cube kernel written the way PTOAS prints one: host-buffer arguments without
# pto.shape, a module kernel_kind attribute, {pto.kernel}, annotated type lists, discardable
# attributes on pto and arith ops, #pto.pipe<...> literals.
MATMUL = textwrap.dedent("""\
    module attributes {pto.target_arch = "a5", pto.kernel_kind = #pto.kernel_kind<cube>} {
      func.func @mm(%a: !pto.ptr<f16, gm>, %b: !pto.ptr<f16, gm>, %c: !pto.ptr<f32, gm>) attributes {pto.kernel} {
        %c0_i64 = arith.constant 0 : i64
        %c1_i64 = arith.constant 1 : i64
        %c16_i64 = arith.constant 16 : i64
        %c32_i64 = arith.constant 32 : i64
        %c64_i64 = arith.constant 64 : i64
        %c4096_i64 = arith.constant 4096 : i64
        %c32_i32 = arith.constant 32 : i32
        %false = arith.constant false
        %l1a = pto.castptr %c0_i64 : i64 -> !pto.ptr<f16, l1>
        %l1b = pto.castptr %c4096_i64 : i64 -> !pto.ptr<f16, l1>
        %l0a = pto.castptr %c0_i64 : i64 -> !pto.ptr<f16, l0a>
        %l0b = pto.castptr %c0_i64 : i64 -> !pto.ptr<f16, l0b>
        %l0c = pto.castptr %c0_i64 : i64 -> !pto.ptr<f32, l0c>
        pto.mte_gm_l1_frac %a, %l1a, nd2nz, shape(%c16_i64, %c32_i64), src_layout(%c64_i64),
          dst_group(%c1_i64, %c1_i64, %c16_i64, %c0_i64), ctrl(%c0_i64, %false) {pto.tilelib.impl = "hand"}
          : !pto.ptr<f16, gm>, !pto.ptr<f16, l1>, nd2nz, shape i64, i64, src_layout(i64),
            dst_group i64, i64, i64, i64, ctrl i64, i1
        pto.mte_gm_l1_frac %b, %l1b, nd2nz, shape(%c32_i64, %c16_i64), src_layout(%c32_i64),
          dst_group(%c1_i64, %c1_i64, %c32_i64, %c0_i64), ctrl(%c0_i64, %false)
          : !pto.ptr<f16, gm>, !pto.ptr<f16, l1>, i64, i64, i64, i64, i64, i64, i64, i64, i1
        pto.set_flag["PIPE_MTE2", "PIPE_MTE1", "EVENT_ID0"]
        pto.wait_flag["PIPE_MTE2", "PIPE_MTE1", "EVENT_ID0"]
        pto.mte_l1_l0a %l1a, %l0a, %c16_i64, %c32_i64, %c0_i64, %c0_i64
          : !pto.ptr<f16, l1>, !pto.ptr<f16, l0a>, i64, i64, i64, i64
        pto.mte_l1_l0b %l1b, %l0b, %c32_i64, %c16_i64, %c0_i64, %c0_i64 {pto.vmi.fusion.tileop = "textract", transpose = true}
          : !pto.ptr<f16, l1>, !pto.ptr<f16, l0b>, i64, i64, i64, i64
        pto.set_flag["PIPE_MTE1", "PIPE_M", "EVENT_ID0"]
        pto.wait_flag["PIPE_MTE1", "PIPE_M", "EVENT_ID0"]
        %k = arith.extsi %c32_i32 {pto.tilelib.candidate = "t"} : i32 to i64
        pto.mad %l0a, %l0b, %l0c, %c16_i64, %c16_i64, %k disable_gemv {pto.tilelib.candidate = "template_tmatmul"}
          : !pto.ptr<f16, l0a>, !pto.ptr<f16, l0b>, !pto.ptr<f32, l0c>, i64, i64, i64
        pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]
        pto.wait_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]
        pto.mte_l0c_gm %l0c, %c, %c16_i64, %c16_i64, %c16_i64, %c16_i64, %c0_i64, %c0_i64, nz2nd
          : !pto.ptr<f32, l0c>, !pto.ptr<f32, gm>, i64, i64, i64, i64, i64, i64
        pto.barrier #pto.pipe<PIPE_ALL>
        return
      }
    }
    """)


def _ab():
    rng = np.random.default_rng(7)
    return (rng.integers(-4, 5, (16, 32)).astype(np.float16), rng.integers(-4, 5, (32, 16)).astype(np.float16))


def test_a_ptoas_style_matmul_parses_runs_and_matches_numpy():
    prog = asm.parse(MATMUL, source_name="mm.pto")
    assert [(a.name, a.shape, a.io) for a in prog.gm_args] == [("a", None, "inout"), ("b", None, "inout"),
                                                               ("c", None, "inout")]
    a, b = _ab()
    out = prog.run({"a": a, "b": b, "c": np.zeros((16, 16), np.float32)})
    assert np.array_equal(out["c"], a.astype(np.float32) @ b.astype(np.float32))
    assert np.array_equal(out["a"], a)            # host buffers come back as they are at the end
    text = asm.print_program(prog)                # prints canonically; the canonical text round-trips
    assert '%c: !pto.ptr<f32, gm> {pto.io = "inout"}' in text and "pto.tilelib" not in text
    assert asm.print_program(asm.parse(text)) == text


def test_host_buffers_take_their_shape_from_each_run():
    prog = asm.parse(MATMUL, source_name="mm.pto")
    a, b = _ab()
    flat = prog.run({"a": a.reshape(-1), "b": b.reshape(-1), "c": np.zeros(256, np.float32)})["c"]
    assert flat.shape == (256,) and np.array_equal(flat.reshape(16, 16), a.astype(np.float32) @ b.astype(np.float32))
    with pytest.raises(ConfigError, match="missing c"):          # the caller must pass every host buffer
        prog.run({"a": a, "b": b})
    with pytest.raises(ConfigError, match="must have dtype"):
        prog.run({"a": a, "b": b, "c": np.zeros((16, 16), np.float16)})


def test_a_shapeless_argument_must_be_passed_by_the_caller():
    with pytest.raises(IllegalOperand, match="has no shape"):
        GmArg("y", dtype("f32"), None, "out")
    text = MATMUL.replace("%c: !pto.ptr<f32, gm>)", '%c: !pto.ptr<f32, gm> {pto.io = "out"})')
    with pytest.raises(AsmParseError, match="has no shape, so the caller must pass it"):
        asm.parse(text)


def test_annotated_type_lists_count_only_the_types():
    bad = MATMUL.replace("dst_group i64, i64, i64, i64, ctrl i64, i1", "dst_group i64, i64, i64, ctrl i64, i1", 1)
    with pytest.raises(AsmParseError, match="11 SSA operands but 10 types"):
        asm.parse(bad)
    bad = MATMUL.replace("src_layout(i64),\n", "src_layout(i64,\n", 1)
    with pytest.raises(AsmParseError, match="closing the clause's types"):
        asm.parse(bad)
    bad = MATMUL.replace("nd2nz, shape i64", "nd2nz, shape_x i64", 1)   # not a clause of this op
    with pytest.raises(AsmParseError, match="unknown scalar type 'shape_x'"):
        asm.parse(bad)


def test_dma_type_lists_with_loop_and_pad_keywords():
    text = textwrap.dedent("""\
        module attributes {pto.target_arch = "a5"} {
          func.func @pad(%x: !pto.ptr<f16, gm>, %y: !pto.ptr<f16, gm>) {
            %c0_i64 = arith.constant 0 : i64
            %c2_i64 = arith.constant 2 : i64
            %c4_i64 = arith.constant 4 : i64
            %c40_i64 = arith.constant 40 : i64
            %c64_i64 = arith.constant 64 : i64
            %c128_i64 = arith.constant 128 : i64
            %c256_i64 = arith.constant 256 : i64
            %cst = arith.constant 7.0 : f16
            %ub = pto.castptr %c0_i64 : i64 -> !pto.ptr<f16, ub>
            pto.mte_gm_ub %x, %ub, %c0_i64, %c40_i64 nburst(%c2_i64, %c128_i64, %c128_i64)
              loop(%c2_i64, %c256_i64, %c256_i64) pad(%cst)
              : !pto.ptr<f16, gm>, !pto.ptr<f16, ub>, i64, i64, i64, i64, i64, loop i64, i64, i64, pad f16
            pto.set_flag["PIPE_MTE2", "PIPE_MTE3", "EVENT_ID0"]
            pto.wait_flag["PIPE_MTE2", "PIPE_MTE3", "EVENT_ID0"]
            pto.mte_ub_gm %ub, %y, %c64_i64 nburst(%c4_i64, %c128_i64, %c128_i64) l2_cache_ctl(%c0_i64)
              : !pto.ptr<f16, ub>, !pto.ptr<f16, gm>, i64, i64, i64, i64, i64
            return
          }
        }
        """)
    x = np.arange(256, dtype=np.float16)
    y = asm.parse(text).run({"x": x, "y": np.zeros(256, np.float16)})["y"]
    rows = y.reshape(4, 64)                 # 4 rows of 128 bytes: 2 bursts x 2 loop iterations
    assert np.array_equal(rows[:, :20], x.reshape(4, 64)[:, :20])       # 40 bytes of data per row
    assert (rows[:, 20:32] == 7).all()                                   # pad up to the 32-byte boundary
    assert (rows[:, 32:] == 0).all()                                     # not stored: y's own zeros


def test_discardable_attributes_are_ignored_but_unknown_plain_names_are_errors():
    prog = asm.parse(MATMUL.replace('{pto.tilelib.impl = "hand"}',
                                    '{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>, pto.x = 3 : i64}'))
    assert prog.name == "mm"
    with pytest.raises(AsmParseError, match="pto.mte_l1_l0b has no attribute 'fusion'"):
        asm.parse(MATMUL.replace("pto.vmi.fusion.tileop", "fusion", 1))
    with pytest.raises(AsmParseError, match="has no attribute 'candidate'"):
        asm.parse(MATMUL.replace("pto.tilelib.candidate = \"t\"", "candidate = \"t\"", 1))


@pytest.mark.parametrize("name,spelled", [("hif8", "!pto.hif8"), ("e2m1x2", "!pto.f4E2M1x2"),
                                          ("e1m2x2", "!pto.f4E1M2x2")])
def test_ptoas_dialect_element_types(name, spelled):
    assert dtype(spelled) is dtype(name) and dtype(name).pto_name == spelled
    bare = spelled[len("!pto."):]
    assert dtype(bare) is dtype(name)                           # the old bare spelling still parses
    text = textwrap.dedent(f"""\
        module attributes {{pto.target_arch = "a5"}} {{
          func.func @k(%p: !pto.ptr<{bare}, gm> {{pto.shape = [64]}}, %q: !pto.ptr<{spelled}, gm> {{pto.shape = [64]}}) {{
            return
          }}
        }}
        """)
    printed = asm.print_program(asm.parse(text))
    assert printed.count("!pto.ptr<" + spelled + ", gm>") == 2
    with pytest.raises(AsmParseError, match="unknown element type '!pto.f5'"):
        asm.parse(text.replace(spelled, "!pto.f5"))


# ----------------------------------------------------------------------------- multi-function modules

# the MATMUL body moved into a private helper that the pto.entry kernel calls (PTOAS: a module with
# several functions names its kernel with {pto.entry}; func.call of a helper)
def _split(matmul: str) -> str:
    head, body = matmul.split(" attributes {pto.kernel} {\n", 1)
    body = body.rsplit("    return\n  }\n}\n", 1)[0]
    args = "%a: !pto.ptr<f16, gm>, %b: !pto.ptr<f16, gm>, %c: !pto.ptr<f32, gm>"
    return (head.replace("func.func @mm(", "func.func @entry(") + " attributes {pto.entry} {\n"
            "    func.call @body(%a, %b, %c) : (!pto.ptr<f16, gm>, !pto.ptr<f16, gm>, !pto.ptr<f32, gm>) -> ()\n"
            "    return\n  }\n"
            f"  func.func private @body({args}) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{\n"
            + body + "    return\n  }\n}\n")


def test_func_call_of_a_private_helper_is_inlined_into_the_entry_kernel():
    text = _split(MATMUL)
    prog = asm.parse(text, source_name="split.pto")
    assert prog.name == "entry"
    a, b = _ab()
    out = prog.run({"a": a, "b": b, "c": np.zeros((16, 16), np.float32)})
    assert np.array_equal(out["c"], a.astype(np.float32) @ b.astype(np.float32))
    mad = next(s for s in prog.body if getattr(s, "call", None) is not None and s.call.spec.name == "mad")
    helper_line = text[:text.index("func.func private")].count("\n") + 1
    assert mad.where.line > helper_line and mad.where.file == "split.pto"      # the helper's own line
    with pytest.raises(AsmParseError, match="'body' .a helper"):        # a helper is not a kernel
        asm.parse(text, kernel="body")


HELPERS = textwrap.dedent("""\
    module {
      func.func @k(%x: !pto.ptr<i32, gm> {pto.shape = [8]}, %y: !pto.ptr<i32, gm> {pto.io = "out", pto.shape = [2]}) attributes {pto.entry} {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %s0 = func.call @sum(%x, %c0) : (!pto.ptr<i32, gm>, index) -> i32
        %s1 = func.call @sum(%x, %c1) : (!pto.ptr<i32, gm>, index) -> (i32)
        pto.store_scalar %s0, %y[%c0] : !pto.ptr<i32, gm>, i32
        pto.store_scalar %s1, %y[%c1] : !pto.ptr<i32, gm>, i32
        return
      }
      func.func private @sum(%p: !pto.ptr<i32, gm>, %start: index) -> i32 {
        %zero = arith.constant 0 : i32
        %c2 = arith.constant 2 : index
        %c8 = arith.constant 8 : index
        %acc = scf.for %i = %start to %c8 step %c2 iter_args(%a = %zero) -> (i32) {
          %v = pto.load_scalar %p[%i] : !pto.ptr<i32, gm> -> i32
          %a2 = arith.addi %a, %v : i32
          scf.yield %a2 : i32
        }
        return %acc : i32
      }
    }
    """)


def test_helpers_return_values_and_are_inlined_at_every_call():
    prog = asm.parse(HELPERS)
    x = np.arange(1, 9, dtype=np.int32)
    assert prog.run({"x": x})["y"].tolist() == [16, 20]          # odd / even positions summed
    again = asm.parse(asm.print_program(prog))                    # one kernel, two loops, no call left
    assert again.run({"x": x})["y"].tolist() == [16, 20]


@pytest.mark.parametrize("old,new,msg", [
    ("%v = pto.load_scalar %p[%i] : !pto.ptr<i32, gm> -> i32",
     "%v = func.call @sum(%p, %i) : (!pto.ptr<i32, gm>, index) -> i32", "recursive func.call of @sum"),
    ("func.call @sum(%x, %c1)", "func.call @sums(%x, %c1)", "unknown function @sums"),
    (", index) -> (i32)", ", index) -> f32", r"expects results \(f32\); @sum returns \(i32\)"),
    ("func.call @sum(%x, %c0) : (!pto.ptr<i32, gm>, index)", "func.call @sum(%c0, %c0) : (index, index)",
     "argument %c0 has type index, parameter %p is"),
    ("    return\n  }\n  func.func private", "    return %s0 : i32\n  }\n  func.func private", "a kernel returns nothing"),
])
def test_func_call_errors(old, new, msg):
    assert old in HELPERS
    with pytest.raises(AsmParseError, match=msg) as ei:
        asm.parse(HELPERS.replace(old, new))
    assert " Fix: " in str(ei.value), str(ei.value)


def test_which_functions_are_kernels():
    assert asm.parse(HELPERS.replace(" attributes {pto.entry}", "")).name == "k"     # @sum is private
    both_public = HELPERS.replace(" attributes {pto.entry}", "").replace("func.func private", "func.func")
    with pytest.raises(AsmParseError, match="kernel @sum declares results; a kernel returns nothing"):
        asm.parse(both_public)                                   # every public function is a kernel
    assert asm.parse(both_public, kernel="k").name == "k"       # unless one is chosen
    two = "module {\n  func.func @a() {\n    return\n  }\n  func.func @b() {\n    return\n  }\n}\n"
    with pytest.raises(AsmParseError, match="defines 2 kernels .*pto.entry"):
        asm.parse(two)
    assert asm.parse(two.replace("@b()", "@b() attributes {pto.entry}")).name == "b"


# ----------------------------------------------------------------------------- clear messages

@pytest.mark.parametrize("line,msg", [
    ("pto.ub.set_mask_count", "A2/A3 mask-register form"),
    ("pto.ub.vadd %u, %u, %u, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c8_i64, %c8_i64, %c8_i64",
     "positional form .* is not parsed; write the strides as blk_stride"),
    ("%t = pto.alloc_tile : !pto.tile_buf<vec, 1x64xf32>", "pto.alloc_tile is PTOAS tile-level IR"),
    ("pto.tload ins(%u : !pto.ptr<f32, ub>) outs(%u : !pto.ptr<f32, ub>)", "tile-level IR"),
    ("pto.vecscope {}", "register-level vector IR"),
    ("pto.section.cube {}", "kernel section"),
    ("pto.copy_gm_to_cbuf %u, %u", "raw, register-configured"),
    ("pto.record_event[<TLOAD>, <TMOV_M2L>, <EVENT_ID0>]", "write pto.set_flag/pto.wait_flag"),
    ("pto.barrier <PIPE_ALL>, atomic", "pto.barrier has no clause 'atomic'"),
])
def test_ptoas_forms_outside_the_subset_say_why(line, msg):
    text = textwrap.dedent(f"""\
        module attributes {{pto.target_arch = "a2a3"}} {{
          func.func @k() {{
            %c0_i64 = arith.constant 0 : i64
            %c1_i64 = arith.constant 1 : i64
            %c8_i64 = arith.constant 8 : i64
            %u = pto.castptr %c0_i64 : i64 -> !pto.ptr<f32, ub>
            {line}
            return
          }}
        }}
        """)
    with pytest.raises(AsmParseError, match=msg) as ei:
        asm.parse(text, source_name="why.pto")
    assert "why.pto:7:" in str(ei.value)


def test_an_unknown_clause_after_a_comma_is_named_with_the_ops_clauses():
    bad = MATMUL.replace("%c0_i64, %c0_i64, nz2nd\n", "%c0_i64, %c0_i64, nz2nd, relu\n")
    with pytest.raises(AsmParseError, match=r"pto.mte_l0c_gm has no clause 'relu' \(its clauses: unit_flag"):
        asm.parse(bad)
    assert asm.parse(MATMUL.replace("nz2nd\n", "nz2nd, sat\n")).name == "mm"


def test_a_trailing_comma_names_the_comma_not_a_missing_operation():
    """review470: a ',' after the last operand or clause (the comma form COMMA_CLAUSE_OPS prints makes this an
    easy slip when a clause is deleted by hand) ended the op at the comma: the error said "expected an operation
    name, found ','" with "Fix: write an operation name here", or named the next line's op as a misspelt clause."""
    line = next(l for l in MATMUL.split("\n") if "pto.mte_l0c_gm" in l)
    assert line.rstrip().endswith("nz2nd")
    types = MATMUL.split(line + "\n")[1].split("\n")[0]
    assert types.strip().startswith(": !pto.ptr<f32, l0c>")
    col = line.index("nz2nd") + len("nz2nd") + 1
    for bad, where in ((MATMUL.replace(line, line.rstrip() + ","), None),               # then ': types' / next line
                       (MATMUL.replace(line, line.replace(", nz2nd", ",, nz2nd")), None),
                       (MATMUL.replace(line, line.replace(", nz2nd", ", nz2nd,")), col),
                       (MATMUL.replace(line + "\n" + types, line + ","), None)):      # next line: pto.barrier
        assert bad != MATMUL
        with pytest.raises(AsmParseError, match=r"pto.mte_l0c_gm: ',' not followed by an operand or a clause "
                                                r"\(its clauses: unit_flag.*Fix: remove the trailing ','") as ei:
            asm.parse(bad, source_name="t.pto")
        if where is not None:
            assert f":{where}:" in str(ei.value)
    assert asm.parse(MATMUL).name == "mm"


def test_a_misspelt_clause_without_a_comma_is_named_with_the_ops_clauses():
    # canonical text separates clauses by spaces: a typo there read as the next statement
    # ("unknown operation 'nz2ndd'") or dropped the clause ("nburst ... is required")
    bad = MATMUL.replace("%c0_i64, %c0_i64, nz2nd\n", "%c0_i64, %c0_i64 nz2ndd\n")
    assert bad != MATMUL
    with pytest.raises(AsmParseError, match=r"pto.mte_l0c_gm has no clause 'nz2ndd' .*did you mean 'nz2nd'"):
        asm.parse(bad)
    text = textwrap.dedent("""\
        module attributes {pto.target_arch = "a2a3"} {
          func.func @k(%x: !pto.ptr<f16, gm> {pto.shape = [128]}) {
            %c0 = arith.constant 0 : i64
            %c1 = arith.constant 1 : i64
            %c256 = arith.constant 256 : i64
            %u = pto.castptr %c0 : i64 -> !pto.ptr<f16, ub>
            pto.mte_gm_ub %x, %u, %c0, %c256 nbrust(%c1, %c0, %c0) : !pto.ptr<f16, gm>, !pto.ptr<f16, ub>, i64, i64, i64, i64, i64
            return
          }
        }
        """)
    with pytest.raises(AsmParseError, match=r"k.pto:7:38: pto.mte_gm_ub has no clause 'nbrust'.*did you mean 'nburst'"):
        asm.parse(text, source_name="k.pto")
    assert asm.parse(text.replace("nbrust", "nburst")).name == "k"


def test_tile_level_types_are_named():
    bad = MATMUL.replace("%a: !pto.ptr<f16, gm>", "%a: !pto.partition_tensor_view<16x32xf16>")
    with pytest.raises(AsmParseError, match="PTOAS tile-level IR"):
        asm.parse(bad)


def test_clause_separators_follow_each_ops_documented_syntax():
    """pto-isa docs: FIXPIPE write-backs and the frac load put commas before clauses (``..., %l2_cache_ctrl,
    nz2nd, sat``); pto.mad and the burst moves a space (``%k unit_flag(check_only) disable_gemv sat``,
    ``%len_burst nburst(...)``). Every FIXPIPE-family op is a comma op."""
    from pto_core import pto
    from pto_core.ops import registry
    from pto_core.program import program
    assert {n for n, s in registry.OPS.items() if s.family == "fixpipe"} <= asm.COMMA_CLAUSE_OPS
    with program("sep", target="A5") as k:
        g = k.gm_arg("g", "f16", (256,))
        l1 = k.ptr("l1", "f16", 0)
        pto.mte_gm_l1(g, l1, 64, nburst=(2, 128, 64), loop=[(2, 0, 128)])
        pto.mad(k.ptr("l0a", "f16", 0), k.ptr("l0b", "f16", 0), k.ptr("l0c", "f32", 0), 16, 16, 16,
                unit_flag="check_and_set", disable_gemv=True, sat=False)
        pto.mte_l0c_l1(k.ptr("l0c", "f32", 0), l1, 16, 16, 16, 16, unit_flag="check_and_clear", nz2nd=True, sat=True)
    text = asm.print_program(k.program)
    assert "%c64_i64 nburst(%c2_i64, %c128_i64, %c64_i64) loop(%c2_i64, %c0_i64, %c128_i64) :" in text
    assert "%c16_i64 unit_flag(check_and_set) disable_gemv nosat :" in text
    assert "%c16_i64, unit_flag(check_and_clear), nz2nd, sat :" in text
