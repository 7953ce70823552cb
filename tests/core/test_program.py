"""Program IR and builder: signature, registers, expressions (typing), control flow, ops, provenance."""
import numpy as np
import pytest

from pto_core import Machine, pto
from pto_core.errors import IllegalOperand, Provenance, PtoError, UnknownName, UnsupportedOp
from pto_core.program import (INDEX, Assign, BinOp, Cast, Cmp, Const, For, GmArg, If, Load, OpStmt, PtrAdd,
                              PtrFromInt, Reg, Store, abs_, all_, any_, bitcast, cast, max_, min_, not_, program,
                              select, sqrt)

from program_testops import testops  # noqa: F401  (fixture)
from kernel_helpers import line_of

pytestmark = pytest.mark.usefixtures("testops")
HERE = __file__


def _line_of(text: str) -> int:
    return line_of(HERE, text)


# ----------------------------------------------------------------------------- signature

def test_signature_gm_and_scalar_args():
    with program("sig", target="A5") as k:
        x = k.gm_arg("x", "float16", (4, 8))
        y = k.gm_arg("y", "f32", [32], io="out", fill="zero")
        n = k.scalar_arg("n", "int32")
    p = k.program
    assert p.target.name == "A5" and [a.name for a in p.args] == ["x", "y", "n"]
    assert isinstance(x, GmArg) and x.dtype.name == "f16" and x.space == "gm" and x.shape == (4, 8)
    assert x.count == 32 and x.nbytes == 64 and y.io == "out" and y.fill == "zero"
    assert n.type.name == "s32" and p.gm_args == [x, y] and p.scalar_args == [n]
    assert p.arg("y") is y
    with pytest.raises(UnknownName, match="no argument 'z'"):
        p.arg("z")


@pytest.mark.parametrize("call,match", [
    (lambda k: k.gm_arg("x", "f16", (4,)), "used twice"),
    (lambda k: k.gm_arg("1x", "f16", (4,)), "not an identifier"),
    (lambda k: k.gm_arg("z", "f16", (4,), io="both"), "io='both'"),
    (lambda k: k.gm_arg("z", "f16", (4,), fill="ones"), "fill='ones'"),
    (lambda k: k.gm_arg("z", "f16", (4,), init=[1.0]), "init= applies"),
    (lambda k: k.scalar_arg("s", "e4m3"), "cannot be held in a scalar register"),
])
def test_signature_errors(call, match):
    with program("bad") as k:
        k.gm_arg("x", "f16", (4,))
        with pytest.raises(PtoError, match=match):
            call(k)


# ----------------------------------------------------------------------------- expressions

def test_python_numbers_take_the_other_operands_type():
    with program("t") as k:
        r = k.reg("u8", name="r")
        e = r + 300                 # 300 wraps to u8 (44): same result modulo 256
        assert isinstance(e, BinOp) and e.type.name == "u8" and e.b.value == 44
        f = k.reg("f16")
        g = f * 0.1
        assert g.type.name == "f16" and g.b.value == float(np.float16(0.1))
        h = r * 0.5                 # float literal with an int register: computed in f32
        assert h.type.name == "f32" and isinstance(h.a, Cast)
        c = 3 < r
        assert isinstance(c, Cmp) and c.type.name == "bool" and c.pred == "gt" and c.a is r   # reflected


@pytest.mark.parametrize("a,b,want", [
    ("s8", "s32", "s32"), ("u32", "s32", "u32"), ("s64", "u32", "s64"), ("index", "s64", "index"),
    ("u64", "index", "index"), ("f16", "s32", "f16"), ("f16", "bf16", "f32"), ("bf16", "f32", "f32"),
    ("bool", "u8", "u8"), ("u16", "s16", "u16"),
])
def test_usual_arithmetic_conversions(a, b, want):
    with program("t") as k:
        x, y = k.reg(a), k.reg(b)
        assert (x + y).type.name == want and (y - x).type.name == want
        assert (x == y).type.name == "bool"


def test_operators_build_the_documented_nodes():
    with program("t") as k:
        a, b = k.reg("s32", name="a"), k.reg("s32", name="b")
        f = k.reg("f32")
        ops = {"add": a + b, "sub": a - b, "mul": a * b, "div": a // b, "rem": a % b, "shl": a << 2,
               "shr": a >> b, "and": a & b, "or": a | b, "xor": a ^ b, "min": min_(a, b), "max": max_(a, b)}
        for name, e in ops.items():
            assert isinstance(e, BinOp) and e.op == name and e.type.name == "s32"
        assert (a / b).op == "div"          # TIK: '/' on integers is C division too
        assert (-a).op == "neg" and (~a).op == "not" and abs(a).op == "abs" and abs_(f).op == "abs"
        assert sqrt(f).op == "sqrt" and (f / 2).op == "div"
        assert (a << k.reg("u8")).b.type.name == "s32"     # shift count converted to the value's type
        assert select(a > b, a, 1.5).type.name == "f32"
        assert all_(a > 0, b > 0, a != b).type.name == "bool" and any_(a > 0, b).op == "or"
        assert not_(a > b).op == "not"
        assert cast(a, "f16").type.name == "f16" and bitcast(f, "u32").type.name == "u32"
        assert a.astype("s64").type.name == "s64"
        assert repr(a + 1) == "(%a" + str(a.id) + " + 1:i32)"


def test_expression_type_errors():
    with program("t") as k:
        f = k.reg("f32")
        a = k.reg("s32")
        x = k.gm_arg("x", "f16", (4,))
        with pytest.raises(IllegalOperand, match="'shl' does not apply to f32"):
            f << 1
        with pytest.raises(IllegalOperand, match="'and' does not apply to f32"):
            f & a
        with pytest.raises(IllegalOperand, match="'sqrt' does not apply to i32"):
            sqrt(a)
        with pytest.raises(IllegalOperand, match="pointer .* used in scalar arithmetic"):
            a + x
        with pytest.raises(IllegalOperand, match="equal widths"):
            bitcast(a, "f16")
        with pytest.raises(IllegalOperand, match="not an integer"):
            Const(1.5, "s32")
        with pytest.raises(PtoError, match="no Python truth value"):
            if a > 0:
                pass


def test_constant_folding_of_casts_and_normalisation():
    assert Const(-1, "u16").value == 0xFFFF and Const(300, "s8").value == 44
    assert Const(0.1, "bf16").value == float.fromhex("0x1.9ap-4")
    assert cast(Const(3.9, "f32"), "s32").value == 3 and cast(Const(-1, "s8"), "u32").value == 0xFFFFFFFF
    c = cast(Const(5, "s32"), "bool")
    assert c.value is True and c.type.name == "bool"


def test_int_constant_to_bool_is_nonzero_as_c_conversion():
    # INT_TO_BOOL_NONZERO: C's conversion to _Bool (and `convert` of a register value); was bit 0 (2 -> False)
    assert [Const(v, "bool").value for v in (2, 256, -1, 3, 1, 0, True, False)] == \
        [True, True, True, True, True, False, True, False]
    assert Const(np.int32(2), "bool").value is True and Const(0.5, "bool").value is True
    assert Const(2, "bool").value == cast(Const(2, "s32"), "bool").value


def test_numpy_float_constants_are_their_python_numbers():
    """`scalars.normalize` (under every `Const`): a numpy float is the float it holds. np.float32(0.5) was False as
    a bool (int(0.5)), np.float32(1.5) became 1 in an int type, and inf / NaN raised a raw OverflowError /
    ValueError instead of the IllegalOperand a Python inf or 1.5 gets."""
    assert Const(np.float32(0.5), "bool").value is True and Const(np.float16(-0.0), "bool").value is False
    assert Const(np.float32(3.0), "s32").value == 3 and Const(np.float64(2.5), "f16").value == 2.5
    for v in (np.float32(np.inf), np.float32(-np.inf), np.float32(np.nan), np.float32(1.5)):
        with pytest.raises(IllegalOperand, match=r"is not an integer.*Fix: use an integer constant"):
            Const(v, "s32")


def test_pointer_expressions():
    with program("t") as k:
        x = k.gm_arg("x", "s32", (16,))
        i = k.reg("s32")
        p = x + i
        assert isinstance(p, PtrAdd) and p.n.type is INDEX and p.dtype.name == "s32" and p.space == "gm"
        assert (x + 0) is x and (x - 2).n.value == -2 and (x - i).n.op == "neg"
        u = k.ptr("ub", "f16", 0x100)
        assert isinstance(u, PtrFromInt) and u.addr == 0x100 and (u + 8).addr == 0x110
        assert u.type_str == "!pto.ptr<f16, ub>" and u.cast("u8").addr == 0x100
        assert u.byte_offset(3).addr == 0x103 and u.byte_offset(3).dtype.name == "f16"
        assert (k.ptr("ub", "s4", 0) + 3).addr == 2               # packed: 3 nibbles round up to 2 bytes
        assert (x + i).addr.type.name == "s64"                     # dynamic: an expression
        m = Machine("A2A3")
        with pytest.raises(IllegalOperand, match="sub-core 1"):
            k.store(m.ptr("ub", "f16", 0, sub=1), 0, 1.0)
        with pytest.raises(IllegalOperand, match="integer address"):
            k.ptr("ub", "f16", 1.5)
        with pytest.raises(IllegalOperand, match="offsets must be integers"):
            x + k.reg("f32")


# ----------------------------------------------------------------------------- statements

def test_registers_assign_load_store_record_statements():
    with program("t") as k:
        x = k.gm_arg("x", "f16", (8,))
        r = k.reg("s32", 5, name="r")
        r += 1
        r.set(r * 2)
        v = k.load(x, 3)
        w = k.load(x, r, into=k.reg("s32", name="w"))
        k.store(x, 0, r)
    body = k.program.body
    assert [type(s).__name__ for s in body] == ["Assign", "Assign", "Assign", "Load", "Load", "Assign", "Store"]
    assert body[0].value.value == 5 and body[1].value.op == "add" and body[2].value.op == "mul"
    assert v.type.name == "f16" and body[3].reg is v and body[3].offset.value == 3
    assert body[4].reg.type.name == "f16" and body[5].reg is w and isinstance(body[5].value, Cast)
    assert body[6].value.type.name == "f16"         # stored values are converted to the element type


def test_loops_ifs_and_terminators():
    with program("t") as k:
        n = k.scalar_arg("n", "s32")
        acc = k.reg("s32", 0)
        with k.for_(n) as i:
            assert i.type.name == "s32"
            with k.if_(i == 2):
                k.continue_()
            with k.elif_(i > 5):
                k.break_()
            with k.elif_(i > 3):
                acc += 2
            with k.else_():
                acc += 1
        with k.for_(0, 10, 3) as j:
            assert j.type is INDEX
        k.return_()
    loop = k.program.body[1]
    assert isinstance(loop, For) and loop.hi.name == "n" and isinstance(loop.body[0], If)
    chain = loop.body[0]
    assert chain.then[0].__class__.__name__ == "Continue"
    second = chain.orelse[0]
    assert second.then[0].__class__.__name__ == "Break"
    third = second.orelse[0]
    assert isinstance(third.then[0], Assign) and isinstance(third.orelse[0], Assign)
    assert k.program.body[2].step.value == 3 and k.program.body[3].__class__.__name__ == "Return"


@pytest.mark.parametrize("body,match", [
    (lambda k: k.else_(), "else_ must directly follow an if_"),
    (lambda k: k.break_(), "break_ outside a loop"),
    (lambda k: k.continue_(), "continue_ outside a loop"),
    (lambda k: k.for_(0, 4, 0), "step 0 must be positive"),
    (lambda k: k.for_(0, 1.5), "is not an integer"),
    (lambda k: k.assign(k.scalar_arg("s"), 1), "can only assign to registers"),
    (lambda k: k.load(k.ptr("ub", "s4", 0)), "packed type s4"),
    (lambda k: k.if_(k.gm_arg("g", "f16", (2,))), "not a condition"),
])
def test_builder_misuse_errors(body, match):
    with program("t") as k:
        with pytest.raises(PtoError, match=match):
            body(k)


def test_loop_variables_are_only_usable_inside_their_loop():
    with program("t") as k:
        g = k.gm_arg("g", "s32", (4,), io="out")
        with k.for_(0, 4, name="i") as i:
            k.store(g, i, i)
        with pytest.raises(PtoError, match="loop variable %i is used outside its loop") as ei:
            k.store(g, 0, i + 1)  # LINE-leak
        assert ei.value.where.line == _line_of("# LINE-leak")
        with pytest.raises(PtoError, match="outside its loop"):
            pto.t_fill(g, i, 1)


def test_loop_variable_check_sees_a_shared_expression_again_after_its_loop_closes():
    # an expression object that passed the check inside its loop (the check remembers such subtrees) is
    # refused when it is used again after the loop closed, at every nesting depth; outer ones stay fine
    with program("t") as k:
        g = k.gm_arg("g", "s32", (64,), io="out")
        r = k.reg("s32", 1)
        with k.for_(0, 4, name="i") as i:
            outer = i * 4 + r
            k.store(g, outer, r)
            with k.for_(0, 4, name="j") as j:
                inner = outer + j * 16
                k.store(g, inner, r)
                k.store(g, inner, r)
            k.store(g, outer, r)                       # still in i's loop: fine
            with pytest.raises(PtoError, match="loop variable %j is used outside its loop") as ei:
                k.store(g, inner, r)  # LINE-shared-inner
            assert ei.value.where.line == _line_of("# LINE-shared-inner")
            with k.for_(0, 2, name="j2"):
                k.store(g, outer, r)                   # passed at the outer level, still valid inside
        with pytest.raises(PtoError, match="loop variable %i is used outside its loop") as ei:
            k.store(g, outer, r)  # LINE-shared-outer
        assert ei.value.where.line == _line_of("# LINE-shared-outer")
        with pytest.raises(PtoError, match="loop variable %i is used outside its loop"):
            k.assign(r, outer + 1)


def test_else_after_else_and_unclosed_blocks():
    with program("t") as k:
        r = k.reg("s32", 0)
        with k.if_(r > 0):
            pass
        with k.else_():
            pass
        with pytest.raises(PtoError, match="after an else_"):
            k.elif_(r > 1)
    with pytest.raises(PtoError, match="still open"):
        with program("t2") as k2:
            k2.for_(0, 4).__enter__()


def test_multicore_loop_rules():
    with program("mc") as k:
        blk = k.scalar_arg("blocks", "s32")
        with k.for_(0, blk, block_num=blk, dtype="s32") as c:
            assert c.type.name == "s32" and c.name == "i"
    assert k.program.block_num is blk and k.program.body == []
    with program("mc2") as k:
        with k.for_(0, 8, block_num=8, name="core") as c:
            assert c.name == "core"
            with pytest.raises(IllegalOperand, match="cannot be nested in another multi-core loop"):
                k.for_(0, 8, block_num=8)
    assert k.program.block_num == 8
    with program("mc3") as k:                         # SEQUENTIAL_BLOCK_LOOPS: one after the other, same count
        with k.for_(0, 8, block_num=8):
            pass
        with k.for_(0, 8, block_num=8):
            pass
        with pytest.raises(UnsupportedOp, match="second multi-core loop with block_num 4 after one with 8"):
            k.for_(0, 4, block_num=4)
    assert k.program.block_num == 8
    for args, kw, match in [((0, 8), {"block_num": 4}, "must equal block_num"),
                            ((1, 8), {"block_num": 8}, "start at 0"),
                            ((0, 8, 2), {"block_num": 8}, "start at 0 with step 1")]:
        with program("bad") as k:
            with pytest.raises(IllegalOperand, match=match):
                k.for_(*args, **kw)
    with program("nested") as k:                      # not a loop: may sit inside loops and ifs
        with k.for_(0, 2):
            with k.if_(1):
                with k.for_(0, 4, block_num=4) as c:
                    assert c is not None
    assert k.program.block_num == 4


# ----------------------------------------------------------------------------- ops and provenance

def test_op_calls_are_recorded_with_user_provenance():
    with program("ops") as k:
        g = k.gm_arg("g", "f32", (64,), io="out")
        u = k.ptr("ub", "f32", 0)
        pto.t_fill(u, 64, 1.5)  # LINE-fill
        with k.at(Provenance("kernel.py", 7, "tik.vec_dup")):
            pto.t_copy(u, g, 64)
            k.reg("s32", 0)
        pto.t_sync("MTE3", "cube", "EVENT_ID3")
    fill, copy, init, sync = k.program.body
    assert isinstance(fill, OpStmt) and fill.call.spec.name == "t_fill"
    assert fill.where == Provenance(HERE, _line_of("# LINE-fill"), "pto.t_fill")
    assert copy.where == Provenance("kernel.py", 7, "tik.vec_dup") and init.where.call == "tik.vec_dup"
    assert sync.call.operands == ("MTE3", "M", 3)          # pipes and events canonicalised
    assert fill.call.operands[2] == 1.5 and fill.call.operands[1] == 64


def test_op_operand_kinds_are_checked_at_record_time():
    with program("ops") as k:
        g = k.gm_arg("g", "f32", (64,))
        r = k.reg("s32")
        f = k.reg("f32")
        with pytest.raises(IllegalOperand, match="expects a pointer") as ei:
            pto.t_fill(5, 64, 1.0)  # LINE-bad-ptr
        assert ei.value.op == "pto.t_fill" and ei.value.where.line == _line_of("# LINE-bad-ptr")
        with pytest.raises(IllegalOperand, match="expects an integer, got a f32"):
            pto.t_fill(g, f, 1.0)
        with pytest.raises(IllegalOperand, match="not allowed"):
            pto.t_matmul(g, g, g, 1, 1, 1)
        with pytest.raises(IllegalOperand, match="pipe operands must be constants"):
            pto.t_sync(r, "V", 0)
        pto.t_fill(g, r, f)                                  # registers as operands: cast to i64 for ints
        assert k.program.body[-1].call.operands[1].type.name == "s64"


def test_op_verify_runs_at_record_time_with_the_builder_target():
    with program("v") as k:
        a = k.ptr("l0a", "f32", 0)
        b = k.ptr("l0b", "f16", 0)
        c = k.ptr("l0c", "f32", 0)
        with pytest.raises(IllegalOperand, match="f32 x f16 -> f32 are not supported") as ei:
            pto.t_matmul(a, b, c, 16, 16, 16)  # LINE-verify
        assert ei.value.where.line == _line_of("# LINE-verify") and "pto.t_matmul" in str(ei.value)


def test_eager_pointers_inside_a_builder_become_constants():
    m = Machine("A2A3")
    with program("e") as k:
        pto.t_fill(m.ptr("ub", "s32", 0x40), 4, 7)
    op = k.program.body[0].call
    assert isinstance(op.operands[0], PtrFromInt) and op.operands[0].addr == 0x40


def test_reg_set_outside_a_builder_is_an_error():
    r = Reg("s32")
    with pytest.raises(PtoError, match="outside a program builder"):
        r.set(1)


def test_program_repr_and_walk():
    with program("w") as k:
        with k.for_(0, 2):
            k.reg("s32", 1)
    assert "1 stmts" not in repr(k.program) and "2 stmts" in repr(k.program)
    s = str(k.program)
    assert s.startswith("module attributes") and "scf.for" in s and ": i32" not in s   # dead register: no text
    assert isinstance(k.program.body[0].body[0], Assign) and not isinstance(k.program.body[0], (Load, Store))


def test_recorded_sync_ops_are_verified_per_target_and_keep_their_own_provenance():
    """Constant sync ops are coerced and verified once per (op, operands, target); the same call
    is still rejected on a target where it is illegal, and each recorded op has its own call site."""
    from pto_core.errors import SyncError
    for _ in range(2):
        with program("ok", target="A2A3") as k:
            pto.set_flag("MTE2", "V", 5)
            pto.set_flag("MTE2", "V", 5)  # LINE-second-flag
        first, second = k.program.body
        assert first.call.operands == second.call.operands == ("MTE2", "V", 5)
        assert second.where.line == first.where.line + 1
        with pytest.raises(SyncError, match="event id 5 does not exist on Ascend910A") as ei:
            with program("bad", target="Ascend910A"):
                pto.set_flag("MTE2", "V", 5)  # LINE-bad-flag
        lines = open(__file__).read().splitlines()
        assert lines[second.where.line - 1].endswith("# LINE-second-flag")
        assert lines[ei.value.where.line - 1].endswith("# LINE-bad-flag")


# ----------------------------------------------------------------------------- special registers (ReadSpr)

def test_read_spr_of_a_register_no_op_wrote_is_an_uninitialised_read():
    from pto_core import MachineOptions, UninitializedRead
    with program("spr_unset", target="A2A3") as k:
        c = k.gm_arg("c", "s64", (4,), io="out")
        k.store(c, 0, k.read_spr("VMS4_SR", 2))
    with pytest.raises(UninitializedRead, match="special register VMS4_SR, which no op has written") as e:
        k.program.run({}, options=MachineOptions(uninitialized="raise"))
    assert e.value.where is not None and e.value.where.line > 0


def test_read_spr_builder_checks_the_register_and_word():
    with program("spr_bad", target="A2A3") as k:
        k.gm_arg("c", "s64", (4,), io="out")
        with pytest.raises(IllegalOperand, match="no readable special register 'CMPMASK'"):
            k.read_spr("CMPMASK")
        with pytest.raises(IllegalOperand, match=r"VMS4_SR has 4 word\(s\); index 4 is outside \[0, 4\)"):
            k.read_spr("VMS4_SR", 4)

