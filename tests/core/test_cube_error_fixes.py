"""Every rejected direct cube / FIXPIPE call says what to do (audit h_ptocube117): the errors below
used to end at the rule, with no `Fix:`."""
import numpy as np
import pytest

from pto_core import Machine, pto
from pto_core.errors import IllegalOperand, UnsupportedOp


def _a2a3():
    m = Machine("A2A3")
    acc = m.ptr("l0c", "f32", 0)
    m.write(acc, np.zeros(256, np.float32))
    return m, acc


def _mad_ptrs(m):
    return m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)


CASES = [
    ("mad unit_flag check_and_clear", IllegalOperand, "use one of check_only, check_and_set",
     lambda m, acc, g16, g32: pto.mad(*_mad_ptrs(m), 16, 16, 16, unit_flag="check_and_clear")),
    ("mad sat(preserve_nan)", IllegalOperand, "use one of sat, nosat",
     lambda m, acc, g16, g32: pto.mad(*_mad_ptrs(m), 16, 16, 16, sat="preserve_nan")),
    ("fixpipe unit_flag check_and_set", IllegalOperand, "use one of check_only, check_and_clear",
     lambda m, acc, g16, g32: pto.mte_l0c_gm(acc, g32, 16, 16, 16, 16, 0, 0, unit_flag="check_and_set",
                                             nz2nd=True)),
    ("pre_quant mode of another target", UnsupportedOp, "use a mode A2A3 has",
     lambda m, acc, g16, g32: pto.mte_l0c_gm(acc, g16, 16, 16, 16, 16, 0, 0,
                                             pre_quant=(1.0, {"mode": "qf322hif8_pre_scalar"}), nz2nd=True)),
    ("clip on an f32 destination", IllegalOperand, "drop clip",
     lambda m, acc, g16, g32: pto.mte_l0c_gm(acc, g32, 16, 16, 16, 16, 0, 0,
                                             pre_relu={"mode": "normal_relu", "clip": 1.0}, nz2nd=True)),
    ("atomic type != destination type", IllegalOperand, "atomic={'type': 'f32'",
     lambda m, acc, g16, g32: pto.mte_l0c_gm(acc, g32, 16, 16, 16, 16, 0, 0, nz2nd=True,
                                             atomic={"type": "f16", "op": "add"})),
]


@pytest.mark.parametrize("name,exc,fix,call", CASES, ids=[c[0] for c in CASES])
def test_rejected_cube_call_states_a_fix(name, exc, fix, call):
    m, acc = _a2a3()
    g16 = m.gm_alloc((16, 16), "f16", name="g16")
    g32 = m.gm_alloc((16, 16), "f32", name="g32")
    with pytest.raises(exc) as e:
        call(m, acc, g16, g32)
    text = str(e.value)
    assert "test_cube_error_fixes.py:" in text, text
    assert " Fix: " in text and fix in text.split(" Fix: ", 1)[1], text


@pytest.mark.parametrize("call", [
    lambda m: pto.mte_l1_fb(m.ptr("l1", "u8", 0), m.ptr("fb", "u8", 0), 1),
    lambda m: pto.mte_l1_bt(m.ptr("l1", "f32", 0), m.ptr("bt", "f32", 0), 1),
    lambda m: pto.mte_ub_l1(m.ptr("ub", "f16", 0), m.ptr("l1", "f16", 0), 1),
])
def test_a_missing_nburst_clause_says_how_to_add_it(call):
    with pytest.raises(IllegalOperand, match=r"nburst\(.*\) is required.*Fix: add nburst="):
        call(Machine("A5"))
