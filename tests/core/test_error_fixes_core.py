"""Every user error of the simulator core says what to do (audit k406): each case below used to end at the rule,
with no ` Fix: ` (found by running the suite with every formatted `PtoError` recorded). Errors of a kernel's op
also name the user's line (this file); option and library-call errors are raised at the call itself."""
import numpy as np
import pytest

from pto_core import Machine, pto
from pto_core.errors import PtoError
from pto_core.interpreter import Probe
from pto_core.memory import MachineOptions
from pto_core.program import program

from program_testops import testops  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("testops")
HERE = "test_error_fixes_core.py:"


def _kernel():
    with program("k") as k:
        a = k.gm_arg("a", "s32", (4,), io="inout")
        s = k.scalar_arg("s", "u8")
        k.store(a, 0, k.load(a, 1) + s)
    return k.program


def _in_program(fn):
    def run():
        with program("bad") as k:
            k.gm_arg("x", "f16", (4,))
            fn(k)
    return run


def _multicore(k):
    with k.for_(0, 8, block_num=4):
        pass


def _pipe_reg(k):
    pto.t_sync(k.reg("s32"), "V", 0)


def _eager(fn, target="Ascend910B1"):
    def run():
        m = Machine(target)
        m.activate()
        fn(m)
    return run


def _fixpipe_nz2nz_split(m):
    g = m.gm_alloc((16, 16), "f32", name="g")
    pto.mte_l0c_gm(m.ptr("l0c", "f32", 0), g, 16, 16, 16, 16, 0, 0, nz2nz=(0, 2))


def _fixpipe_f16_acc(m):
    g = m.gm_alloc((16, 16), "f16", name="g")
    pto.mte_l0c_gm(m.ptr("l0c", "f16", 0), g, 16, 16, 16, 16, 0, 0, nz2nd=True)


def _fixpipe_sat(m):
    acc = m.ptr("l0c", "f32", 0)
    m.write(acc, np.zeros(256, np.float32))
    g = m.gm_alloc((16, 16), "f32", name="g")
    pto.mte_l0c_gm(acc, g, 16, 16, 16, 16, 0, 0, nz2nd=True, sat="nosat")


def _vnchw_list(m):
    lst = tuple(m.ptr("ub", "f16", 32 * k) for k in range(16))
    pto.ub.vnchwconv(lst[:15], lst, 1)


def _vnchw_half(m):
    lst = tuple(m.ptr("ub", "f16", 32 * k) for k in range(16))
    pto.ub.vnchwconv(lst, lst, 1, dst_high_half=True)


def _tassign_free():
    from pto_core import TileAllocator
    TileAllocator("A2A3", "l0a", alignment=512).free("nope")


# (id, call, fix fragment, names this file's line)
CASES = [
    # machine options and launch options (raised at the call: no kernel line applies)
    ("hazard_same_pipe", lambda: MachineOptions(hazard_same_pipe="loose"), 'hazard_same_pipe="ordered"', False),
    ("gm_races", lambda: MachineOptions(gm_races="loud"), 'gm_races="warn"', False),
    ("uninitialized", lambda: MachineOptions(uninitialized="loud"), 'uninitialized="record"', False),
    ("fill", lambda: MachineOptions(fill="garbage"), 'fill="pattern"', False),
    ("fill_byte", lambda: MachineOptions(fill_byte=256), "fill_byte in [0, 255]", False),
    ("gm_fill_byte", lambda: MachineOptions(gm_fill_byte=-1), "gm_fill_byte in [0, 255], or None", False),
    ("overflow_mode", lambda: MachineOptions(overflow_mode="wrap"), 'overflow_mode=None', False),
    ("machine cores", lambda: Machine("A2A3", cores=0), "cores >= 1", False),
    ("run order", lambda: _kernel().run({"a": np.zeros(4, np.int32), "s": 1}, order="fast"),
     'order="sequential"', False),
    ("run machine cores", lambda: _kernel().compile().run({"a": np.zeros(4, np.int32), "s": 1},
                                                          machine=Machine("A2A3", cores=2), cores=3),
     "at least 3 cores", False),
    ("scalar input type", lambda: _kernel().run({"a": np.zeros(4, np.int32), "s": 1.5}), "Python int", False),
    ("probe when", lambda: Probe(_kernel().body[0], print, when="during"), 'when="before"', False),
    # library helpers
    ("fractal", lambda: __import__("pto_core.layout", fromlist=["x"]).inner_box("zN", "f16", 256),
     "fractal=512", False),
    ("tile shape", lambda: __import__("pto_core.layout", fromlist=["x"]).check_shape("zN", 0, 16, "f16"),
     "rows and cols >= 1", False),
    ("bitcast widths", lambda: __import__("pto_core.scalars", fromlist=["x"]).bitcast(
        1, __import__("pto_core.dtypes", fromlist=["x"]).dtype("s32"),
        __import__("pto_core.dtypes", fromlist=["x"]).dtype("f16")), "same width", False),
    ("exact_float64", lambda: __import__("pto_core.numerics.floats", fromlist=["x"]).exact_float64(
        np.array(["a"])), "numpy float array", False),
    ("tassign free", _tassign_free, "alloc() returned", False),
    # program builder (the user's line)
    ("gm_arg fill", _in_program(lambda k: k.gm_arg("z", "f16", (4,), fill="ones")), 'fill="zero"', True),
    ("gm_arg init on input", _in_program(lambda k: k.gm_arg("z", "f16", (4,), init=[1.0])), "drop init=", True),
    ("multicore end", _in_program(_multicore), "k.for_(0, 4, block_num=4)", True),
    ("pipe operand", _in_program(_pipe_reg), "pipe by name", True),
    # eager ops (the user's line)
    ("debug_eval bind literal", _eager(lambda m: pto.debug_eval(expr="x", bind="__import__('os')"), "A2A3"),
     "tuple literal of tuples", True),
    ("debug_eval bind name", _eager(lambda m: pto.debug_eval(expr="x", bind=repr((("_x", "c", 0),))), "A2A3"),
     "plain dotted names", True),
    ("debug_eval bind extends", _eager(lambda m: pto.debug_eval(
        expr="x", bind=repr((("x.y", "c", 0), ("x.y.z", "c", 0)))), "A2A3"), "under different names", True),
    ("debug_eval bind entry", _eager(lambda m: pto.debug_eval(values=(1,), expr="x", bind="(('x', 's', 1),)"),
                                     "A2A3"), "bind entry index", True),
    ("vadd mask words", _eager(lambda m: pto.ub.vadd(*(m.ptr("ub", "f16", 0),) * 3, 1, mask=(1, 2, 3)), "A2A3"),
     "mask=(hi, lo)", True),
    ("vconv deqscale types", _eager(lambda m: pto.ub.vconv(m.ptr("ub", "f16", 1024), m.ptr("ub", "f32", 0), 1,
                                                           deqscale=0.5)), "only for s32 -> f16", True),
    ("vconv deq round", _eager(lambda m: pto.ub.vconv(m.ptr("ub", "f16", 1024), m.ptr("ub", "s32", 2048), 1,
                                                      round="r", deqscale=0.5)), "drop round=", True),
    ("vconv s4", _eager(lambda m: pto.ub.vconv(m.ptr("ub", "s4", 0), m.ptr("ub", "f16", 1024), 1), "Ascend310P3"),
     "pack the nibbles", True),
    ("vsort32 indices", _eager(lambda m: pto.ub.vsort32(m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 256),
                                                        m.ptr("ub", "s32", 512), 1)), "as u32", True),
    ("vnchwconv list", _eager(_vnchw_list), "list of 16 UB pointers", True),
    ("vnchwconv high half", _eager(_vnchw_half), "drop src_high_half", True),
    ("fixpipe sat word", _eager(_fixpipe_sat, "A2A3"), "sat=True, sat=False", True),
    # k467: moves, MAD, FIXPIPE, masks and clause values
    ("mad preserve_nan", _eager(lambda m: pto.mad(m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0),
                                                  m.ptr("l0c", "f32", 0), 16, 16, 16, sat="preserve_nan"), "A2A3"),
     "preserve_nan goes on the pto.mte_l0c_*", True),
    ("vadd 4-word mask on f16", _eager(lambda m: pto.ub.vadd(*(m.ptr("ub", "f16", 0),) * 3, 1, mask=(0, 0, 0, 1)),
                                       "A2A3"), "mask=(hi, lo)", True),
    ("fixpipe nz2nz split", _eager(_fixpipe_nz2nz_split, "A2A3"), "0 (no split) or 1", True),
    ("fixpipe L0C type", _eager(_fixpipe_f16_acc, "A2A3"), "type the L0C source pointer as one of", True),
]


@pytest.mark.parametrize("name,call,fix,located", CASES, ids=[c[0] for c in CASES])
def test_core_error_states_a_fix(name, call, fix, located):
    with pytest.raises(PtoError) as e:
        call()
    text = str(e.value)
    assert " Fix: " in text and fix in text.split(" Fix: ", 1)[1], text
    if located:
        assert HERE in text, text


def test_pto_run_missing_files_say_what_to_pass(tmp_path, capsys):
    from pto_core.cli import pto_run_main
    assert pto_run_main([str(tmp_path / "missing.pto")]) == 2
    assert "Fix: pass the path of an existing PTO-AS file" in capsys.readouterr().err
