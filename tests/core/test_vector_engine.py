"""The shared execution model of the pto.ub.* ops (tik_api.md §9.1): geometry, masks, strides,
repeats, overlap ordering, untouched lanes, initialisation tracking and the common errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import (IllegalOperand, Machine, MachineOptions, Misaligned, OutOfBounds, UninitializedRead,
                      UnsupportedOp, pto)
from pto_core.ops import registry
from pto_core.ops import vector_engine as ve

import vector_ref as ref
from vector_harness import REGION, assert_same, bases, machine, masks, ub_bytes

SETTINGS = settings(max_examples=int(__import__("os").environ.get("VEC_EXAMPLES", 80)), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _add_ref(a, b):
    return ref.f16_round(float(a) + float(b))


@SETTINGS
@given(data=st.data(), repeat=st.integers(0, 6), unit=st.integers(0, 3),
       blk=st.lists(st.integers(0, 3), min_size=3, max_size=3),
       rep=st.lists(st.integers(0, 12), min_size=3, max_size=3), base=bases(3))
def test_vadd_f16_any_geometry_matches_sequential_reference(data, repeat, unit, blk, rep, base):
    """Random masks, strides, units and (possibly overlapping) operands vs the per-lane loop."""
    mask = data.draw(masks(128))
    m = machine("A2A3")
    before = ub_bytes(m).copy()
    d, a, b = (m.ptr("ub", "f16", x) for x in base)
    kw = {}
    if mask is not None:
        kw["mask"] = mask
    pto.ub.vadd(d, a, b, repeat, **kw, blk_stride=tuple(blk), rep_stride=tuple(rep), stride_unit=unit)
    want = before.copy()
    reps, lanes = ref.active_lanes(128, mask, repeat)
    ops = [dict(name="dst", base=base[0], dtype=np.dtype(np.float16), blk=blk[0], rep=rep[0], role="w"),
           dict(name="a", base=base[1], dtype=np.dtype(np.float16), blk=blk[1], rep=rep[1], role="r"),
           dict(name="b", base=base[2], dtype=np.dtype(np.float16), blk=blk[2], rep=rep[2], role="r")]
    ref.run_lanewise(want, ops, 128, lanes, _add_ref, unit=unit)
    assert_same(ub_bytes(m)[:REGION + 4096], want[:REGION + 4096], np.float16, "vadd")


@SETTINGS
@given(data=st.data(), repeat=st.integers(1, 5), blk=st.lists(st.integers(0, 2), min_size=3, max_size=3),
       rep=st.lists(st.integers(0, 9), min_size=3, max_size=3), base=bases(3))
def test_vmla_reads_its_destination_in_repeat_order(data, repeat, blk, rep, base):
    """dst is read and written: zero/small repeat strides accumulate exactly like the sequential loop."""
    mask = data.draw(masks(64))
    m = machine("A2A3")
    before = ub_bytes(m).copy()
    d, a, b = (m.ptr("ub", "f32", x) for x in base)
    pto.ub.vmla(d, a, b, repeat, mask=mask, blk_stride=tuple(blk), rep_stride=tuple(rep))
    want = before.copy()
    _, lanes = ref.active_lanes(64, mask, repeat)
    f32 = np.dtype(np.float32)
    ops = [dict(name="dst", base=base[0], dtype=f32, blk=blk[0], rep=rep[0], role="rw"),
           dict(name="a", base=base[1], dtype=f32, blk=blk[1], rep=rep[1], role="r"),
           dict(name="b", base=base[2], dtype=f32, blk=blk[2], rep=rep[2], role="r")]
    ref.run_lanewise(want, ops, 64, lanes, lambda dst, a, b: ref.round_to(float(a) * float(b) + float(dst), f32))
    assert_same(ub_bytes(m)[:REGION + 4096], want[:REGION + 4096], np.float32, "vmla")


@pytest.mark.parametrize("unit, blk, want_blocks", [(0, 0, range(8)), (1, 0, range(8)), (0, 2, range(0, 16, 2)),
                                                    (2, 0, range(8))])
def test_destination_block_stride_0_moves_one_block(unit, blk, want_blocks):
    """ve.DST_BLOCK_STRIDE_ZERO_IS_ONE: a written operand's block stride 0 (units 0/1, where it is a stride) acts
    as 1; under unit 2 it is a gap, 0 = contiguous. The 8 blocks of a full f32 vector_dup land on distinct blocks."""
    assert ve.DST_BLOCK_STRIDE_ZERO_IS_ONE
    m = machine("A2A3")
    before = ub_bytes(m).copy()
    pto.ub.vector_dup(m.ptr("ub", "f32", 0), 2.5, 1, blk_stride=(blk,), rep_stride=(8,), stride_unit=unit)
    got = ub_bytes(m)[:32 * 16].view(np.float32).reshape(16, 8)
    want = before[:32 * 16].view(np.float32).reshape(16, 8).copy()
    want[list(want_blocks)] = 2.5
    assert not np.array_equal(want, before[:32 * 16].view(np.float32).reshape(16, 8))
    np.testing.assert_array_equal(got, want)


def test_accumulate_with_zero_repeat_strides_is_sequential():
    """The one documented legal overlap: dst == src1 with both rep strides 0 sums the src0 rows."""
    m = Machine("A2A3")
    acc, x = m.ptr("ub", "f32", 0), m.ptr("ub", "f32", 1024)
    rows = np.arange(4 * 64, dtype=np.float32).reshape(4, 64)
    m.write(acc, np.ones(64, np.float32))
    m.write(x, rows)
    pto.ub.vadd(acc, x, acc, 4, rep_stride=(0, 8, 0))
    np.testing.assert_array_equal(m.read(acc, 64), 1 + rows.sum(axis=0))


def test_shifted_in_place_copy_propagates_like_hardware():
    """dst one repeat ahead of src: every repeat reads what the previous one wrote."""
    m = Machine("A2A3")
    buf = m.ptr("ub", "s32", 0)
    m.write(buf, np.arange(64 * 5, dtype=np.int32))
    zero = m.ptr("ub", "s32", 4096)
    m.write(zero, np.zeros(64, np.int32))
    pto.ub.vadd(buf + 64, buf, zero, 4, rep_stride=(8, 8, 0))   # row r+1 = row r + 0, in order
    out = m.read(buf, 64 * 5).reshape(5, 64)
    assert (out == np.arange(64)).all()


def test_plan_chunks_only_splits_when_needed():
    from pto_core import dtype
    d = dtype("f32")
    m = Machine("A2A3")
    lanes = ve.Lanes(4, 64, None, 64)
    s_w = ve.vector_stream("dst", d, "w", par=64, lanes=lanes, blk=1, rep=8, unit=0)
    s_r = ve.vector_stream("src", d, "r", par=64, lanes=lanes, blk=1, rep=8, unit=0)
    p0, p1 = m.ptr("ub", "f32", 0), m.ptr("ub", "f32", 256)
    assert ve.plan_chunks((s_w, s_r), (p0, p0), 4) == ((0, 4),)          # in place, same lanes
    assert ve.plan_chunks((s_w, s_r), (p0, m.ptr("ub", "f32", 8192)), 4) == ((0, 4),)
    assert ve.plan_chunks((s_w, s_r), (p1, p0), 4) == ((0, 1), (1, 2), (2, 3), (3, 4))   # dst ahead by one repeat
    assert ve.plan_chunks((s_w, s_r), (p0, p1), 4) == ((0, 4),)          # dst behind: write-after-read only


def test_masked_off_lanes_keep_their_bytes():
    m = Machine("A2A3")
    d, a = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 512)
    m.write(d, np.full(256, -7, np.float16))
    m.write(a, np.ones(256, np.float16))
    pto.ub.vadds(d, a, 1.0, 2, mask=(0, 0b1010))
    out = m.read(d, 256)
    expect = np.full(256, -7, np.float16)
    expect[[1, 3, 129, 131]] = 2
    np.testing.assert_array_equal(out, expect)


def test_only_touched_blocks_are_accessed():
    """A count mask of 16 f16 lanes touches one block per repeat, so a tail at the end of UB is legal."""
    m = Machine("A2A3")
    size = m.target.sizes.ub
    d = m.ptr("ub", "f16", size - 32)
    m.write(d, np.zeros(16, np.float16))
    pto.ub.vadds(d, d, 2.0, 1, mask=16)
    np.testing.assert_array_equal(m.read(d, 16), np.full(16, 2, np.float16))
    with pytest.raises(OutOfBounds, match="outside ub") as e:
        pto.ub.vadds(d, d, 2.0, 1, mask=17)
    assert e.value.operand in ("src", "dst")


def test_counter_mode_tail_repeat_touches_only_its_blocks():
    """counter=144 f16: repeat 0 has 128 lanes, repeat 1 only 16 (one block), so an operand whose
    second repeat is the last 32 B of UB is legal; one more element is out of bounds. The
    extent used to count the whole last repeat (8 blocks) and refused the legal kernel."""
    m = Machine("A2A3")
    size = m.target.sizes.ub
    d = m.ptr("ub", "f16", size - 288)
    m.write(d, np.arange(144, dtype=np.float16))
    pto.ub.vadds(d, d, 1.0, 1, counter=144)
    np.testing.assert_array_equal(m.read(d, 144), np.arange(144, dtype=np.float16) + 1)
    s32 = m.ptr("ub", "s32", size - 256 - 64)    # 64 + 8 s32 lanes: the tail is one block
    m.write(s32, np.arange(72, dtype=np.int32))
    pto.ub.vmuls(s32, s32, 3, 1, counter=72)
    np.testing.assert_array_equal(m.read(s32, 72), np.arange(72, dtype=np.int32) * 3)
    with pytest.raises(OutOfBounds, match="outside ub"):
        pto.ub.vadds(d, d, 1.0, 1, counter=145)


def test_uninitialised_reads_only_count_active_lanes():
    m = Machine("A2A3", options=MachineOptions(uninitialized="raise"))
    d, a = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024)
    m.write(a, np.ones(8, np.float16))                       # only lanes 0..7 initialised
    pto.ub.vabs(d, a, 1, mask=8)
    with pytest.raises(UninitializedRead, match="nothing wrote") as e:
        pto.ub.vabs(d, a, 1, mask=9)
    assert e.value.operand == "src"
    # gapped destination: only written lanes become initialised
    pto.ub.vabs(d, a, 1, mask=8, blk_stride=(2, 1))
    ub = m.context(0).core.buffer("ub")
    assert ub.written[0:16].all() and not ub.written[16:32].any()


def test_counter_mode_runs_ceil_repeats_with_a_tail():
    m = Machine("A2A3")
    d, a = m.ptr("ub", "f32", 0), m.ptr("ub", "f32", 4096)
    m.write(d, np.full(256, -1, np.float32))
    m.write(a, np.arange(256, dtype=np.float32))
    pto.ub.vadds(d, a, 1.0, 99, counter=150)                 # repeat operand ignored
    out = m.read(d, 256)
    np.testing.assert_array_equal(out[:150], np.arange(150) + 1)
    assert (out[150:] == -1).all()


def test_counter_mode_is_a_count_on_v100():
    m = Machine("Ascend310")
    d, a = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 4096)
    m.write(d, np.zeros(256, np.float16))
    m.write(a, np.ones(256, np.float16))
    pto.ub.vadds(d, a, 1.0, 2, counter=5)
    out = m.read(d, 256)
    assert (out[[0, 4, 128, 132]] == 2).all() and out[5] == 0 and out[133] == 0
    with pytest.raises(IllegalOperand, match="outside") as e:
        pto.ub.vadds(d, a, 1.0, 2, counter=300)
    assert e.value.operand == "counter"


def test_b8_four_word_mask():
    m = Machine("Ascend310B1")
    d, a = m.ptr("ub", "s8", 0), m.ptr("ub", "s8", 512)
    m.write(d, np.zeros(256, np.int8))
    m.write(a, np.ones(256, np.int8))
    pto.ub.vadd(d, a, a, 1, mask=(1 << 63, 0, 0, 1))
    out = m.read(d, 256)
    assert out[0] == 2 and out[255] == 2 and out[1:255].sum() == 0


@pytest.mark.parametrize("mask, match, operand", [
    (0, "outside", "mask"), (129, "outside", "mask"), ((0, 0), "no lane", "mask"),
    ((1, 2, 3), "1 \\(count\\)", "mask"), ((-1, 1), "outside", "mask(hi)"),
])
def test_mask_errors(mask, match, operand):
    m = Machine("A2A3")
    p = m.ptr("ub", "f16", 0)
    with pytest.raises(IllegalOperand, match=match) as e:
        pto.ub.vadd(p, p, p, 1, mask=mask)
    assert e.value.operand == operand


def test_mask_width_errors():
    m = Machine("A2A3")
    p32 = m.ptr("ub", "f32", 0)
    with pytest.raises(IllegalOperand, match="high mask word must be 0"):
        pto.ub.vadd(p32, p32, p32, 1, mask=(1, 1))
    with pytest.raises(IllegalOperand, match="outside \\[1, 64\\]"):
        pto.ub.vadd(p32, p32, p32, 1, mask=65)
    p8 = Machine("Ascend310B1").ptr("ub", "s8", 0)
    with pytest.raises(IllegalOperand, match="4-word"):
        pto.ub.vadd(p8, p8, p8, 1, mask=(1, 1))


@pytest.mark.parametrize("kw, operand, limit", [
    ({"blk_stride": (256, 1, 1)}, "blk_stride(dst)", "[0, 255]"),
    ({"rep_stride": (8, 256, 8)}, "rep_stride(src0)", "[0, 255]"),
    ({"stride_unit": 4}, "stride_unit", "[0, 3]"),
])
def test_stride_errors(kw, operand, limit):
    m = Machine("A2A3")
    p = m.ptr("ub", "f16", 0)
    with pytest.raises(IllegalOperand) as e:
        pto.ub.vadd(p, p, p, 1, **kw)
    assert e.value.operand == operand and e.value.limit == limit


def test_repeat_range():
    m = Machine("A2A3")
    p = m.ptr("ub", "f16", 0)
    pto.ub.vadd(p, p, p, 0)                       # no-op, touches nothing
    with pytest.raises(IllegalOperand, match="outside \\[0, 255\\]") as e:
        pto.ub.vadd(p, p, p, 256)
    assert e.value.operand == "repeat"
    with pytest.raises(IllegalOperand, match="integer"):
        pto.ub.vadd(p, p, p, 1.5)


def test_operands_must_be_aligned_ub():
    m = Machine("A2A3")
    p = m.ptr("ub", "f16", 0)
    with pytest.raises(Misaligned, match="32-byte") as e:
        pto.ub.vadd(p, p + 8, p, 1)
    assert e.value.operand == "src0"
    with pytest.raises(IllegalOperand, match="must be in ub") as e:
        pto.ub.vadd(p, m.ptr("l1", "f16", 0), p, 1)
    assert e.value.operand == "src0"


def test_unsupported_dtype_names_the_chip():
    m = Machine("Ascend310")
    p = m.ptr("ub", "s16", 0)
    with pytest.raises(UnsupportedOp, match="Ascend310 does not support vadd for s16") as e:
        pto.ub.vadd(p, p, p, 1)
    assert "f16" in e.value.limit
    q = m.ptr("ub", "f16", 0)
    with pytest.raises(UnsupportedOp, match="Ascend310 has no vdiv instruction"):
        pto.ub.vdiv(q, q, q, 1)


def test_dtype_mismatch_is_rejected():
    m = Machine("A2A3")
    with pytest.raises(IllegalOperand, match="differs") as e:
        pto.ub.vadd(m.ptr("ub", "f16", 0), m.ptr("ub", "f32", 0), m.ptr("ub", "f16", 0), 1)
    assert e.value.operand == "src0"


def test_clause_order_and_exclusivity_follow_the_registry():
    m = Machine("A2A3")
    p = m.ptr("ub", "f32", 0)
    with pytest.raises(IllegalOperand, match="mutually exclusive"):
        pto.ub.vadds(p, p, 1.0, 1, mask=3, counter=3)
    with pytest.raises(IllegalOperand, match="canonical order"):
        pto.ub.vadds(p, p, 1.0, 1, rep_stride=(8, 8), mask=3)


def test_namespace_and_signature():
    spec = registry.get_op("pto.ub.vadd")
    assert spec.asm_name == "pto.ub.vadd"
    assert "vadd" in dir(pto.ub) and "ub" in dir(pto)
    assert pto.ub.vadd.__qualname__ == "pto.ub.vadd"
    assert "[mask]" in spec.signature() and "[rep_stride]" in spec.signature()
    with pytest.raises(AttributeError):
        pto.ub.no_such_op


@SETTINGS
@given(repeat=st.integers(1, 6), nb=st.integers(1, 8),
       blocks=st.lists(st.lists(st.integers(0, 24), min_size=8, max_size=8), min_size=3, max_size=3),
       reps=st.lists(st.integers(0, 4), min_size=3, max_size=3), same_list=st.booleans())
def test_va_needs_serial_is_exactly_a_later_read_or_a_double_write(repeat, nb, blocks, reps, same_list):
    """`va_needs_serial` against its definition on every (repeat, block) pair: a read of a block that an
    earlier repeat writes, or one block written by two repeats, needs repeat-by-repeat execution."""
    m = Machine("Ascend910")
    lanes = ve.Lanes(repeat, nb * 8, None, 64)
    f32 = m.ptr("ub", "f32", 0).dtype
    roles = ("w", "r", "r")
    if same_list:                              # in place: the destination list is also a source list
        blocks[2], reps[2] = blocks[0], reps[0]
    streams = tuple(ve.va_stream(nm, f32, role, par=64, lanes=lanes, rep=r)
                    for nm, role, r in zip(("dst", "a", "b"), roles, reps))
    lists = tuple(tuple(m.ptr("ub", "f32", 32 * b) for b in blk) for blk in blocks)
    written, reads = {}, []
    double = False
    for r in range(repeat):
        for s, blk, rep in zip(streams, blocks, reps):
            for j in range(nb):
                at = blk[j] + r * rep
                if s.writes:
                    double |= at in written and written[at] != r     # one repeat stores in block order
                    written.setdefault(at, r)
                else:
                    reads.append((at, r))
    want = double or any(written.get(at, repeat) < r for at, r in reads)
    assert ve.va_needs_serial(streams, lists, repeat) == want


def test_counter_zero_is_a_no_op():
    """COUNTER_ZERO_AT_RUN_TIME_IS_NOOP (tik_api.md §9.1: repeats = ceil(count/PAR), a run-time repeat count of
    0 is a no-op): counter=0 reads and writes nothing, even from unwritten UB (no UninitializedRead), and the
    ops around it are unchanged; chips without counter mode still read it as a normal-mode count 1..PAR."""
    m = Machine("A2A3", options=MachineOptions(uninitialized="raise"))
    d, a, junk = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 4096), m.ptr("ub", "f16", 8192)
    m.write(d, np.full(256, -1, np.float16))
    m.write(a, np.arange(256, dtype=np.float16))
    pto.ub.vadds(d, a, 1.0, 1, counter=5)
    pto.ub.vadds(d, junk, 1.0, 1, counter=0)               # junk was never written
    pto.ub.vmuls(m.ptr("ub", "f16", 256), a, 2.0, 1, counter=3)
    out = m.read(d, 256)
    np.testing.assert_array_equal(out[:5], np.arange(5) + 1)
    np.testing.assert_array_equal(out[128:131], np.arange(3) * 2)
    assert (out[5:128] == -1).all() and (out[131:] == -1).all()
    assert ve.COUNTER_ZERO_AT_RUN_TIME_IS_NOOP
    v1 = Machine("Ascend310")
    d1 = v1.ptr("ub", "f16", 0)
    v1.write(d1, np.zeros(128, np.float16))
    with pytest.raises(IllegalOperand, match="outside") as e:
        pto.ub.vadds(d1, d1, 1.0, 1, counter=0)
    assert e.value.operand == "counter"
