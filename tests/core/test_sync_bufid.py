"""Buffer-id synchronisation (A5): ``pto.get_buf`` / ``pto.rls_buf`` -- ordering, protocol, spellings.

Semantics (migration_guide/pto_sync.md §2b): a blocking ``get_buf(P, id)`` orders P's later ops
after every earlier ``rls_buf`` of ``id`` by another pipe; pairs on one id never nest and match in
pipe and mode; held ids are reported at kernel end.
"""
import textwrap

import numpy as np
import pytest

from pto_core import HazardError, IllegalOperand, SyncError, UnsupportedOp, asm, pto
from pto_core.errors import AsmParseError, UnknownName
from pto_core.pipes import sync_op_pipe
from pto_core.program import program

N = 64      # f32 elements per tile (256 bytes)


def chain(*, drop=None, v_mode=0, target="A5"):
    """MTE2 load -> V abs -> MTE3 store guarded only by buffer ids 0 (input) and 1 (output)."""
    steps = [("get_buf", "MTE2", 0, 0), ("load",), ("rls_buf", "MTE2", 0, 0),
             ("get_buf", "V", 0, v_mode), ("get_buf", "V", 1, 0), ("abs",),
             ("rls_buf", "V", 0, v_mode), ("rls_buf", "V", 1, 0),
             ("get_buf", "MTE3", 1, 0), ("store",), ("rls_buf", "MTE3", 1, 0)]
    with program("chain", target=target) as k:
        x = k.gm_arg("x", "f32", (N,))
        y = k.gm_arg("y", "f32", (N,), io="out")
        ub_in, ub_out = k.ptr("ub", "f32", 0), k.ptr("ub", "f32", 1024)
        for i, st in enumerate(steps):
            if i == drop:
                continue
            if st[0] == "load":
                pto.mte_gm_ub(x, ub_in, 0, 4 * N, nburst=(1, 4 * N, 4 * N))
            elif st[0] == "abs":
                pto.ub.vabs(ub_out, ub_in, 1)
            elif st[0] == "store":
                pto.mte_ub_gm(ub_out, y, 4 * N, nburst=(1, 4 * N, 4 * N))
            else:
                getattr(pto, st[0])(st[1], st[2], st[3])
    return k.program


X = np.linspace(-3, 3, N, dtype=np.float32)


def test_a_buffer_id_chain_orders_mte2_v_mte3_without_flags():
    exe = chain().compile()
    out = exe.run({"x": X})
    assert np.array_equal(out["y"], np.abs(X))
    assert exe.reports == []


@pytest.mark.parametrize("drop,kind", [(3, "RAW"), (8, "RAW")])
def test_a_missing_get_buf_leaves_the_edge_unordered(drop, kind):
    with pytest.raises(HazardError) as ei:
        chain(drop=drop).compile().run({"x": X})
    assert ei.value.kind == kind and "get_buf" in ei.value.hint


def test_a_non_blocking_get_buf_does_not_order():
    with pytest.raises(HazardError):
        chain(v_mode=1).compile().run({"x": X})


def test_pairs_must_not_nest_and_must_match():
    # get_buf of an id still held (by another pipe), rls_buf without get_buf, pipe and mode mismatch
    for body, msg in ((lambda: (pto.get_buf("MTE2", 5), pto.get_buf("V", 5)), "must not nest"),
                      (lambda: pto.rls_buf("V", 5), "no earlier get_buf holds"),
                      (lambda: (pto.get_buf("MTE2", 5), pto.rls_buf("V", 5)), "same pipe and mode"),
                      (lambda: (pto.get_buf("MTE2", 5), pto.rls_buf("MTE2", 5, 1)), "same pipe and mode")):
        with program("bad", target="A5") as k:
            body()
        with pytest.raises(SyncError, match=msg) as ei:
            k.program.compile().run()
        assert "test_sync_bufid.py" in str(ei.value)


def test_a_held_id_is_reported_at_kernel_end():
    exe = chain(drop=10).compile()
    exe.run({"x": X})
    assert len(exe.reports) == 1 and "was never released" in exe.reports[0][1]
    assert 'pto.get_buf "PIPE_MTE3", 1, 0' in exe.reports[0][1]


def test_operand_checks():
    with pytest.raises(UnsupportedOp, match="no buffer-id synchronisation"):
        chain(target="A2A3")
    with program("k", target="A5"):
        with pytest.raises(IllegalOperand, match="does not exist on A5"):
            pto.get_buf("V", 32)
        with pytest.raises(IllegalOperand, match="mode must be 0"):
            pto.get_buf("V", 3, 2)
        with pytest.raises(UnknownName, match="unknown pipe"):
            pto.rls_buf("ALL", 3)
    assert sync_op_pipe("TLOAD") == "MTE2" and sync_op_pipe("PIPE_FIX") == "FIX"


def test_a_runtime_buffer_id_is_checked_when_it_runs():
    with program("k", target="A5") as k:
        with k.for_(30, 33) as i:
            pto.get_buf("V", i)
            pto.rls_buf("V", i)
    with pytest.raises(IllegalOperand, match="buffer id 32 does not exist"):
        k.program.compile().run()


# ----------------------------------------------------------------------------- PTO-AS spellings

KERNEL = textwrap.dedent("""\
    module attributes {pto.target_arch = "a5"} {
      func.func @k(%x: !pto.ptr<f32, gm>, %y: !pto.ptr<f32, gm>) {
        %c0_i64 = arith.constant 0 : i64
        %c1_i64 = arith.constant 1 : i64
        %c256_i64 = arith.constant 256 : i64
        %c1024_i64 = arith.constant 1024 : i64
        %in = pto.castptr %c0_i64 : i64 -> !pto.ptr<f32, ub>
        %out = pto.castptr %c1024_i64 : i64 -> !pto.ptr<f32, ub>
        GET_MTE2
        pto.mte_gm_ub %x, %in, %c0_i64, %c256_i64 nburst(%c1_i64, %c256_i64, %c256_i64) : !pto.ptr<f32, gm>, !pto.ptr<f32, ub>, i64, i64, i64, i64, i64
        RLS_MTE2
        pto.get_buf "PIPE_V", %c0_i64, %c0_i64 : i64, i64
        pto.ub.vabs %out, %in, %c1_i64 : !pto.ptr<f32, ub>, !pto.ptr<f32, ub>, i64
        pto.rls_buf "PIPE_V", %c0_i64, %c0_i64 : i64, i64
        pto.pipe_barrier "PIPE_ALL"
        pto.mte_ub_gm %out, %y, %c256_i64 nburst(%c1_i64, %c256_i64, %c256_i64) : !pto.ptr<f32, ub>, !pto.ptr<f32, gm>, i64, i64, i64, i64
        return
      }
    }
    """)


@pytest.mark.parametrize("get,rls", [
    ('pto.get_buf "PIPE_MTE2", %c0_i64, %c0_i64 : i64, i64', 'pto.rls_buf "PIPE_MTE2", %c0_i64, %c0_i64 : i64, i64'),
    ('pto.get_buf "PIPE_MTE2", 0, 0', 'pto.rls_buf "PIPE_MTE2", 0, 0'),                  # generated IR
    ('pto.get_buf %c0_i64, "PIPE_MTE2"', 'pto.rls_buf %c0_i64, "PIPE_MTE2"'),            # ISA examples
    ("pto.get_buf[#pto.pipe_event_type<TLOAD>, 0]", "pto.rls_buf[#pto.pipe_event_type<TLOAD>, 0]"),
    ("pto.get_buf <PIPE_MTE2>, 0", "pto.rls_buf <PIPE_MTE2>, 0"),
])
def test_every_ptoas_spelling_parses_to_the_same_ordering(get, rls):
    prog = asm.parse(KERNEL.replace("GET_MTE2", get).replace("RLS_MTE2", rls))
    x = np.linspace(-2, 2, N, dtype=np.float32)
    exe = prog.compile()
    assert np.array_equal(exe.run({"x": x, "y": np.zeros(N, np.float32)})["y"], np.abs(x))
    assert exe.reports == []
    again = asm.parse(prog.to_asm())                 # printed canonically: pto.get_buf "PIPE_MTE2", %c, %c
    assert 'pto.get_buf "PIPE_MTE2"' in prog.to_asm()
    assert np.array_equal(again.run({"x": x, "y": np.zeros(N, np.float32)})["y"], np.abs(x))


def test_without_the_mte2_pair_the_text_kernel_races():
    prog = asm.parse(KERNEL.replace("GET_MTE2", "").replace("RLS_MTE2", ""))
    with pytest.raises(HazardError):
        prog.run({"x": X, "y": np.zeros(N, np.float32)})


def test_bad_spellings_are_parse_errors():
    with pytest.raises(AsmParseError, match="unknown pipe 'TFOO'"):
        asm.parse(KERNEL.replace("GET_MTE2", "pto.get_buf[#pto.pipe_event_type<TFOO>, 0]").replace("RLS_MTE2", ""))
    with pytest.raises(AsmParseError, match="does not exist on A5"):
        asm.parse(KERNEL.replace("GET_MTE2", 'pto.get_buf "PIPE_MTE2", 40, 0').replace("RLS_MTE2", ""))
    with pytest.raises(AsmParseError, match="A2A3 has no buffer-id"):
        asm.parse(KERNEL.replace('"a5"', '"a2a3"').replace("GET_MTE2", "").replace("RLS_MTE2", ""))
