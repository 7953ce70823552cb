"""FIXPIPE constraints (seed 001 and pto_spec.md §5): each has a legal and an illegal call.

Every illegal call must raise the named error class, mention the rule, and name the
operand or clause.
"""
import contextlib

import ml_dtypes
import numpy as np
import pytest

from fixpipe_support import fb_words, load_acc
from pto_core import IllegalOperand, Machine, MachineOptions, Misaligned, UnknownName, UnsupportedOp, dtype, pto
from pto_core.errors import PtoError
from pto_core.numerics import quant as Q


class Env:
    """A2A3 (or A5) machine with an f32 and an s32 16 x 32 accumulator and pointers of every kind.

    The accumulators come from ``machine.write``, not from a mad, so the hazard verifier
    (which wants the unit-flag handshake and M -> FIX edges) is off: these tests are about
    clause legality.
    """

    def __init__(self, target="A2A3"):
        self.m = Machine(target, options=MachineOptions(check_hazards=False))
        x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32) - 100
        self.acc, _ = load_acc(self.m, x)
        self.acc_i, _ = load_acc(self.m, x.astype(np.int32), addr=0x4000)
        self.fb = fb_words(self.m, [Q.make_word(1.0, offset_bits=0)] * 32)
        self.fb_relu = self.m.ptr("fb", "f32", 0x200)
        self.m.write(self.fb_relu, np.full(32, 0.5, np.float32))

    def l1(self, dt):
        return self.m.ptr("l1", dt, 0)

    def l1_op(self, dst_t="f16", acc="f32", m=16, n=32, ss=16, ds=None, **kw):
        """mte_l0c_l1 of the 16 x 32 accumulator; ``ds`` defaults to one row / column / channel block."""
        src = self.acc if acc == "f32" else self.acc_i
        if ds is None:
            bits = dtype(dst_t).bits
            c0d = 8 if kw.get("nz2nz") == 1 else 64 if bits == 4 else 32 if bits == 8 else 16
            ds = n if "nz2nd" in kw else m if "nz2dn" in kw else m * c0d
        pto.mte_l0c_l1(src, self.l1(dst_t), m, n, ss, ds, **kw)


@pytest.fixture
def env():
    return Env()


@pytest.fixture
def env5():
    return Env("A5")


@contextlib.contextmanager
def raises(cls, match, operand=None):
    """`pytest.raises` that also checks the error's operand / clause name."""
    with pytest.raises(cls, match=match) as ei:
        yield ei
    if operand is not None:
        assert ei.value.operand == operand, ei.value.operand


F16Q = {"pre_quant": (1.0, {"mode": "qf322f16_pre_scalar"})}


# ----------------------------------------------------------------------------- clause order and pairing


def test_clauses_in_canonical_order_are_accepted_and_out_of_order_rejected(env):
    env.l1_op(unit_flag="check_only", pre_quant=(1.0, {"mode": "qf322f16_pre_scalar"}),
              pre_relu={"mode": "normal_relu"}, nz2nd=True, sat=True)
    with raises(IllegalOperand, "out of canonical order", "pre_quant") as ei:
        env.l1_op(nz2nd=True, pre_quant=(1.0, {"mode": "qf322f16_pre_scalar"}))
    assert "unit_flag -> pre_quant -> pre_relu -> layout -> loop3 -> sat" in str(ei.value)
    with raises(IllegalOperand, "out of canonical order", "unit_flag"):
        env.l1_op(**F16Q, unit_flag="check_only")


@pytest.mark.parametrize("value", [({"mode": "qf322f16_pre_scalar"},), (1.0,), {"payload": 1.0}])
def test_pre_quant_requires_payload_and_mode_together(env, value):
    with raises(IllegalOperand, "payload and mode together", "pre_quant"):
        env.l1_op(pre_quant=value)
    env.l1_op(pre_quant={"payload": 1.0, "mode": "qf322f16_pre_scalar"})


def test_unknown_pre_quant_mode_lists_the_modes(env):
    with raises(IllegalOperand, "is not one of", "pre_quant(mode)") as ei:
        env.l1_op(pre_quant=(1.0, {"mode": "qf322f17_pre_scalar"}))
    assert "qf322f16_pre_scalar" in str(ei.value)


# ----------------------------------------------------------------------------- payload kinds


@pytest.mark.parametrize("payload", ["l1", "fb_s8", 1.0, 2])
def test_vector_modes_need_an_fb_pointer_of_f16_bf16_f32(env, payload):
    bad = {"l1": env.m.ptr("l1", "f32", 0x1000), "fb_s8": env.m.ptr("fb", "s8", 0)}.get(payload, payload)
    with raises(IllegalOperand, "requires a fb pointer with f16, bf16 or f32 elements", "pre_quant"):
        env.l1_op(pre_quant=(bad, {"mode": "qf322f16_pre_vec"}))
    env.l1_op(pre_quant=(env.fb, {"mode": "qf322f16_pre_vec"}))
    for dt, addr, one in (("f16", 0x400, 0x3C00), ("bf16", 0x600, 0x3F80)):   # the scale field is bits [15:0]
        env.l1_op(pre_quant=(fb_words(env.m, [one] * 32, addr=addr, dtype_name=dt), {"mode": "qf322f16_pre_vec"}))


@pytest.mark.parametrize("payload", [1, np.int8(1), True, "1.0", "fb"])
def test_scalar_modes_need_an_f16_bf16_f32_scalar(env, payload):
    bad = env.fb if payload == "fb" else payload
    with raises(IllegalOperand, "requires an f16, bf16 or f32 scalar payload", "pre_quant"):
        env.l1_op(pre_quant=(bad, {"mode": "qf322f16_pre_scalar"}))
    for good in (1.0, np.float16(1.0), ml_dtypes.bfloat16(1.0), np.float32(1.0)):
        env.l1_op(pre_quant=(good, {"mode": "qf322f16_pre_scalar"}))


def test_cast_modes_still_require_a_scalar_payload(env):
    env.l1_op(pre_quant=(0.0, {"mode": "f32_f16"}))
    with raises(IllegalOperand, "scalar payload", "pre_quant"):
        env.l1_op(pre_quant=(env.fb, {"mode": "f32_f16"}))


def test_shift_modes_take_an_integer_shift(env):
    env.l1_op("s16", "s32", pre_quant=(3, {"mode": "shifts322s16_scalar"}))
    with raises(IllegalOperand, "integer shift 1..16", "pre_quant"):
        env.l1_op("s16", "s32", pre_quant=(17, {"mode": "shifts322s16_scalar"}))


# ----------------------------------------------------------------------------- source / destination types


def test_pre_quant_source_must_be_f32_or_i32():
    m = Machine("Kirin9030")
    src, ss = load_acc(m, np.ones((16, 16), np.float16))
    pto.mte_l0c_l1(src, m.ptr("l1", "f16", 0), 16, 16, ss, 16)          # f16 accumulator, no pre_quant
    with raises(IllegalOperand, "source element type must be f32 or i32", "pre_quant"):
        pto.mte_l0c_l1(src, m.ptr("l1", "f16", 0), 16, 16, ss, 16, pre_quant=(0.0, {"mode": "no_convert"}))


@pytest.mark.parametrize("acc,dst,mode,rule", [
    ("s32", "f16", "qf322f16_pre_scalar", "takes f32 accumulators"),
    ("f32", "f16", "deqf16_scalar", "takes s32 accumulators"),
    ("f32", "bf16", "qf322f16_pre_scalar", "writes f16, not bf16"),
    ("s32", "s16", "req8_scalar", "writes s8/u8, not s16"),
    ("f32", "s32", "no_convert", "writes f32, not s32"),
])
def test_mode_must_match_source_and_destination(env, acc, dst, mode, rule):
    with raises(IllegalOperand, rule, "pre_quant"):
        env.l1_op(dst, acc, pre_quant=(1.0, {"mode": mode}))


@pytest.mark.parametrize("acc,dst,mode,fix", [
    ("f32", "f16", "deqf16_scalar", "f32 -> f16 is f32_f16 (legacy fixpipe fp322fp16), qf322f16_pre_scalar, "
                                    "qf322f16_pre_vec"),
    ("s32", "f16", "qf322f16_pre_scalar", "s32 -> f16 is deqf16_scalar (legacy int322fp16 with one scale), "
                                          "deqf16_vec (legacy int322fp16 with per-channel scales)"),
    ("s32", "f16", "qf322f16_pre_vec", "s32 -> f16 is deqf16_vec (legacy int322fp16 with per-channel scales), "
                                       "deqf16_scalar"),
    ("f32", "bf16", "qf322f16_pre_scalar", "f32 -> bf16 is f32_bf16, qf322bf16_pre_scalar, qf322bf16_pre_vec"),
    ("f32", "s32", "no_convert", "f32 -> s32 has no pre_quant mode on A2A3 AiCore; f32 accumulators take no_convert, f32_f16"),
])
def test_a_wrong_mode_names_the_modes_that_convert_the_accumulator_to_the_destination(env, acc, dst, mode, fix):
    """user440: an f32 -> f16 write-back given deqf16_scalar was told "pick the mode of your accumulator type
    (qf322* for f32, ...)", which hid f32_f16, the bit-exact replacement of legacy fp322fp16."""
    with raises(IllegalOperand, "pre_quant", "pre_quant") as ei:
        env.l1_op(dst, acc, pre_quant=(1.0, {"mode": mode}))
    assert "Fix: " in str(ei.value) and fix in str(ei.value), str(ei.value)


def test_a_src_stride_below_m_also_says_m_counts_rows_not_burst_len(env):
    """user440: legacy fixpipe's burst_len (32-byte units) pasted as %m gave 'src_stride 16 is smaller than the 32
    L0C rows ...' with a Fix about src_stride only; the Fix now also says what %m counts."""
    with raises(IllegalOperand, "smaller than the 32 L0C rows", "%src_stride") as ei:
        env.l1_op("f16", m=32, ds=512, **F16Q)
    assert ("pass the tile's allocated M (>= m); if m is the wrong one: it counts the tile's rows (legacy "
            "fixpipe's howo = burst_len*32/(16*sizeof(src))), not burst_len") in str(ei.value)


def test_conversions_need_pre_quant(env):
    env.l1_op("f32", "f32")
    with raises(IllegalOperand, "needs pre_quant", "%dst") as ei:
        env.l1_op("f16", "f32")
    assert "f32_f16" in str(ei.value)


def test_modes_absent_from_the_target_are_unsupported(env, env5):
    env5.l1_op("hif8", pre_quant=(1.0, {"mode": "qf322hif8_pre_scalar"}))
    with raises(UnsupportedOp, "does not exist on A2A3", "pre_quant"):
        env.l1_op("hif8", pre_quant=(1.0, {"mode": "qf322hif8_pre_scalar"}))
    with raises(UnsupportedOp, "does not exist on A5", "pre_quant"):
        env5.l1_op("s16", "s32", pre_quant=(3, {"mode": "shifts322s16_scalar"}))


def test_scales_must_be_positive_normal_fp19(env):
    for bad in (0.0, -1.0, float("inf"), 1e-39):
        with raises(IllegalOperand, "positive normal FP19", "pre_quant"):
            env.l1_op(pre_quant=(bad, {"mode": "qf322f16_pre_scalar"}))
    words = [Q.make_word(1.0, offset_bits=0)] * 32
    words[7] = Q.make_word(-2.0, offset_bits=0)
    fb = fb_words(env.m, words, addr=0x400)
    with raises(IllegalOperand, "channel 7", "pre_quant"):
        env.l1_op(pre_quant=(fb, {"mode": "qf322f16_pre_vec"}))


@pytest.mark.parametrize("bad,fix", [(-2.0, "fold the sign into the weights"), (-1e-39, "fold the sign"),
                                     (-0.0, "no zero scale"), (0.0, "no zero scale"), (float("inf"), "positive")])
def test_a_refused_scale_says_how_to_migrate_it(env, bad, fix):
    """A negative per-channel scale (legacy int322fp16 takes one; seed conv example) gets the migrator's Fix
    (fixpipe_compare.md differences item 3), in the scalar and the vector (FB word) form."""
    words = [Q.make_word(1.0, offset_bits=0)] * 32
    words[5] = Q.make_word(bad, offset_bits=0)
    fb = fb_words(env.m, words, addr=0x400)
    for payload, mode in ((fb, "qf322f16_pre_vec"), (bad, "qf322f16_pre_scalar")):
        with raises(IllegalOperand, "positive normal FP19", "pre_quant") as ei:
            env.l1_op(pre_quant=(payload, {"mode": mode}))
        assert fix in ei.value.hint, ei.value.hint
        assert ("keep a vector deq" in ei.value.hint) == (bad <= 0), ei.value.hint


def test_fb_rows_must_be_aligned(env):
    with raises(Misaligned, "128-byte aligned", "pre_quant"):
        env.l1_op(pre_quant=(env.fb + 8, {"mode": "qf322f16_pre_vec"}))
    with raises(Misaligned, "64-byte aligned", "pre_relu"):
        env.l1_op(**F16Q, pre_relu=(env.fb_relu + 8, {"mode": "vector_relu"}))


# ----------------------------------------------------------------------------- pre_relu and clip


@pytest.mark.parametrize("mode", ["no_relu", "normal_relu"])
def test_no_relu_and_normal_relu_take_no_payload(env, mode):
    env.l1_op(**F16Q, pre_relu={"mode": mode})
    with raises(IllegalOperand, "does not accept a payload", "pre_relu"):
        env.l1_op(**F16Q, pre_relu=(0.5, {"mode": mode}))


def test_scalar_relu_needs_a_float_scalar(env):
    env.l1_op(**F16Q, pre_relu=(np.float16(0.5), {"mode": "scalar_relu"}))
    with raises(IllegalOperand, "requires a payload", "pre_relu"):
        env.l1_op(**F16Q, pre_relu={"mode": "scalar_relu"})
    with raises(IllegalOperand, "scalar_relu requires an f16, bf16 or f32 scalar", "pre_relu"):
        env.l1_op(**F16Q, pre_relu=(env.fb_relu, {"mode": "scalar_relu"}))
    with raises(IllegalOperand, "positive normal FP19", "pre_relu"):
        env.l1_op(**F16Q, pre_relu=(-0.5, {"mode": "scalar_relu"}))


def test_vector_relu_needs_an_fb_pointer(env):
    env.l1_op(**F16Q, pre_relu=(env.fb_relu, {"mode": "vector_relu"}))
    with raises(IllegalOperand, "vector_relu requires a fb pointer", "pre_relu"):
        env.l1_op(**F16Q, pre_relu=(0.5, {"mode": "vector_relu"}))
    with raises(IllegalOperand, "vector_relu requires a fb pointer", "pre_relu"):
        env.l1_op(**F16Q, pre_relu=(env.m.ptr("ub", "f32", 0), {"mode": "vector_relu"}))


def test_pre_relu_requires_a_mode(env):
    with raises(IllegalOperand, "pre_relu requires mode", "pre_relu"):
        env.l1_op(**F16Q, pre_relu=(0.5,))


def test_clip_appears_only_inside_pre_relu(env):
    env.l1_op(**F16Q, pre_relu={"mode": "normal_relu", "clip": 6.0})
    with raises(UnknownName, "unknown clause 'clip'", "clip") as ei:
        env.l1_op(**F16Q, clip=6.0)
    assert "only inside pre_relu" in str(ei.value)


@pytest.mark.parametrize("dst,acc,quant,good,bad", [
    ("f16", "f32", "qf322f16_pre_scalar", 6.0, np.int8(6)),
    ("f16", "f32", "qf322f16_pre_scalar", np.float16(6.0), np.float32(6.0)),
    ("u8", "s32", "req8_scalar", 300, -1),
    ("u8", "s32", "req8_scalar", np.uint16(200), 6.5),
    ("s8", "s32", "req8_scalar", -5, 200),
    ("s8", "s32", "req8_scalar", np.int8(3), np.int16(3)),
    ("s16", "s32", "deqs16_scalar", 1000, 40000),
])
def test_clip_payload_must_match_the_destination_family(env5, dst, acc, quant, good, bad):
    env5.l1_op(dst, acc, pre_quant=(1.0, {"mode": quant}), pre_relu={"mode": "normal_relu", "clip": good})
    with raises(IllegalOperand, f"clip payload for a {dst} destination", "pre_relu(clip)"):
        env5.l1_op(dst, acc, pre_quant=(1.0, {"mode": quant}), pre_relu={"mode": "normal_relu", "clip": bad})


@pytest.mark.parametrize("dst,quant", [("f32", None), ("bf16", "qf322bf16_pre_scalar"), ("s32", None)])
def test_clip_is_limited_to_f16_u8_and_signed_4_8_16_bit(env, dst, quant):
    kw = {} if quant is None else {"pre_quant": (1.0, {"mode": quant})}
    with raises(IllegalOperand, "clip is supported for f16, ui8 and signed 4/8/16-bit", "pre_relu(clip)"):
        env.l1_op(dst, "s32" if dst == "s32" else "f32", **kw, pre_relu={"mode": "normal_relu", "clip": 1})


# ----------------------------------------------------------------------------- layouts, loop3, unit flag, sat


def test_nz2dn_requires_loop0_src_stride_and_nz2nd_takes_none(env):
    env.l1_op(**F16Q, nz2dn=1, ds=16)
    env.l1_op(**F16Q, nz2dn=(1,), ds=16)
    for bad in (True, ()):
        with raises(IllegalOperand, "nz2dn requires %loop0_src_stride", "nz2dn"):
            env.l1_op(**F16Q, nz2dn=bad, ds=16)
    with raises(IllegalOperand, r"loop0_src_stride must be an integer in \[1, 65535\]", "nz2dn"):
        env.l1_op(**F16Q, nz2dn=0, ds=16)
    with raises(IllegalOperand, "nz2nd does not accept %loop0_src_stride", "nz2nd"):
        env.l1_op(**F16Q, nz2nd=2)


def test_layout_clauses_are_mutually_exclusive(env):
    with raises(IllegalOperand, "mutually exclusive", "nz2dn"):
        env.l1_op(**F16Q, nz2nd=True, nz2dn=1)


def test_unit_flag_must_be_omitted_with_nz2dn_other_than_1(env):
    env.l1_op(unit_flag="check_and_clear", **F16Q, nz2dn=1, ds=16)
    env.l1_op(**F16Q, nz2dn=2, ss=32, ds=16)
    with raises(IllegalOperand, "unit_flag must be omitted", "unit_flag"):
        env.l1_op(unit_flag="check_only", **F16Q, nz2dn=2, ss=32, ds=16)
    with raises(IllegalOperand, "is not one of check_only, check_and_clear", "unit_flag"):
        env.l1_op(unit_flag="check_and_set", **F16Q)


def test_nz2nz_needs_an_f32_destination_and_no_loop3(env):
    env.l1_op("f32", nz2nz=True, ds=16 * 16)
    env.l1_op("f32", nz2nz=1, ds=16 * 8)
    with raises(IllegalOperand, "nz2nz requires an f32 destination", "nz2nz"):
        env.l1_op(**F16Q, nz2nz=True, ds=256)
    with raises(IllegalOperand, "nz2nz does not accept loop3", "loop3"):
        env.l1_op("f32", nz2nz=True, loop3=(2, 32, 512), ds=256)
    with raises(IllegalOperand, "split must be 0 or 1", "nz2nz"):
        env.l1_op("f32", nz2nz=2, ds=256)


def test_loop3_only_repeats_nz2nd_or_nz2dn(env):
    env.l1_op(**F16Q, nz2nd=True, loop3=(2, 32, 512))
    with raises(IllegalOperand, "loop3 repeats nz2nd or nz2dn", "loop3"):
        env.l1_op(**F16Q, loop3=(2, 32, 512), ds=256)
    with raises(IllegalOperand, r"%count must be an integer in \[1, 65535\]", "loop3"):
        env.l1_op(**F16Q, nz2nd=True, loop3=(0, 32, 512))


def test_saturation_clauses_are_one_keyword_with_three_values(env):
    for value in (True, False, "preserve_nan"):
        env.l1_op(**F16Q, sat=value)
    with raises(IllegalOperand, "sat takes True", "sat"):
        env.l1_op(**F16Q, sat="nosat")
    with raises(UnknownName, "unknown clause 'nosat'", "nosat") as ei:
        env.l1_op(**F16Q, nosat=True)
    assert "sat=False" in str(ei.value)


# ----------------------------------------------------------------------------- operands


@pytest.mark.parametrize("field,value,rule", [
    ("m", 0, r"%m must be an integer in \[1, 65535\]"),
    ("n", 4096, r"%n must be an integer in \[1, 4095\]"),
    ("ss", 24, "multiple of 16 L0C rows"),
    ("ds", 0, r"%dst_stride must be an integer in \[1, 4294967295\]"),
])
def test_shape_and_stride_operands_are_range_checked(env, field, value, rule):
    kw = {"m": 16, "n": 32, "ss": 16, "ds": 32, field: value}
    operand = {"m": "%m", "n": "%n", "ss": "%src_stride", "ds": "%dst_stride"}[field]
    with raises(IllegalOperand, rule, operand):
        env.l1_op(**F16Q, nz2nd=True, **kw)


def test_strides_too_small_for_the_tile_are_rejected(env):
    with raises(IllegalOperand, "smaller than the 20 L0C rows", "%src_stride") as ei:
        pto.mte_l0c_l1(env.acc, env.l1("f16"), 20, 32, 16, 32, **F16Q, nz2nd=True)
    assert "allocated M" in str(ei.value)
    with raises(IllegalOperand, "smaller than one destination row", "%dst_stride"):
        env.l1_op(**F16Q, nz2nd=True, ds=31)
    with raises(IllegalOperand, "smaller than one destination channel block", "%dst_stride"):
        env.l1_op(**F16Q, ds=16 * 16 - 1)


def test_pointer_spaces_and_accumulator_types(env):
    with raises(IllegalOperand, "%src must be an l0c pointer", "%src"):
        pto.mte_l0c_l1(env.l1("f32"), env.l1("f32"), 16, 32, 16, 32)
    with raises(IllegalOperand, "%dst must be a l1 pointer", "%dst"):
        pto.mte_l0c_l1(env.acc, env.m.ptr("ub", "f32", 0), 16, 32, 16, 32)
    bad_acc = env.m.ptr("l0c", "f16", 0)
    with raises(IllegalOperand, "not an L0C type of A2A3", "%src"):
        pto.mte_l0c_l1(bad_acc, env.l1("f16"), 16, 32, 16, 32)


def test_gm_hints_and_atomics(env):
    out = env.m.gm_alloc((16 * 32,), "f32", name="out")
    pto.mte_l0c_gm(env.acc, out, 16, 32, 16, 32, 3, 15, nz2nd=True, atomic={"type": "f32", "op": "max"})
    with raises(IllegalOperand, r"%sid must be an integer in \[0, 3\]", "%sid"):
        pto.mte_l0c_gm(env.acc, out, 16, 32, 16, 32, 4, 0, nz2nd=True)
    with raises(IllegalOperand, r"%l2_cache_ctrl must be an integer in \[0, 15\]", "%l2_cache_ctrl"):
        pto.mte_l0c_gm(env.acc, out, 16, 32, 16, 32, 0, 16, nz2nd=True)
    with raises(IllegalOperand, "atomic requires both type and op", "atomic"):
        pto.mte_l0c_gm(env.acc, out, 16, 32, 16, 32, 0, 0, nz2nd=True, atomic={"type": "f32"})
    with raises(IllegalOperand, "is not one of add, max, min", "atomic(op)"):
        pto.mte_l0c_gm(env.acc, out, 16, 32, 16, 32, 0, 0, nz2nd=True, atomic={"type": "f32", "op": "mul"})
    with raises(IllegalOperand, "must match the destination element type f32", "atomic"):
        pto.mte_l0c_gm(env.acc, out, 16, 32, 16, 32, 0, 0, nz2nd=True, atomic={"type": "f16", "op": "add"})
    with raises(UnknownName, "unknown clause 'atomic'", "atomic"):
        env.l1_op("f32", nz2nd=True, atomic={"type": "f32", "op": "add"})


def test_mte_l0c_ub_needs_dst_mode_and_an_a5_class_target(env, env5):
    ub = env5.m.ptr("ub", "f32", 0)
    pto.mte_l0c_ub(env5.acc, ub, 16, 32, 16, 32, dst_mode=1, nz2nd=True)
    with raises(IllegalOperand, "requires dst_mode", "dst_mode"):
        pto.mte_l0c_ub(env5.acc, ub, 16, 32, 16, 32, nz2nd=True)
    with raises(IllegalOperand, "sub_blockid must be 0 or 1", "dst_mode"):
        pto.mte_l0c_ub(env5.acc, ub, 16, 32, 16, 32, dst_mode=2, nz2nd=True)
    with raises(IllegalOperand, "is not one of split_m, split_n", "dst_mode"):
        pto.mte_l0c_ub(env5.acc, ub, 16, 32, 16, 32, dst_mode="split_k", nz2nd=True)
    with raises(IllegalOperand, "takes one of split_m, split_n or one %sub_blockid operand", "dst_mode"):
        pto.mte_l0c_ub(env5.acc, ub, 16, 32, 16, 32, dst_mode=True, nz2nd=True)
    with raises(IllegalOperand, "out of canonical order", "dst_mode"):
        pto.mte_l0c_ub(env5.acc, ub, 16, 32, 16, 32, nz2nd=True, dst_mode=0)
    with raises(UnsupportedOp, "does not exist on A2A3"):
        pto.mte_l0c_ub(env.acc, env.m.ptr("ub", "f32", 0), 16, 32, 16, 32, dst_mode=0, nz2nd=True)


@pytest.mark.parametrize("clauses", [{"pre_quant": (0.0, {"mode": "f32_f16"}), "nz2nd": True},
                                     {"pre_relu": {"mode": "normal_relu"}, "nz2nd": True},
                                     {"nz2dn": 1},
                                     {"nz2nd": True, "loop3": (1, 0, 0)}])
def test_dual_destination_allows_no_transform_clauses(env5, clauses):
    pto.mte_l0c_ub(env5.acc, env5.m.ptr("ub", "f32", 0), 16, 32, 16, 32, dst_mode="split_m", nz2nd=True)
    ub = env5.m.ptr("ub", "f16" if "pre_quant" in clauses else "f32", 0)
    with raises(IllegalOperand, "dual-destination split_m allows only the normal or nz2nd layout", "dst_mode"):
        pto.mte_l0c_ub(env5.acc, ub, 16, 32, 16, 32, dst_mode="split_m", **clauses)


def test_s4_destinations_need_even_element_runs(env5):
    x = np.zeros((2, 6), np.int32)
    src, ss = load_acc(env5.m, x, addr=0x8000)
    out = env5.m.gm_alloc((16,), "s4", name="s4out")
    pto.mte_l0c_gm(src, out, 2, 6, ss, 6, 0, 0, pre_quant=(1.0, {"mode": "req4_scalar"}), nz2nd=True)
    with raises(IllegalOperand, "whole bytes: %n must be even", "%dst"):
        pto.mte_l0c_gm(src, out, 2, 5, ss, 6, 0, 0, pre_quant=(1.0, {"mode": "req4_scalar"}), nz2nd=True)


def test_errors_carry_the_op_and_the_users_source_line(env):
    with pytest.raises(PtoError) as ei:
        env.l1_op(pre_quant=(1, {"mode": "qf322f16_pre_scalar"}))
    text = str(ei.value)
    assert text.startswith(__file__.rsplit("/", 1)[-1]) or __file__ in text
    assert "in `pto.mte_l0c_l1`: operand pre_quant:" in text and "Fix:" in text    # the op named once
    assert text.count("pto.mte_l0c_l1") == 1


class IRValue:
    """Stands for an SSA value of a program being recorded (not known until it runs)."""


def test_verify_checks_what_is_decidable_at_record_time(env):
    from pto_core.ops import registry
    spec = registry.get_op("mte_l0c_l1")
    v = IRValue()
    call = registry.make_call(spec, (env.acc, env.l1("f16"), v, v, v, v),
                              {"pre_quant": (v, {"mode": "qf322f16_pre_scalar"}), "nz2dn": (v,),
                               "loop3": (v, v, v), "sat": True})
    spec.verify(call, env.m.target)
    for clauses, rule, operand in (({"pre_quant": (v, {"mode": "f32_f16"}), "nz2nz": True},
                                    "nz2nz requires an f32 destination", "nz2nz"),
                                   ({"pre_quant": (v, {"mode": "deqf16_scalar"})}, "takes s32 accumulators",
                                    "pre_quant"),
                                   ({"pre_quant": (v, {"mode": "qf322f16_pre_scalar"}),
                                     "pre_relu": (v, {"mode": "normal_relu"})}, "does not accept a payload",
                                    "pre_relu")):
        bad = registry.make_call(spec, (env.acc, env.l1("f16"), v, v, v, v), clauses)
        with raises(IllegalOperand, rule, operand):
            spec.verify(bad, env.m.target)
