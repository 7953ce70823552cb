"""Uninitialised-read detection with the per-buffer summary of known fully-written ranges
(``Buffer.known``): a range an op may clear flags in is never answered from the summary."""
import numpy as np
import pytest

from pto_core import Machine, MachineOptions, UninitializedRead


@pytest.fixture
def m():
    return Machine("A2A3", options=MachineOptions(uninitialized="raise"))


def test_read_inside_a_written_range_passes_and_outside_fails(m):
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0x100)
    m.write(p, np.arange(64, dtype=np.uint8))
    ctx.begin_op("t.read", "V", None)
    assert ctx.read(p.byte_offset(8), 32, operand="%src").tolist() == list(range(8, 40))
    assert m.context(0).core.buffer("ub").known == [(0x100, 0x140)]
    with pytest.raises(UninitializedRead, match="byte 0x140"):
        ctx.read(p, 65, operand="%src")


def test_flags_cleared_through_a_write_span_are_seen_by_later_reads(m):
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0x100)
    m.write(p, np.arange(64, dtype=np.uint8))
    ctx.begin_op("t.read", "V", None)
    ctx.read(p, 64)                                   # all set: the range is known
    ctx.begin_op("t.move", "V", None)
    _, flags, _ = ctx.span_tracked(p, 16, 48, write=True, operand="%dst")
    flags[4:8] = False                                # moved undefined bytes in: bytes 0x114..0x117
    ctx.begin_op("t.read", "V", None)
    with pytest.raises(UninitializedRead, match="byte 0x114") as e:
        ctx.read(p, 64, operand="%src")
    assert e.value.operand == "%src"


def test_a_range_checked_while_an_op_holds_writable_flags_is_not_remembered(m):
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0)
    m.write(p, np.ones(128, dtype=np.uint8))
    ctx.begin_op("t.inplace", "V", None)
    _, flags, _ = ctx.span_tracked(p, 0, 128, write=True, operand="%dst")
    ctx.read(p, 128, operand="%src")                  # still all set here
    flags[100] = False                                # then the op clears one flag
    ctx.begin_op("t.read", "V", None)
    with pytest.raises(UninitializedRead, match="byte 0x64"):
        ctx.read(p, 128, operand="%src")


def test_read_span_flags_are_read_only(m):
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0)
    ctx.begin_op("t.read", "V", None)
    _, flags, _ = ctx.span_tracked(p, 0, 64, operand="%src")
    assert not flags.any()
    with pytest.raises(ValueError):
        flags[0] = True
