"""Event and buffer ids given as numpy integers are ids like Python ints (h_hazard100).

Every other integer operand takes numpy integers (`registry.check_constant_operand`); the sync ops
refused them with self-contradicting messages ("event id np.int64(1) is outside 0..7", "buffer id
np.int64(3) does not exist on A5 (limit: [0, 31])").
"""
import numpy as np
import pytest

from pto_core import Machine, SyncError, pto
from pto_core.program import program

NP_INTS = [np.int8, np.int32, np.int64, np.uint16]


@pytest.mark.parametrize("t", NP_INTS)
def test_eager_static_flag_takes_numpy_event_id(t):
    m = Machine("A2A3")
    pto.set_flag("V", "MTE3", t(3))
    pto.wait_flag("V", "MTE3", 3)          # the same flag as the Python int
    pto.set_flag("V", "MTE3", 3)
    pto.wait_flag("V", "MTE3", t(3))
    assert m.end_kernel() == []


@pytest.mark.parametrize("t", NP_INTS)
def test_eager_dyn_flag_takes_numpy_event_id(t):
    m = Machine("A2A3")
    pto.set_flag_dyn("V", "MTE3", t(2))
    pto.wait_flag_dyn("V", "MTE3", 2)
    assert m.end_kernel() == []


@pytest.mark.parametrize("t", NP_INTS)
def test_eager_buffer_id_and_mode_take_numpy_ints(t):
    m = Machine("A5")
    pto.get_buf("V", t(3), t(1))
    pto.rls_buf("V", 3, 1)
    pto.get_buf("MTE2", t(31))
    pto.rls_buf("MTE2", t(31), t(0))
    assert m.end_kernel() == []


def test_numpy_ids_out_of_range_still_rejected():
    Machine("Ascend910A")
    with pytest.raises(SyncError, match="event id 4 does not exist on Ascend910A"):
        pto.set_flag("V", "MTE3", np.int64(4))
    with pytest.raises(SyncError, match="event id 4 does not exist on Ascend910A"):
        pto.set_flag_dyn("V", "MTE3", np.int64(4))
    Machine("A5")
    with pytest.raises(Exception, match="buffer id 32 does not exist on A5"):
        pto.get_buf("V", np.int64(32))


def test_recorded_numpy_event_id_prints_as_event_constant():
    with program("np_ids", target="A5") as k:
        k.gm_arg("x", "s32", (8,))
        pto.set_flag("V", "MTE3", np.int32(1))
        pto.wait_flag("V", "MTE3", np.int64(1))
        pto.get_buf("V", np.int64(3))
        pto.rls_buf("V", np.int64(3))
    text = k.program.to_asm()
    assert "pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID1>]" in text
    assert "pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID1>]" in text
    k.program.run({"x": np.zeros(8, np.int32)})


@pytest.mark.parametrize("bad", [True, np.True_, 2.0, np.float32(2), np.array(2), None])
def test_eager_flag_with_a_constant_of_another_type_is_named_a_type_mistake(bad):
    """An eager set_flag/wait_flag given a bool, float, array or None says the event id must be an int (as the
    recorded form does), not 'must be a constant ... use pto.set_flag_dyn for an event id computed at run time'
    (the value is a constant, and set_flag_dyn refuses it too)."""
    Machine("A2A3")
    for op in (pto.set_flag, pto.wait_flag):
        with pytest.raises(SyncError, match=r"event id must be an int 0\.\.7 or 'EVENT_IDn', got ") as info:
            op("V", "MTE3", bad)
        assert "set_flag_dyn" not in str(info.value) and "test_sync_numpy_ids.py" in str(info.value)


def test_an_event_id_out_of_range_gets_a_fix_that_says_what_to_write():
    """The Fix read 'hardware has 8 event ids per pipe pair': a fact, not what to write (user404)."""
    Machine("A2A3")
    with pytest.raises(SyncError) as e:
        pto.set_flag("MTE2", "V", 9)
    assert "event id 9 is outside 0..7" in str(e.value)
    assert e.value.hint.startswith("use an event id 0..7 (EVENT_ID0 .. EVENT_ID7)")
