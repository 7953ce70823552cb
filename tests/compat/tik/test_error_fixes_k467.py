"""TIK errors that had no Fix before k467 (found by the AST scan of tests/compat/test_every_error_carries_a_fix.py):
each kernel below triggers one and checks the Fix names what to write instead; where the Fix gives a value or a
route, the kernel is rebuilt with it and must then be accepted."""
import pytest

from pto_core.errors import PtoError
from tbe import tik
from tbe_compat.platform import set_current_compile_soc_info

from .helpers import build

HERE = "test_error_fixes_k467.py:"


@pytest.fixture(autouse=True)
def _chip():
    yield
    set_current_compile_soc_info("Ascend310")


def _ti(chip="Ascend310"):
    set_current_compile_soc_info(chip)
    return tik.Tik()


def _fix_of(call) -> str:
    with pytest.raises(PtoError) as e:
        call()
    text = str(e.value)
    assert " Fix: " in text and HERE in text, text
    assert isinstance(e.value, SystemExit) and isinstance(e.value, RuntimeError)
    return text.split(" Fix: ", 1)[1]


def _scalar_array(i):
    ti = _ti()
    arr = ti.ScalarArray("int32", length=4, name="arr", init_value=0)
    return arr[i]


def _l1_to_gm(route_through_ub: bool):
    ti = _ti("Ascend910")
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
    l1 = ti.Tensor("float16", (256,), name="l1", scope=tik.scope_cbuf)
    ti.data_move(l1, x, 0, 1, 16, 0, 0)
    if route_through_ub:
        ub = ti.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, l1, 0, 1, 16, 0, 0)
        ti.data_move(y, ub, 0, 1, 16, 0, 0)
    else:
        ti.data_move(y, l1, 0, 1, 16, 0, 0)
    return build(ti, "l1gm", [x], [y])


def _start_addr(addr):
    ti = _ti()
    return ti.Tensor("float16", (16,), name="t", scope=tik.scope_ubuf, start_addr=addr)


def _printf_length(n):
    ti = _ti()
    ti.set_printf_params(1, n)
    return ti


def _barrier(dtype):
    ti = _ti("Ascend910")
    sync = ti.Tensor(dtype, (16,), name="sync", scope=tik.scope_gm, is_workspace=True, is_atomic_add=True)
    ti.block_barrier(sync)


def test_scalar_array_index_names_the_legal_range():
    fix = _fix_of(lambda: _scalar_array(4))
    assert "pass an index in [-4, 3]" in fix, fix
    _scalar_array(-4)          # the Fix's range is accepted at both ends
    _scalar_array(3)


def test_data_move_path_missing_on_the_chip_names_the_chips_and_the_ub_route():
    fix = _fix_of(lambda: _l1_to_gm(False))
    assert "Ascend910B" in fix and "move through UB" in fix, fix
    _l1_to_gm(True)            # the route the Fix gives builds on Ascend910


def test_misaligned_start_addr_gives_the_rounded_address():
    fix = _fix_of(lambda: _start_addr(0x21))
    assert "start_addr=0x40" in fix, fix
    _start_addr(0x40)


def test_single_print_length_gives_the_rounded_length():
    fix = _fix_of(lambda: _printf_length(100))
    assert "single_print_length=128" in fix, fix
    _printf_length(128)


def test_printf_of_seven_values_says_split():
    fix = _fix_of(lambda: _ti().printf("%d %d %d %d %d %d %d\n", *range(7)))
    assert "several printf calls of at most 6" in fix, fix


def test_block_barrier_float_workspace_says_integer_dtype():
    fix = _fix_of(lambda: _barrier("float16"))
    assert 'Tensor("int64"' in fix, fix
    _barrier("int64")


def test_compare_with_a_multi_element_view_says_index_one():
    def call():
        ti = _ti()
        a = ti.Tensor("float16", (16,), name="a", scope=tik.scope_ubuf)
        b = ti.Tensor("float16", (16,), name="b", scope=tik.scope_ubuf)
        return a[0] < b[0:2]
    fix = _fix_of(call)
    assert "b[i]" in fix and "vec_cmpv_*" in fix, fix


def test_reshape_to_another_element_count_names_the_count():
    def call():
        ti = _ti()
        t = ti.Tensor("float16", (16,), name="t", scope=tik.scope_ubuf)
        return t.reshape((3, 5))
    fix = _fix_of(call)
    assert "dims multiply to 16" in fix, fix


def test_slice_step_below_one_says_no_reversed_slices():
    def call():
        ti = _ti()
        t = ti.Tensor("float16", (16,), name="t", scope=tik.scope_ubuf)
        return t[8:0:-1]
    fix = _fix_of(call)
    assert "step >= 1" in fix, fix


def test_compare_fixpipe_cli_usage_errors_state_a_fix(capsys):
    from tbe_compat.cli import tik_compare_fixpipe_main
    assert tik_compare_fixpipe_main(["--full"]) == 2
    assert "Fix: add --sweep" in capsys.readouterr().err
    assert tik_compare_fixpipe_main([]) == 2
    assert "Fix: give a SCRIPT.py" in capsys.readouterr().err
