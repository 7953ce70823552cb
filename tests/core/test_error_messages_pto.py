"""Wording of PTO-level errors (audit h_msg105): the fix fits the case, and no limit is printed twice."""
import numpy as np
import pytest

from pto_core import asm
from pto_core.errors import AsmParseError, ConfigError

_PTO = """module attributes {pto.target_arch = "a2a3"} {
  func.func @k() {
    %c0 = arith.constant 0 : i64
    %c32 = arith.constant 32 : i64
    %a = pto.castptr %c0 : i64 -> !pto.ptr<f16, l0a>
    %b = pto.castptr %c0 : i64 -> !pto.ptr<f16, l0b>
    %c = pto.castptr %c0 : i64 -> !pto.ptr<f32, l0c>
    pto.mad %a, %b, %c, %c0, %c32, %c32 : !pto.ptr<f16, l0a>, !pto.ptr<f16, l0b>, !pto.ptr<f32, l0c>, i64, i64, i64
    return
  }
}
"""


def test_pto_as_zero_mad_size_is_not_told_to_split_the_matmul():
    with pytest.raises(AsmParseError) as e:
        asm.parse(_PTO, source_name="m.pto")
    text = str(e.value)
    assert text.startswith("m.pto:8:5: pto.mad: operand %m: value 0 is outside [1, 4095] Fix: pass a size"), text
    assert "(limit:" not in text, text


def test_pto_input_of_the_wrong_shape_has_a_fix():
    text = _PTO.replace("@k()", '@k(%x: !pto.ptr<f16, gm> {pto.shape = [8]})')
    exe = asm.parse(text.replace("%c0, %c32, %c32", "%c32, %c32, %c32"), source_name="m.pto").compile()
    with pytest.raises(ConfigError) as e:
        exe.run({"x": np.ones(256, np.float16)})
    assert "arr.reshape((8,))" in e.value.hint


def test_the_limit_is_left_out_only_when_the_message_states_it_as_a_whole_token():
    from pto_core.errors import UnknownName
    e = UnknownName("the script built no kernel named 'nope'", operand="--kernel", limit="e")
    assert str(e).endswith("(limit: e)")                     # 'e' inside 'the', 'kernel', 'named' is no mention
    e = UnknownName("burst 8 is outside [1, 4]", operand="burst", limit="[1, 4]")
    assert "(limit:" not in str(e)
    e = UnknownName("tensor has 16 elements", operand="x", limit=16)
    assert "(limit:" not in str(e)
    e = UnknownName("tensor has 160 elements", operand="x", limit=16)
    assert str(e).endswith("(limit: 16)")


def test_a_limit_is_not_taken_as_stated_by_a_different_number():
    """review224: a limit 1 was hidden by a message quoting -1, a limit 16 by 16.5 (another number, not a mention)."""
    from pto_core.errors import UnknownName
    assert str(UnknownName("repeat -1 is out of range", operand="repeat", limit=1)).endswith("(limit: 1)")
    assert str(UnknownName("scale 16.5 is too big", operand="scale", limit=16)).endswith("(limit: 16)")
    assert str(UnknownName("value -0.5 is not allowed", operand="v", limit=0.5)).endswith("(limit: 0.5)")
    for msg in ("repeat 300 is over 255.", "offset -8 is below -8", "got 2, want 16 (0x10)"):
        limit = {"repeat 300 is over 255.": 255, "offset -8 is below -8": -8}.get(msg, 16)
        assert "(limit:" not in str(UnknownName(msg, operand="x", limit=limit))


def test_every_simulator_error_survives_pickling():
    """Every `pto_core.errors` class pickles and unpickles with its message, fields and ``str`` (a program run
    in a multiprocessing worker reports its error in the parent). `AsmParseError` could not be rebuilt
    (``line``/``column`` are required keywords): the pool's result thread died and the parent waited forever."""
    import inspect
    import pickle

    from pto_core import errors as E
    classes = [c for c in vars(E).values() if isinstance(c, type) and issubclass(c, E.PtoError)]
    assert E.AsmParseError in classes and E.TassignError in classes
    where = E.Provenance("/u/kernel.py", 12, "pto.mad")
    for cls in classes:
        extra = {"line": 3, "column": 7, "source_name": "k.pto"} if cls is E.AsmParseError else {}
        if "violations" in inspect.signature(cls).parameters:
            extra["violations"] = ("SA-0351",)
        e = cls("bad thing", op="pto.mad", operand="%a", value=5, limit="[0, 4]", hint="do this", where=where,
                context={"core": 1}, **extra)
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is cls and str(back) == str(e) and vars(back) == vars(e), cls
    with pytest.raises(AsmParseError) as info:
        asm.parse("func @k( {")
    back = pickle.loads(pickle.dumps(info.value))
    assert (back.line, back.column, back.source_name, str(back)) == \
        (info.value.line, info.value.column, info.value.source_name, str(info.value))


def test_swapped_source_and_destination_pointers_get_a_fix_naming_the_order():
    """TIK's data_move(dst, src) order kept in a PTO move: the Fix says the operands look swapped (it said
    'create it with machine.ptr('gm', ...)' -- the user had a GM pointer, in the other place)."""
    import numpy as np
    from pto_core import Machine, pto
    from pto_core.errors import IllegalOperand
    from pto_core.program import program
    m = Machine("A2A3")
    x = m.gm_tensor(np.ones(128, np.float16), name="x")
    ub, l0c = m.ptr("ub", "f16", 0), m.ptr("l0c", "f32", 0)
    with pytest.raises(IllegalOperand) as e:
        pto.mte_gm_ub(ub, x, 0, 256, nburst=(1, 256, 256))
    assert "%src and %dst look swapped: pto.mte_gm_ub takes them in the order (src, dst)" in str(e.value)
    with pytest.raises(IllegalOperand) as e:
        pto.mte_l0c_gm(x, l0c, 16, 16, 16, 16, 0, 0)
    assert "%src and %dst look swapped" in e.value.hint and "(in l0c) first" in e.value.hint
    with pytest.raises(IllegalOperand) as e:          # only one operand wrong: the usual Fix
        pto.mte_gm_ub(m.ptr("l1", "f16", 0), ub, 0, 256, nburst=(1, 256, 256))
    assert "swapped" not in str(e.value)
    with program("swapped", target="A2A3") as k:      # recorded calls too
        g = k.gm_arg("g", "f16", (128,))
        with pytest.raises(IllegalOperand, match="look swapped"):
            pto.mte_gm_ub(k.ptr("ub", "f16", 0), g, 0, 256, nburst=(1, 256, 256))


def test_a_move_given_pointers_of_other_spaces_names_the_move_between_them():
    """A user migrating ``data_move(ub, x_gm, ...)`` picks ``pto.mte_gm_l1`` for a UB destination: the Fix named
    only the space ('use one of l1'); it now names the move between the given spaces, with its signature (the
    operands differ: ``mte_gm_ub`` takes an ``l2_cache_ctl``), eager, recorded and in a TIK kernel alike
    (`registry.move_op_hint`; user404)."""
    import numpy as np
    from pto_core import Machine, pto
    from pto_core.errors import IllegalOperand
    from pto_core.program import program
    m = Machine("A2A3")
    x = m.gm_tensor(np.ones(256, np.float16), name="x")
    ub, l1 = m.ptr("ub", "f16", 0), m.ptr("l1", "f16", 0)
    with pytest.raises(IllegalOperand) as e:
        pto.mte_gm_l1(x, ub, 512, nburst=(1, 512, 512))
    assert e.value.hint.startswith("pto.mte_gm_l1 moves gm -> l1; gm -> ub is pto.mte_gm_ub (signature: "
                                   "pto.mte_gm_ub src, dst, l2_cache_ctl, len_burst"), e.value.hint
    with pytest.raises(IllegalOperand) as e:          # one pointer wrong: L1 -> UB is its own move
        pto.mte_gm_ub(l1, ub, 0, 256, nburst=(1, 256, 256))
    assert "l1 -> ub is pto.mte_l1_ub" in e.value.hint
    with pytest.raises(IllegalOperand) as e:          # swapped pointers keep their own Fix
        pto.mte_gm_l1(l1, x, 512, nburst=(1, 512, 512))
    assert "look swapped" in e.value.hint and "is pto." not in e.value.hint
    with pytest.raises(IllegalOperand) as e:          # no op moves l0a -> l0b: the usual Fix stays
        pto.mte_l1_l0b(m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), 0, 0, 1, 1, 1, 1)
    assert " moves " not in str(e.value)
    with program("wrong_move", target="A2A3") as k:    # recorded calls too
        g = k.gm_arg("g", "f16", (256,))
        with pytest.raises(IllegalOperand, match=r"gm -> ub is pto\.mte_gm_ub"):
            pto.mte_gm_l1(g, k.ptr("ub", "f16", 0), 512, nburst=(1, 512, 512))


def test_an_out_of_bounds_access_through_a_pointer_cast_to_another_dtype_says_so():
    """``out.cast("f32")`` over a float16 output in a FIXPIPE write-back: the error said only 'run past the end of
    region 'out'' (user404 MIS=dtype); it now names both dtypes and the Fix the cast (`note_pointer_dtype`). A
    pointer of the region's own dtype keeps the plain message."""
    from pto_core import Machine, pto
    from pto_core.errors import OutOfBounds
    from pto_core.program import program
    m = Machine("A2A3")
    out = m.gm_alloc((16, 16), "f16", name="out")
    acc = m.ptr("l0c", "f32", 0)
    with pytest.raises(OutOfBounds) as e:
        pto.mte_l0c_gm(acc, out.cast("f32"), 16, 16, 16, 256, 0, 0)
    assert ("run past the end of region 'out' (512 B); the pointer's dtype is f32 but region 'out' was declared "
            "f16 (4 byte(s) per element, not 2)") in e.value.message, e.value.message
    assert e.value.hint.startswith("if that dtype is a mistake (a .cast('f32') of the region's f16 pointer), use a "
                                   "f16 pointer"), e.value.hint
    assert e.value.hint.endswith("otherwise check burst lengths, strides and offsets against the tensor's size")
    with pytest.raises(OutOfBounds) as e:             # same dtype, too long: no dtype note
        pto.mte_l0c_gm(acc, out, 16, 32, 16, 256, 0, 0, pre_quant=(0.0, {"mode": "f32_f16"}))
    assert "dtype" not in str(e.value)
    with program("cast", target="A2A3") as k:          # a compiled program: the same note
        g = k.gm_arg("g", "f16", (16, 16), io="out")
        pto.mte_l0c_gm(k.ptr("l0c", "f32", 0), g.cast("f32"), 16, 16, 16, 256, 0, 0)
    with pytest.raises(OutOfBounds, match="the pointer's dtype is f32 but region 'g' was declared f16"):
        k.program.run({})


def test_the_move_hint_names_only_moves_the_target_has():
    """user404: for an L0C -> UB pair the hint named pto.mte_l0c_ub (A5 only) and copy_matrix_cc_to_ubuf (v100/v200
    only) on every chip. Now (registry.OP_AVAILABILITY): A5 gets mte_l0c_ub, Ascend310 copy_matrix_cc_to_ubuf, and
    A2A3 / Ascend910B1, which have neither, are told so with the targets that have them -- eager and recorded."""
    from pto_core import Machine, pto
    from pto_core.errors import IllegalOperand
    from pto_core.program import program

    def hint(target):
        m = Machine(target)
        with pytest.raises(IllegalOperand) as e:
            pto.mte_l0c_gm(m.ptr("l0c", "f32", 0), m.ptr("ub", "f32", 0), 16, 16, 16, 16, 0, 0)
        return e.value.hint
    h = hint("A5")
    assert "l0c -> ub is pto.mte_l0c_ub (signature: pto.mte_l0c_ub %src" in h and "copy_matrix" not in h, h
    h = hint("Ascend310")
    assert "l0c -> ub is pto.copy_matrix_cc_to_ubuf (signature:" in h and "mte_l0c_ub" not in h, h
    for target in ("A2A3", "Ascend910B1"):
        h = hint(target)
        assert h.startswith(f"pto.mte_l0c_gm moves l0c -> gm; {target} AiCore has no move l0c -> ub (pto.mte_l0c_ub "
                            f"exists on A5; pto.copy_matrix_cc_to_ubuf exists on Ascend310, Ascend910A, "), h
        assert " is pto." not in h and "signature" not in h, h
    with program("l0c_ub", target="A2A3") as k:
        with pytest.raises(IllegalOperand, match="A2A3 AiCore has no move l0c -> ub"):
            pto.mte_l0c_gm(k.ptr("l0c", "f32", 0), k.ptr("ub", "f32", 0), 16, 16, 16, 16, 0, 0)
    m = Machine("A2A3")                               # moves every chip has are still named
    with pytest.raises(IllegalOperand, match=r"gm -> ub is pto\.mte_gm_ub \(signature"):
        pto.mte_gm_l1(m.gm_alloc((256,), "f16", name="x"), m.ptr("ub", "f16", 0), 512, nburst=(1, 512, 512))


@pytest.mark.parametrize("op", ["vabs", "vexp"])
def test_a_vector_op_given_a_gm_pointer_is_not_told_to_use_a_move_backwards(op):
    """`registry.move_op_hint` read a vector op's (dst, src) pointers as (src, dst): ``pto.ub.vabs(gm_dst,
    ub_src)`` was told "pto.ub.vabs moves ub -> ub; gm -> ub is pto.mte_gm_ub" (the data would go ub -> gm,
    and vabs moves nothing). A vector op keeps the usual Fix (the spaces it takes)."""
    from pto_core import pto
    from pto_core.errors import IllegalOperand
    from pto_core.program import program
    with program("vec_gm", target="A2A3") as k:
        x = k.gm_arg("x", "f16", (128,))
        with pytest.raises(IllegalOperand) as e:
            getattr(pto.ub, op)(x, k.ptr("ub", "f16", 0), 1)
    msg = str(e.value)
    assert "mte_gm_ub" not in msg and " moves " not in msg and msg.endswith("Fix: use one of ub"), msg


def test_an_out_of_bounds_access_through_a_narrower_or_same_width_pointer_gets_no_dtype_note():
    """review414: an f16 pointer over an f32 (or s16) region that a FIXPIPE write overflows (too many rows) was told
    'the pointer's dtype is f16 but region ... was declared f32' with a Fix to use an f32 pointer -- which reaches
    twice as far. Counting in narrower (or same-width) elements cannot be what overflowed: no note, eager and
    compiled; a wider pointer keeps it."""
    from pto_core import Machine, pto
    from pto_core.errors import OutOfBounds
    from pto_core.program import program
    q = {"pre_quant": (0.0, {"mode": "f32_f16"})}
    m = Machine("A2A3")
    acc = m.ptr("l0c", "f32", 0)
    for dt in ("f32", "s16"):
        out = m.gm_alloc((16, 16), dt, name=f"o_{dt}")
        with pytest.raises(OutOfBounds, match=f"run past the end of region 'o_{dt}'") as e:
            pto.mte_l0c_gm(acc, out.cast("f16"), 48, 16, 48, 16, 0, 0, **q)
        assert "dtype" not in str(e.value) and "cast" not in str(e.value), str(e.value)
    with program("narrow", target="A2A3") as k:
        g = k.gm_arg("g", "f32", (16, 16), io="out")
        pto.mte_l0c_gm(k.ptr("l0c", "f32", 0), g.cast("f16"), 48, 16, 48, 16, 0, 0, **q)
    with pytest.raises(OutOfBounds) as e:
        k.program.run({})
    assert "run past the end of region 'g'" in str(e.value) and "dtype" not in str(e.value), str(e.value)
    wide = m.gm_alloc((16, 16), "f16", name="wide")
    with pytest.raises(OutOfBounds, match="the pointer's dtype is f32 but region 'wide' was declared f16"):
        pto.mte_l0c_gm(acc, wide.cast("f32"), 16, 16, 16, 256, 0, 0)


def test_the_move_hint_names_the_mx_scale_moves_only_where_the_chip_has_mx_scale_buffers():
    """review414: an L1 -> L0A pair given to another move was told 'l1 -> l0a is pto.mte_l1_l0a or
    pto.mte_l1_l0a_mx' on every chip, but the MX scale moves exist only with l0a_scale/l0b_scale (A5; their
    verifier refuses them elsewhere). Checked over every target, every two-pointer op and every space pair: each op
    a hint names takes those spaces and exists on the target."""
    import re
    from types import SimpleNamespace
    from pto_core import Machine, pto
    from pto_core.errors import IllegalOperand
    from pto_core.ops import registry
    from pto_core.targets import profiles
    for target, named in (("A2A3", "pto.mte_l1_l0b (signature"), ("A5", "pto.mte_l1_l0b or pto.mte_l1_l0b_mx")):
        m = Machine(target)
        with pytest.raises(IllegalOperand) as e:
            pto.mte_l1_l0a(m.ptr("l1", "f16", 0), m.ptr("l0b", "f16", 0), 1, 1)
        assert f"l1 -> l0b is {named}" in e.value.hint, e.value.hint
    spaces = ("gm", "ub", "l1", "l0a", "l0b", "l0c", "bt", "fb")
    checked = 0
    for target in profiles():
        for spec in list(registry.OPS.values()):
            ptrs = [o for o in spec.operands if o.kind == "ptr"]
            if len(ptrs) != 2:
                continue
            for a in spaces:
                for b in spaces:
                    given = {id(ptrs[0]): a, id(ptrs[1]): b}
                    operands = tuple(SimpleNamespace(space=given[id(o)]) if o.kind == "ptr" else 0
                                     for o in spec.operands)
                    hint = registry.move_op_hint(spec, operands, target)
                    found = re.search(r" is (pto\.\S+(?: or pto\.\S+)*) \(signature", hint or "")
                    if hint is not None:
                        assert spec.name.startswith(registry.MOVE_OP_PREFIXES), (spec.name, hint)
                    for name in (found.group(1).split(" or ") if found else ()):
                        other = registry.OPS[name[len("pto."):]]
                        optrs = [o for o in other.operands if o.kind == "ptr"]
                        assert a in optrs[0].spaces and b in optrs[1].spaces, (target.name, spec.name, a, b, name)
                        assert registry.op_available(other.name, target), (target.name, spec.name, a, b, name)
                        if other.name.endswith("_mx"):
                            assert target.has_space("l0a_scale"), (target.name, spec.name, hint)
                        checked += 1
    assert checked > 4000
