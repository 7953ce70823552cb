"""An eager op that raises leaves no accesses in the hazard verifier (it did not run).

Found by h_author320: `pto.mte_l1_l0a` refused for an out-of-bounds L0A destination had already
reported its L1 source read; the next legal `pto.mte_gm_l1` into that L1 tile then raised a WAR
`HazardError` naming the refused op, which never ran.
"""
import numpy as np
import pytest

from pto_core import Machine, pto
from pto_core.errors import HazardError, OutOfBounds, PtoError


def _machine():
    m = Machine("A2A3")
    m.activate()
    m.write(m.ptr("l1", "u8", 0), np.zeros(1024, np.uint8))
    return m


def test_refused_move_leaves_no_read():
    m = _machine()
    with pytest.raises(OutOfBounds):      # 2 fractals at L0A stride 255: past the 64 KiB of L0A
        pto.mte_l1_l0a(m.ptr("l1", "f16", 0), m.ptr("l0a", "f16", 0), 0, 0, 2, 1, 2, 255)
    g = m.gm_tensor(np.arange(64, dtype=np.uint8), name="g")
    pto.mte_gm_l1(g, m.ptr("l1", "u8", 0), 64, nburst=(1, 0, 0))      # no WAR against the refused op
    assert np.array_equal(m.read(m.ptr("l1", "u8", 0), (64,)), np.arange(64, dtype=np.uint8))
    assert m.end_kernel() == []


def test_refused_hazard_op_leaves_no_access():
    """An op that fails the hazard check of its second access records its first one neither."""
    m = _machine()
    m.write(m.ptr("l0a", "f16", 0), np.ones(256, np.float16))
    m.write(m.ptr("l0b", "f16", 0), np.ones(256, np.float16))
    pto.mad(m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0), 16, 16, 16)
    with pytest.raises(HazardError, match="WAR"):      # reads L1 (fine), then overwrites L0A the mad read
        pto.mte_l1_l0a(m.ptr("l1", "f16", 0), m.ptr("l0a", "f16", 0), 16, 16)
    g = m.gm_tensor(np.zeros(512, np.uint8), name="g")
    pto.mte_gm_l1(g, m.ptr("l1", "u8", 0), 512, nburst=(1, 0, 0))    # no WAR against the refused load's read
    m.end_kernel()


def test_verify_error_keeps_previous_op_accesses():
    """An op refused before it starts (verify) must not drop the previous op's pending accesses."""
    m = _machine()
    g = m.gm_tensor(np.zeros((16, 16), np.float16), name="a")
    pto.mte_gm_l1_frac(g, m.ptr("l1", "f16", 0), nd2nz=True, shape=(16, 16), src_layout=(32,),
                       dst_group=(1, 1, 16, 0), ctrl=(0, 0))
    with pytest.raises(PtoError):
        pto.mad(m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0), 0, 16, 16)
    with pytest.raises(HazardError):      # the MTE2 write is still recorded
        pto.mte_l1_l0a(m.ptr("l1", "f16", 0), m.ptr("l0a", "f16", 0), 16, 16)


def test_refused_fixpipe_keeps_unit_flag_tile_published():
    """A FIXPIPE unit_flag(check_and_clear) refused after its check (destination past its GM tensor) has not
    consumed the tile: the corrected retry runs (it was a SyncError deadlock) and the kernel ends clean."""
    m = _machine()
    m.write(m.ptr("l0a", "f16", 0), np.ones(256, np.float16))
    m.write(m.ptr("l0b", "f16", 0), np.ones(256, np.float16))
    pto.mad(m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0), 16, 16, 16,
            unit_flag="check_and_set")
    small = m.gm_tensor(np.zeros((8, 16), np.float32), name="small")
    with pytest.raises(OutOfBounds):
        pto.mte_l0c_gm(m.ptr("l0c", "f32", 0), small, 16, 16, 16, 16, 0, 0, unit_flag="check_and_clear",
                       nz2nd=True)
    out = m.gm_tensor(np.zeros((16, 16), np.float32), name="out")
    pto.mte_l0c_gm(m.ptr("l0c", "f32", 0), out, 16, 16, 16, 16, 0, 0, unit_flag="check_and_clear", nz2nd=True)
    assert np.all(m.read(out, (16, 16)) == 16)
    assert m.end_kernel() == []


@pytest.mark.parametrize("op", ["vadds", "vadd", "vmuls"])
def test_refused_chunked_vector_op_writes_nothing(op):
    """A vector op run in repeat chunks (its dst overlaps its src one repeat ahead) whose last chunk runs past
    the end of UB is refused before any chunk stores (`ALL_OR_NOTHING_WRITES`): it wrote its first repeats and
    then raised, so the refused op -- which the hazard verifier forgets (`abort_op`) -- left memory changed.
    The error is the one the chunk loop raised (the dst range of the first chunk out of bounds)."""
    m = _machine()
    base = m.target.sizes.ub - 8 * 256
    u = m.ptr("ub", "f16", base)
    init = np.arange(8 * 128).astype(np.float16)
    m.write(u, init)
    call = {"vadds": lambda: pto.ub.vadds(u + 128, u, 1.0, 9, mask=128),
            "vadd": lambda: pto.ub.vadd(u + 128, u, u, 9, mask=128),
            "vmuls": lambda: pto.ub.vmuls(u + 256, u, 2.0, 7, mask=128)}[op]
    with pytest.raises(OutOfBounds, match="operand (dst|src): bytes"):
        call()
    assert np.array_equal(m.read(u, 8 * 128), init)


def _chunked_after_mte(refuse_first: bool, written_reps: int = 8):
    """UB repeats 0..written_reps-1 written, repeat 8 loaded by MTE2; vadds dst one repeat ahead of src (one chunk
    per repeat). ``refuse_first``: run it once without the MTE2 -> V flag first (a WAW HazardError on its last
    chunk's dst), then with it."""
    m = Machine("Ascend910B1")
    m.activate()
    u = m.ptr("ub", "f16", 0)
    m.write(u, np.arange(written_reps * 128).astype(np.float16))
    g = m.gm_tensor(np.full(128, 5, np.float16), name="g")
    pto.mte_gm_ub(g, u + 8 * 128, 0, 256, nburst=(1, 0, 0))
    before = m.cores[0].buffer("ub").data[:9 * 256].copy(), m.cores[0].buffer("ub").written[:9 * 256].copy()
    if refuse_first:
        with pytest.raises(HazardError, match="WAW hazard .* pto.ub.vadds"):
            pto.ub.vadds(u + 128, u, 1.0, 8, mask=128)
        buf = m.cores[0].buffer("ub")
        assert np.array_equal(buf.data[:9 * 256], before[0]) and np.array_equal(buf.written[:9 * 256], before[1])
    pto.set_flag("MTE2", "V", 0)
    pto.wait_flag("MTE2", "V", 0)
    pto.ub.vadds(u + 128, u, 1.0, 8, mask=128)
    return m.read(u, 9 * 128).tobytes(), len(m.end_kernel())


@pytest.mark.parametrize("written_reps", [8, 4])
def test_chunked_vector_op_refused_by_a_later_chunks_hazard_writes_nothing(written_reps):
    """The last chunk's dst meets an unsynchronised MTE2 write (a WAW HazardError): the repeats stored before it
    are put back, bytes and written marks (`ALL_OR_NOTHING_WRITES`; with 4 written repeats the refused op's first
    chunks stored over never-written bytes, which are unwritten again); the retry after the missing flag gives
    the result and reports of a run without the refused attempt."""
    assert _chunked_after_mte(True, written_reps) == _chunked_after_mte(False, written_reps)
