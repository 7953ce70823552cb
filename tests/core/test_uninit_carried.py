"""Reports of bytes nothing wrote name the moves that carried them (`pto_core.memory.CARRIED_NOTES`).

h_user440: a pto.mte_gm_l1 given TIK's 32-byte block count as its byte length left most of an L1 tile
unwritten; the only report named the pto.mad that used the L0A copy of it, two ops later, with no way back."""
import numpy as np
import pytest

from pto_core import Machine, MachineOptions, memory, pto
from pto_core.errors import UninitializedRead


def _run(load_bytes, refill=False, options=None):
    m = Machine("A2A3", options=options)
    g = m.gm_tensor(np.ones(256, np.float16), name="g")
    l1, ub = m.ptr("l1", "f16", 0), m.ptr("ub", "f16", 0)
    pto.mte_gm_l1(g, l1, load_bytes, nburst=(1, load_bytes, load_bytes))       # line A: the short load
    pto.set_flag("MTE2", "MTE1", 0)
    pto.wait_flag("MTE2", "MTE1", 0)
    pto.mte_l1_ub(l1, ub, 512, nburst=(1, 512, 512))                             # line B: carries the gap
    if refill:                                                                   # a whole, written tile over it
        pto.pipe_barrier("ALL")
        pto.mte_gm_ub(g, ub, 0, 512, nburst=(1, 512, 512))
        pto.pipe_barrier("ALL")
        pto.mark_unwritten(ub, 512)                                              # then forgotten (a freed tile)
    else:
        pto.set_flag("MTE1", "V", 0)
        pto.wait_flag("MTE1", "V", 0)
    pto.ub.vadd(ub, ub, ub, 2, mask=128, rep_stride=(8, 8, 8))                  # line C: the use
    return m


def _line(text):
    src = open(__file__).read().splitlines()
    return next(i for i, ln in enumerate(src, 1) if text in ln)


def test_the_report_of_a_use_names_the_move_that_carried_the_unwritten_bytes():
    m = _run(64)
    kind, msg = m.reports[0]
    assert kind == "uninitialized" and msg.startswith("pto.ub.vadd operand src0 reads core0.ub0 byte 0x40, which nothing "
                                                      "wrote (the last op that moved never-written bytes here: "
                                                      f"pto.mte_l1_ub at {__file__}:{_line('# line B')} from core0.l1 "
                                                      "bytes [0x0, 0x200); check that the moves filling core0.l1 cover")
    assert msg.endswith(f"({__file__}:{_line('# line C')} in `pto.ub.vadd`)")


def test_the_raised_error_carries_the_same_note():
    with pytest.raises(UninitializedRead, match=r"which nothing wrote \(the last op that moved never-written bytes "
                                                r"here: pto.mte_l1_ub at .*from core0.l1 bytes \[0x0, 0x200\)"):
        _run(64, options=MachineOptions(uninitialized="raise"))


def test_no_note_when_nothing_carried_them_or_a_whole_move_replaced_them():
    assert _run(512).reports == []
    m = _run(64, refill=True)                   # the ub tile was refilled from written GM, then marked unwritten
    assert m.reports and all("the last op that moved" not in msg for _, msg in m.reports), m.reports


def test_the_named_choice_turns_the_notes_off(monkeypatch):
    monkeypatch.setattr(memory, "CARRIED_NOTES", False)
    _, msg = _run(64).reports[0]
    assert "which nothing wrote (" + __file__ in msg and "the last op that moved" not in msg


def test_a_released_core_keeps_no_buffer_alive_through_its_notes():
    """`Machine.release_core` (a finished block of a launch wider than the chip: RELEASE_FINISHED_BLOCKS) drops
    the core's notes with its buffers. Was: the notes kept every released block's L1 / UB alive (a 400-block
    TIK launch moving never-written UB bytes peaked at 154 MB instead of 4 MB, /work/scratch_review446)."""
    import tracemalloc
    m = _run(64)
    m.release_core(0)
    tracemalloc.start()
    try:
        for i in range(20):                             # 20 blocks on core 0, one after another
            g = m.gm_tensor(np.ones(256, np.float16), name=f"g{i}")
            l1, ub = m.ptr("l1", "f16", 0), m.ptr("ub", "f16", 0)
            pto.mte_gm_l1(g, l1, 64, nburst=(1, 64, 64))
            pto.pipe_barrier("ALL")
            pto.mte_l1_ub(l1, ub, 512, nburst=(1, 512, 512))            # carries never-written bytes
            assert m.context(0)._carried
            m.release_core(0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not m.context(0)._carried and peak < 8 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MB"


@pytest.mark.parametrize("freed", [512, 64])
@pytest.mark.parametrize("overwrite", ["vector_dup", "vmuls", "none"])
def test_a_computing_op_that_overwrites_moved_bytes_replaces_their_note(overwrite, freed):
    """A vector op that writes the whole carried tile replaces the move's note as a whole move does; the bytes then
    freed (`pto.mark_unwritten`, whole or part) and read are reported with no note. Was: the report named the old
    move (`pto.mte_l1_ub`) after a vector_dup / vmuls had written every byte of the tile."""
    m = Machine("A2A3")
    g = m.gm_tensor(np.ones(256, np.float16), name="g")
    l1, ub = m.ptr("l1", "f16", 0), m.ptr("ub", "f16", 0)
    pto.mte_gm_l1(g, l1, 64, nburst=(1, 64, 64))
    pto.pipe_barrier("ALL")
    pto.mte_l1_ub(l1, ub, 512, nburst=(1, 512, 512))           # carries never-written bytes [0x40, 0x200)
    pto.pipe_barrier("ALL")
    if overwrite == "vector_dup":
        pto.ub.vector_dup(ub, 1.0, 2, rep_stride=(8,))
    elif overwrite == "vmuls":
        pto.mte_gm_ub(g, ub + 1024, 0, 512, nburst=(1, 512, 512))
        pto.pipe_barrier("ALL")
        pto.ub.vmuls(ub, ub + 1024, 2.0, 1, counter=256)
    pto.pipe_barrier("ALL")
    pto.mark_unwritten(ub + (256 - freed // 2), freed)          # the tail of the tile freed
    before = len(m.reports)
    pto.ub.vadd(ub + 512, ub, ub, 2, mask=128, rep_stride=(8, 8, 8))
    (kind, msg), = m.reports[before:before + 1]
    assert kind == "uninitialized"
    assert ("the last op that moved never-written bytes here: pto.mte_l1_ub" in msg) == (overwrite == "none"), msg


def test_a_fixpipe_store_of_strided_rows_replaces_the_note_of_a_move_inside_a_row():
    """FIXPIPE's rows (`ExecContext.write_runs`, 192 bytes apart here) replace the note of a move of never-written
    bytes that one row covers whole; the bytes then freed and read back name only the move that read them. Was:
    the report went on to the UB -> GM move the FIXPIPE had overwritten ("before it, into its source: ...")."""
    m = Machine("A2A3")
    g = m.gm_tensor(np.ones(32 * 32, np.float16), name="g")
    y = m.gm_tensor(np.zeros(32 * 48, np.float32), name="y")
    ub, l1 = m.ptr("ub", "f32", 0), m.ptr("l1", "f16", 0)
    pto.mte_gm_ub(g, ub, 0, 64, nburst=(1, 64, 64))
    pto.pipe_barrier("ALL")
    pto.mte_ub_gm(ub, y, 96, nburst=(1, 96, 96))                 # y bytes [0x40, 0x60) never written
    pto.mte_gm_l1(g, l1, 2048, nburst=(1, 0, 0))
    a, b, c = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
    pto.pipe_barrier("ALL")
    pto.mte_l1_l0a(l1, a, 0, 0, 2, 2, 2, 2)
    pto.mte_l1_l0b(l1, b, 32, 32)
    pto.pipe_barrier("ALL")
    pto.mad(a, b, c, 32, 32, 32, disable_gemv=True)
    pto.pipe_barrier("ALL")
    pto.mte_l0c_gm(c, y, 32, 32, 32, 48, 0, 0, nz2nd=True)      # row 0 = y bytes [0, 0x80)
    pto.pipe_barrier("ALL")
    pto.mark_unwritten(y, 96)
    pto.mte_gm_ub(y, ub + 1024, 0, 128, nburst=(1, 128, 128))
    pto.pipe_barrier("ALL")
    pto.ub.vadd(ub + 2048, ub + 1024, ub + 1024, 1, mask=32, rep_stride=(8, 8, 8))
    _, msg = m.reports[-1]
    assert "the last op that moved never-written bytes here: pto.mte_gm_ub" in msg and "from gm:y" in msg, msg
    assert "before it, into its source" not in msg, msg
