"""Sync ops and the flag protocol: names, event ids, deadlock, double set, leftover flags."""
import numpy as np
import pytest

import sync_standins  # noqa: F401  (registers the t_* stand-in ops)
from pto_core import HazardError, IllegalOperand, Machine, MachineOptions, SyncError, UnknownName, pto
from pto_core.checks.flags import EVENT_ID_LIMITS, FlagTable
from pto_core.ops.registry import OpCall, get_op, make_call
from pto_core.pipes import CCE_CODE, PIPES, PTOAS_CODE, pipe_name
from pto_core.targets import get_target

OFF = MachineOptions(check_hazards=False)


@pytest.fixture
def m():
    return Machine("A2A3")


# ----------------------------------------------------------------------------- op table rows

def test_sync_ops_registered_on_scalar_pipe_with_asm_forms():
    forms = {"set_flag": "bracket", "wait_flag": "bracket", "set_flag_dyn": "bracket",
             "wait_flag_dyn": "bracket", "pipe_barrier": "quoted", "barrier": "angle"}
    for name, form in forms.items():
        spec = get_op(name)
        assert spec.family == "sync"
        assert spec.pipe == "S"
        assert spec.asm_form == form
    assert [o.kind for o in get_op("set_flag").operands] == ["pipe", "pipe", "event"]
    assert [o.kind for o in get_op("wait_flag_dyn").operands] == ["pipe", "pipe", "int"]
    assert get_op("t_mad").asm_form == "generic"


def test_both_pipe_numberings_cover_every_pipe():
    for p in PIPES:
        assert p in CCE_CODE and p in PTOAS_CODE
    assert (CCE_CODE["M"], PTOAS_CODE["M"]) == (5, 2)
    assert (CCE_CODE["FIX"], PTOAS_CODE["FIX"]) == (7, 10)


@pytest.mark.parametrize("alias,canon", [("CUBE", "M"), ("cube", "M"), ("PIPE_M", "M"), ("FIXP", "FIX"),
                                         ("PIPE_FIX", "FIX"), ("mte2", "MTE2"), ("VECTOR", "V")])
def test_pipe_aliases(alias, canon):
    assert pipe_name(alias) == canon


# ----------------------------------------------------------------------------- names and ids

def test_set_wait_accept_aliases_and_event_strings(m):
    pto.set_flag("CUBE", "FIXP", 0)
    pto.wait_flag("PIPE_M", "PIPE_FIX", "EVENT_ID0")
    pto.set_flag("MTE2", "V", "event_id7")
    pto.wait_flag("mte2", "vector", 7)
    assert m.end_kernel() == []


@pytest.mark.parametrize("bad", ["PIPE_X", "MTE4", "5", "CUBEX"])
def test_unknown_pipe_name_lists_valid_ones(m, bad):
    with pytest.raises(UnknownName) as e:
        pto.set_flag(bad, "FIX", 0)
    assert "unknown pipe" in str(e.value) and "MTE1" in str(e.value)
    assert e.value.op == "pto.set_flag"


def test_pipe_all_is_not_a_flag_endpoint(m):
    with pytest.raises(IllegalOperand) as e:
        pto.wait_flag("M", "ALL", 0)
    assert "PIPE_ALL" in str(e.value) and e.value.operand == "dst"


@pytest.mark.parametrize("bad", [8, -1, "EVENT_ID8", "EVENT_IDX", "E0", 1.0, True])
def test_bad_event_id(m, bad):
    with pytest.raises((SyncError, IllegalOperand)) as e:
        pto.set_flag("M", "FIX", bad)
    assert "event" in str(e.value).lower()


def test_event_id_limit_per_target():
    assert EVENT_ID_LIMITS["Ascend910A"] == 4
    m = Machine("Ascend910A")
    pto.set_flag("MTE2", "V", 3)
    pto.wait_flag("MTE2", "V", 3)
    with pytest.raises(SyncError) as e:
        pto.set_flag("MTE2", "V", 4)
    assert "Ascend910A" in str(e.value) and e.value.limit == "[0, 3]"
    assert m.end_kernel() == []


def test_static_form_rejects_runtime_event_at_verify():
    spec = get_op("set_flag")
    call = make_call(spec, ("M", "FIX", object()), {})
    with pytest.raises(IllegalOperand) as e:
        spec.verify(call, get_target("A2A3"))
    assert "set_flag_dyn" in str(e.value)


def test_verify_runs_on_recorded_calls_without_a_machine():
    spec = get_op("wait_flag")
    spec.verify(OpCall(spec, ("PIPE_MTE1", "PIPE_M", "EVENT_ID5"), {}), get_target("A5"))
    with pytest.raises(UnknownName):
        spec.verify(OpCall(spec, ("PIPE_MTE7", "PIPE_M", 0), {}), get_target("A5"))
    dyn = get_op("set_flag_dyn")
    dyn.verify(OpCall(dyn, ("M", "FIX", object()), {}), get_target("A5"))   # runtime id: checked later
    with pytest.raises(SyncError):
        dyn.verify(OpCall(dyn, ("M", "FIX", 9), {}), get_target("A5"))


def test_dynamic_forms_check_the_runtime_id(m):
    for i in range(8):
        pto.set_flag_dyn("M", "FIX", i)
    for i in range(8):
        pto.wait_flag_dyn("CUBE", "FIXP", i)
    with pytest.raises(SyncError) as e:
        pto.wait_flag_dyn("M", "FIX", 12)
    assert "outside 0..7" in str(e.value)
    assert m.end_kernel() == []


def test_dyn_and_static_forms_share_flags(m):
    pto.set_flag_dyn("MTE1", "M", 2)
    pto.wait_flag("MTE1", "M", "EVENT_ID2")
    assert m.end_kernel() == []


# ----------------------------------------------------------------------------- barriers

@pytest.mark.parametrize("pipe", ["V", "M", "MTE1", "MTE2", "MTE3", "FIX", "ALL", "PIPE_ALL", "CUBE"])
def test_barrier_pipes(m, pipe):
    pto.pipe_barrier(pipe)
    pto.barrier(pipe)


def test_barrier_on_scalar_pipe_is_illegal(m):
    for op in (pto.pipe_barrier, pto.barrier):
        with pytest.raises(IllegalOperand) as e:
            op("PIPE_S")
        assert "PIPE_S" in str(e.value) and e.value.operand == "pipe"


def test_barrier_rejects_unknown_pipe(m):
    with pytest.raises(UnknownName):
        pto.pipe_barrier("PIPE_MTE5")


# ----------------------------------------------------------------------------- protocol

def test_wait_without_set_is_a_deadlock_not_a_hang(m):
    pto.set_flag("MTE2", "MTE1", 1)
    with pytest.raises(SyncError) as e:
        pto.wait_flag("MTE2", "MTE1", 0)
    msg = str(e.value)
    assert "deadlock" in msg and "pto.wait_flag[PIPE_MTE2, PIPE_MTE1, EVENT_ID0]" in msg
    assert "EVENT_ID1" in msg            # the pending flag on the same pipe pair is listed
    assert e.value.where is not None and e.value.where.file == __file__
    assert not isinstance(e.value, HazardError)


def test_deadlock_names_the_wait_that_consumed_the_last_set(m):
    pto.set_flag("M", "FIX", 0)
    pto.wait_flag("M", "FIX", 0)
    with pytest.raises(SyncError) as e:
        pto.wait_flag("M", "FIX", 0)
    assert "already consumed by the wait_flag at" in str(e.value)


def test_wait_before_set_in_program_order_is_a_deadlock(m):
    with pytest.raises(SyncError):
        pto.wait_flag("V", "MTE3", 0)
    pto.set_flag("V", "MTE3", 0)     # the later set cannot rescue the earlier wait
    assert len(m.end_kernel()) == 1


def test_flag_direction_matters(m):
    pto.set_flag("M", "FIX", 0)
    with pytest.raises(SyncError) as e:
        pto.wait_flag("FIX", "M", 0)
    assert "swapped" in str(e.value)


def test_double_set_is_illegal_and_suggests_a_free_event(m):
    pto.set_flag("M", "V", 0)
    pto.set_flag("M", "V", 1)
    with pytest.raises(SyncError) as e:
        pto.set_flag("M", "V", 0)
    msg = str(e.value)
    assert "already set" in msg and "EVENT_ID2" in msg and "wait_flag[PIPE_M, PIPE_V, EVENT_ID0]" in msg


def test_set_after_wait_is_fine(m):
    for _ in range(3):
        pto.set_flag("MTE3", "MTE2", 4)
        pto.wait_flag("MTE3", "MTE2", 4)
    assert m.end_kernel() == []


def test_leftover_flags_are_reported_at_kernel_end_and_cleared(m):
    pto.set_flag("M", "FIX", 3)
    pto.set_flag("V", "MTE2", 0)
    reports = m.end_kernel()
    assert [k for k, _ in reports] == ["sync", "sync"]
    text = " ".join(msg for _, msg in reports)
    assert "pto.set_flag[PIPE_M, PIPE_FIX, EVENT_ID3]" in text and "never waited" in text
    assert __file__ in text
    assert m.reports[-2:] == reports
    assert m.end_kernel() == []          # the table starts fresh
    with pytest.raises(SyncError):
        pto.wait_flag("M", "FIX", 3)


def test_flags_are_per_core():
    m = Machine("A2A3", cores=2)
    m.activate(0)
    pto.set_flag("M", "FIX", 0)
    m.activate(1)
    with pytest.raises(SyncError):
        pto.wait_flag("M", "FIX", 0)
    reports = m.end_kernel()
    assert len(reports) == 1 and reports[0][1].startswith("core0:")


@pytest.mark.parametrize("options", [MachineOptions(), OFF])
def test_protocol_checks_stay_on_with_the_verifier_off(options):
    m = Machine("A2A3", options=options)
    assert (m.context(0).hazards is None) == (not options.check_hazards)
    pto.set_flag("M", "FIX", 0)
    with pytest.raises(SyncError):
        pto.set_flag("M", "FIX", 0)
    with pytest.raises(SyncError):
        pto.wait_flag("M", "FIX", 1)
    assert len(m.end_kernel()) == 1


def test_flag_table_free_event():
    t = FlagTable()
    for ev in range(3):
        t.set("M", "FIX", ev, None)
    assert t.free_event("M", "FIX") == 3
    assert t.free_event("FIX", "M") == 0
    for ev in range(3, 8):
        t.set("M", "FIX", ev, None)
    assert t.free_event("M", "FIX") is None


def test_config_rejects_bad_same_pipe_policy():
    from pto_core import ConfigError
    with pytest.raises(ConfigError) as e:
        MachineOptions(hazard_same_pipe="loose")
    assert "loose" in str(e.value)


def test_sync_ops_move_no_data(m):
    src = m.gm_tensor(np.arange(64, dtype=np.uint8), name="x")
    before = m.read(src, 64).copy()
    pto.set_flag("MTE2", "MTE1", 0)
    pto.wait_flag("MTE2", "MTE1", 0)
    pto.pipe_barrier("ALL")
    assert np.array_equal(m.read(src, 64), before)
