"""Every chip's ``VectorCore`` uses its own vector dtype table (``[VectorCoreintrinsicDtypeMap]``).

* A table check: for every SoC table of the facade with a vector-core map, the PTO family chosen for
  ``core_type="VectorCore"`` (`pto_core.vector_isa.CHIP_FAMILY_AIV`) follows that map wherever it differs
  from the AI core map (named choices aside), so a chip whose vector core lists something else cannot be
  left on the AI core table unnoticed.
* Kernels per newly enabled entry class (BS9SX1AA vector-core conversions and int32 vcmpv_eq;
  Ascend310B1 vector-core int8 vmin; Ascend310P1 vector-core int16 vrelu) with exhaustive value sweeps
  against numpy, and the failing counterparts (AI core, undocumented narrowing rows, 910B int16 vcmp).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core import vector_isa
from pto_core.errors import UnsupportedOp
from pto_core.targets import get_target, vector_core_variant
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.data import soc_v200, soc_v220, soc_v300

from .helpers import raises_tik
from .vec_helpers import vec_kernel


@pytest.fixture(autouse=True)
def _restore_chip():
    yield
    set_current_compile_soc_info("Ascend310")


# ------------------------------------------------------------------ the tables

_SHORT = {"float16": "f16", "float32": "f32", "int32": "s32", "int16": "s16", "uint16": "u16", "uint32": "u32",
          "int8": "s8", "uint8": "u8", "bfloat16": "bf16", "int64": "s64", "uint64": "u64"}
#: PTO instruction name -> the ini key where the two spell it differently.
_INI_NAME = {"vsort32": "vbitsort32", "vmrgsort": "vmrgsort4v2", "vbcb": "vbrcb"}
#: Named choices (migration_guide/tik_vector.md §4): ini entries the simulator rejects on purpose.
_REJECTED = {("Ascend310P3", "vshl"): {"f16", "f32"}, ("Ascend610", "vshl"): {"f16", "f32"}}


def _ini_codes(instr, row):
    if row is None:
        return None
    codes = {_SHORT.get(c.strip(), c.strip()) for c in row.split(",") if c.strip() and c.strip() != '""'}
    if instr in ("vgatherb", "vbcb"):  # dst/src pairs of one type
        codes = {c[:len(c) // 2] if c[:len(c) // 2] * 2 == c else c for c in codes}
    if instr in ("vaxpy", "vmla"):  # the repeat form takes the dst-first triples
        codes = {c for c in codes if len(c) > 3}
    return codes


def _vector_core_socs():
    for mod in (soc_v200, soc_v220, soc_v300):
        for soc, table in mod.SOCS.items():
            if table.get("VectorCoreintrinsicDtypeMap"):
                yield soc, table


@pytest.mark.parametrize("soc,table", list(_vector_core_socs()), ids=lambda v: v if isinstance(v, str) else "")
def test_vector_core_family_follows_the_vector_core_ini_map(soc, table):
    aic_map, aiv_map = table["AICoreintrinsicDtypeMap"], table["VectorCoreintrinsicDtypeMap"]
    aic = vector_isa.FAMILIES[vector_isa.family_of(get_target(soc))]
    aiv = vector_isa.FAMILIES[vector_isa.family_of(vector_core_variant(get_target(soc)))]
    for instr in set(aic) | set(aiv):
        key = _INI_NAME.get(instr, instr)
        ini_aic, ini_aiv = _ini_codes(instr, aic_map.get(key)), _ini_codes(instr, aiv_map.get(key))
        pto_aiv = set(aiv.get(instr, ()))
        if ini_aiv is not None:
            ini_aiv -= _REJECTED.get((soc, instr), set())
        if ini_aic != ini_aiv:
            assert pto_aiv == (ini_aiv or set()), (soc, instr, sorted(pto_aiv), sorted(ini_aiv or ()))
        else:  # the maps agree: the vector core keeps the AI core's entry (or follows its own map exactly)
            assert pto_aiv in (set(aic.get(instr, ())), ini_aiv or set()), (soc, instr)


def test_chip_wide_behaviour_follows_the_base_family():
    for soc in vector_isa.CHIP_FAMILY_AIV:
        aic, aiv = get_target(soc), vector_core_variant(get_target(soc))
        assert vector_isa.base_family(aiv) == vector_isa.family_of(aic)
        assert vector_isa.has_counter_mode(aiv) == vector_isa.has_counter_mode(aic)
        assert vector_isa.gather_counter_per_repeat(aiv) == vector_isa.gather_counter_per_repeat(aic)


# ------------------------------------------------------------------ kernels

def _convert(chip, core, src, dst_dtype, mode, fill):
    """``vec_conv`` of every element of ``src`` (whole repeats) on ``chip``/``core``; dst starts at ``fill``."""
    dst = np.full(src.size, fill, dst_dtype)
    big = max(src.itemsize, dst.itemsize)
    par = 256 // big
    assert src.size % par == 0

    def body(ti, ub):
        done = 0
        while done < src.size:
            rep = min(255, (src.size - done) // par)
            ti.vec_conv(par, mode, ub["d"][done:], ub["s"][done:], rep, par * dst.itemsize // 32,
                        par * src.itemsize // 32)
            done += rep * par
    set_current_compile_soc_info(chip, core_type=core)
    return vec_kernel({"s": src, "d": dst}, body)["d"]


def _all(dtype):
    info = np.iinfo(dtype)
    return np.arange(info.min, info.max + 1, dtype=np.int64).astype(dtype)


@pytest.mark.parametrize("src_t,dst_t,fill", [(np.uint8, np.uint16, 999), (np.int8, np.int16, 999),
                                              (np.uint16, np.uint32, 7), (np.int16, np.int32, 7)])
def test_bs9_vector_core_integer_widening_every_value(src_t, dst_t, fill):
    src = _all(src_t)
    got = np.concatenate([_convert("BS9SX1AA", "VectorCore", part, dst_t, "", fill)
                          for part in np.split(src, max(1, src.size // 16384))])
    assert got.dtype == dst_t and np.array_equal(got.astype(np.int64), src.astype(np.int64))


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(-2 ** 31, 2 ** 31 - 1), min_size=64, max_size=64))
def test_bs9_vector_core_s32_to_s16_saturates(xs):
    src = np.array(xs, np.int32)
    src[:6] = [-2 ** 31, 2 ** 31 - 1, 32767, 32768, -32768, -32769]
    got = _convert("BS9SX1AA", "VectorCore", src, np.int16, "", 5)
    assert np.array_equal(got, np.clip(src.astype(np.int64), -32768, 32767).astype(np.int16))


def _f16_all():
    return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _round_sat(x, lo, hi, fn=np.rint):
    x = x.astype(np.float64)
    out = np.where(np.isnan(x), 0.0, fn(np.where(np.isnan(x), 0.0, x)))
    return np.clip(out, lo, hi)


@pytest.mark.parametrize("dst_t,mode", [(np.int16, ""), (np.int8, "round"), (np.uint8, "round")])
def test_bs9_vector_core_f16_to_int_every_bit_pattern(dst_t, mode):
    src = _f16_all()
    info = np.iinfo(dst_t)
    got = np.concatenate([_convert("BS9SX1AA", "VectorCore", part, dst_t, mode, 3) for part in np.split(src, 2)])
    assert np.array_equal(got, _round_sat(src, info.min, info.max).astype(dst_t))


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-60000, max_value=60000),
                min_size=64, max_size=64))
def test_bs9_vector_core_f32_to_f16_round(xs):
    src = np.array(xs, np.float32)
    src[:3] = [np.float32(1 + 2 ** -11), np.float32(1 + 3 * 2 ** -11), np.float32(0.5 + 2 ** -12)]
    got = _convert("BS9SX1AA", "VectorCore", src, np.float16, "round", 0.75)
    assert np.array_equal(got.view(np.uint16), src.astype(np.float16).view(np.uint16))  # numpy casts RNE


def test_bs9_vector_core_s16_to_f32_every_value():
    src = _all(np.int16)
    got = np.concatenate([_convert("BS9SX1AA", "VectorCore", p, np.float32, "", 0.25) for p in np.split(src, 2)])
    assert np.array_equal(got, src.astype(np.float32))


@pytest.mark.parametrize("src_t,dst_t", [(np.uint16, np.uint8), (np.uint32, np.uint16), (np.uint32, np.int16),
                                         (np.int32, np.uint16), (np.int16, np.uint32)])
def test_bs9_vector_core_undocumented_rows_raise(src_t, dst_t):
    with raises_tik(UnsupportedOp, match="not modelled: .*no public source"):
        _convert("BS9SX1AA", "VectorCore", np.zeros(128, src_t), dst_t, "", 1)


def test_bs9_vector_core_rows_are_not_on_its_ai_core_and_deq_is_not_on_its_vector_core():
    with raises_tik(UnsupportedOp, match="u82u16"):
        _convert("BS9SX1AA", "AiCore", np.zeros(128, np.uint8), np.uint16, "", 1)
    set_current_compile_soc_info("BS9SX1AA", core_type="VectorCore")
    with raises_tik(UnsupportedOp):
        vec_kernel({"s": np.arange(64, dtype=np.int32), "d": np.zeros(64, np.float16)},
                   lambda ti, ub: ti.vec_conv(64, "", ub["d"], ub["s"], 1, 4, 8, deqscale=1.0))


def test_bs9_vector_core_int32_compare():
    a = (np.arange(64, dtype=np.int32) * 40503) % 11 - 5
    b = (np.arange(64, dtype=np.int32) * 7) % 11 - 5
    set_current_compile_soc_info("BS9SX1AA", core_type="VectorCore")
    out = vec_kernel({"a": a, "b": b, "m": np.full(32, 0xAA, np.uint8)},
                     lambda ti, ub: ti.vec_cmpv_eq(ub["m"], ub["a"], ub["b"], 1, 8, 8))
    assert np.array_equal(out["m"][:8], np.packbits(a == b, bitorder="little"))
    set_current_compile_soc_info("BS9SX1AA", core_type="AiCore")
    with raises_tik(UnsupportedOp):
        vec_kernel({"a": a, "b": b, "m": np.zeros(32, np.uint8)},
                   lambda ti, ub: ti.vec_cmpv_eq(ub["m"], ub["a"], ub["b"], 1, 8, 8))


@pytest.mark.parametrize("dt", [np.int8, np.uint8])
def test_310b_vector_core_int8_vmin_every_pair(dt):
    vals = _all(dt)
    a, b = np.repeat(vals, 256), np.tile(vals, 256)
    set_current_compile_soc_info("Ascend310B1", core_type="VectorCore")
    out = vec_kernel({"a": a, "b": b, "d": np.full(a.size, 3, dt)},
                     lambda ti, ub: [ti.vec_min(256, ub["d"][k * 255 * 256:], ub["a"][k * 255 * 256:],
                                                ub["b"][k * 255 * 256:], n, 8, 8, 8)
                                     for k, n in ((0, 255), (1, 1))])
    assert np.array_equal(out["d"], np.minimum(a, b))


def test_310b_ai_core_int8_vmin_raises():
    set_current_compile_soc_info("Ascend310B1", core_type="AiCore")
    a = np.zeros(256, np.int8)
    with raises_tik(UnsupportedOp, match="int8"):
        vec_kernel({"a": a, "b": a, "d": a}, lambda ti, ub: ti.vec_min(256, ub["d"], ub["a"], ub["b"], 1, 8, 8, 8))


def test_310p1_vector_core_int16_vrelu_every_value_and_not_on_310p3():
    src = _all(np.int16)
    set_current_compile_soc_info("Ascend310P1", core_type="VectorCore")
    out = vec_kernel({"a": src, "d": np.full(src.size, 5, np.int16)},
                     lambda ti, ub: [ti.vec_relu(128, ub["d"][k * 255 * 128:], ub["a"][k * 255 * 128:], n, 8, 8)
                                     for k, n in ((0, 255), (1, 255), (2, 2))])
    assert np.array_equal(out["d"], np.maximum(src, 0))
    set_current_compile_soc_info("Ascend310P3", core_type="VectorCore")
    with raises_tik(UnsupportedOp, match="int16"):
        vec_kernel({"a": src[:128], "d": np.zeros(128, np.int16)},
                   lambda ti, ub: ti.vec_relu(128, ub["d"], ub["a"], 1, 8, 8))


def test_910b_int16_vcmp_is_ai_core_only():
    a = (np.arange(128, dtype=np.int16) % 5) - 2
    b = (np.arange(128, dtype=np.int16) % 3) - 1

    def body(ti, ub):
        ti.mov_cmpmask_to_tensor(ub["m"], ti.vcmp_lt(128, ub["a"], ub["b"], 1, 1))
    set_current_compile_soc_info("Ascend910B1", core_type="AiCore")
    out = vec_kernel({"a": a, "b": b, "m": np.full(32, 0xAA, np.uint8)}, body)
    assert np.array_equal(out["m"][:16], np.packbits(a < b, bitorder="little"))
    set_current_compile_soc_info("Ascend910B1", core_type="VectorCore")
    with raises_tik(UnsupportedOp, match="int16"):
        vec_kernel({"a": a, "b": b, "m": np.zeros(32, np.uint8)}, body)


def test_vcmpv_bits_may_fill_the_rest_of_the_destination_tensors_32_byte_block():
    """VCMPV_DST_BLOCK_TAIL: 64 f32 lanes give 8 bytes of bits; CANN's roi_pooling_with_arg_max writes them into
    a 1-element uint16 tensor on Ascend910B1 (TIK checks only vcmpv's sources). The bytes land in the rest of
    that tensor's 32-byte block, which its allocation owns; past the block it is still a tensor overflow."""
    from pto_core.errors import OutOfBounds
    from tbe import tik
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a = ti.Tensor("float32", (64,), name="a", scope=tik.scope_gm)
    o = ti.Tensor("uint16", (16,), name="o", scope=tik.scope_gm)
    au = ti.Tensor("float32", (64,), name="au", scope=tik.scope_ubuf)
    m = ti.Tensor("uint16", (1,), name="m", scope=tik.scope_ubuf)
    ou = ti.Tensor("uint16", (16,), name="ou", scope=tik.scope_ubuf)
    ti.data_move(au, a, 0, 1, 8, 0, 0)
    ti.vec_cmpv_ge(m, au, au, 1, 8, 8)              # 8 bytes into a 2-byte tensor: inside its block
    ti.vector_dup(16, ou, 0, 1, 1, 8)
    ou[0].set_as(m[0])
    ti.data_move(o, ou, 0, 1, 1, 0, 0)
    ti.BuildCCE("cmpv_tail", [a], [o])
    out, = ti.tikdb.start_debug({"a": np.arange(64, dtype=np.float32)}, interactive=False)
    assert out[0] == 0xFFFF and not (out[1:] != 0).any()
    big = ti.Tensor("float32", (64 * 5,), name="big", scope=tik.scope_ubuf)
    with raises_tik(OutOfBounds, match=r"expected elements nums: 20, actual elements nums: 16 \(tensor 'm', 1 "
                                       r"plus the rest of its last 32-byte block\)"):
        ti.vec_cmpv_ge(m, big, big, 5, 8, 8)        # 40 bytes: past the block
