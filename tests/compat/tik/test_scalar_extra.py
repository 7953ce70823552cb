"""ScalarArray (constant and run-time indices), TensorAddrList, the bit-count scalar
instructions (property test over random 64-bit values against Python's int.bit_count), printf."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, UninitializedRead, UnknownName, UnsupportedOp
from tbe import tik

from .helpers import raises_tik
from .vec_helpers import vec_kernel


def test_scalar_array_constant_and_runtime_indices():
    def body(ti, ub):
        arr = ti.ScalarArray("int64", 4, "arr", [10, 20, 30, 40])
        with ti.for_range(0, 4) as i:
            arr[i].set_as(arr[i] * 2 + i)
        k = ti.Scalar("int32", init_value=2)
        ub["o"][0].set_as(arr[0])
        ub["o"][1].set_as(arr[3])
        ub["o"][2].set_as(arr[k])
        arr[-1].set_as(5)
        ub["o"][3].set_as(arr[3])
    out = vec_kernel({"o": np.zeros(4, np.int64)}, body)["o"]
    np.testing.assert_array_equal(out, [20, 83, 62, 5])


def test_scalar_array_errors():
    with raises_tik(IllegalOperand, match="out of range of ScalarArray"):
        vec_kernel({"o": np.zeros(4, np.int64)}, lambda ti, ub: ti.ScalarArray("int32", 2)[2], build_only=True)
    with raises_tik(IllegalOperand, match="init_value has 3 entries"):
        vec_kernel({"o": np.zeros(4, np.int64)}, lambda ti, ub: ti.ScalarArray("int32", 2, "a", [1, 2, 3]),
                   build_only=True)
    with raises_tik(UnknownName, match="not a TIK scalar dtype"):
        vec_kernel({"o": np.zeros(4, np.int64)}, lambda ti, ub: ti.ScalarArray("float64", 2), build_only=True)
    with raises_tik(IllegalOperand, match="length should be a positive int"):
        vec_kernel({"o": np.zeros(4, np.int64)}, lambda ti, ub: ti.ScalarArray("int32", 0), build_only=True)


def test_tensor_addr_list():
    def body(ti, ub):
        lst = ti.TensorAddrList(4, scope="local.UB", name="addrs")
        lst[0].set_as(ti.Scalar("int64", init_value=1234))
        lst[1].set_as(77)
        ub["o"][0].set_as(lst.value[0])
        ub["o"][1].set_as(lst[1])
    out = vec_kernel({"o": np.zeros(4, np.int64)}, body)["o"]
    np.testing.assert_array_equal(out[:2], [1234, 77])
    with raises_tik(IllegalOperand, match="scope out of TensorAddrList Scope"):
        vec_kernel({"o": np.zeros(4, np.int64)}, lambda ti, ub: ti.TensorAddrList(4, scope="local.L1", name="a"),
                   build_only=True)
    with raises_tik(IllegalOperand, match="value's dtype should be int64"):
        vec_kernel({"o": np.zeros(4, np.int64)},
                   lambda ti, ub: ti.TensorAddrList(4, scope="local.UB", name="a")[0].set_as(ti.Scalar("int32")),
                   build_only=True)


def _addr_list_kernel(deref: bool):
    """A GM address list copied to UB (TIK's legal use) and, with ``deref``, its entry 1 dereferenced as
    a data_move source the way IndexSDK's distance_ivf_sq8_ip8_accum does (``lst[i].value``)."""
    ti = tik.Tik()
    lst = ti.TensorAddrList(4, name="lst", scope=tik.scope_gm)
    out = ti.Tensor("int64", (4,), name="out", scope=tik.scope_gm)
    lst_ub = ti.TensorAddrList(4, name="lst_ub", scope=tik.scope_ubuf)
    ti.data_move(lst_ub, lst, 0, 1, 1, 0, 0)
    res = ti.Tensor("int64", (4,), name="res", scope=tik.scope_ubuf)
    if deref:
        ti.data_move(res, lst_ub[1].value, 0, 1, 1, 0, 0)          # line checked below
    else:
        ti.data_move(res, lst_ub.value, 0, 1, 1, 0, 0)
    ti.data_move(out, res, 0, 1, 1, 0, 0)
    ti.BuildCCE("addr_list", inputs=[lst], outputs=[out])
    return ti


def test_tensor_addr_list_copy_and_entry_dereference():
    addrs = np.array([4096, 8192, 12288, 16384], np.int64)
    out, = _addr_list_kernel(False).tikdb.start_debug({"lst": addrs}, interactive=False)
    np.testing.assert_array_equal(out, addrs)
    # ADDR_LIST_DEREF: the buffer at an entry's address is not modelled -- a clear UnsupportedOp at the
    # user's line, not the entry's own bytes read as data
    with raises_tik(UnsupportedOp, match=r"'lst_ub'\[i\]\.value is the GM buffer at the address") as e:
        _addr_list_kernel(True)
    assert "test_scalar_extra.py" in str(e.value) and "TensorAddrList.value" in str(e.value)


def test_bit_counts_against_python():
    rng = np.random.default_rng(0)
    vals = [0, 1, 2 ** 64 - 1, 2 ** 63] + [int(v) for v in rng.integers(0, 2 ** 63, 12, dtype=np.uint64)]
    vals += [v >> int(s) for v, s in zip(vals[4:], rng.integers(0, 64, 12))]

    def body(ti, ub):
        for i, v in enumerate(vals):
            src = ti.Scalar("uint64", init_value=v)
            for j, api in enumerate(("scalar_countbit1", "scalar_countbit0", "scalar_countleading0")):
                d = ti.Scalar("uint64")
                getattr(ti, api)(d, src)
                ub["o"][3 * i + j].set_as(d)
    n = 3 * len(vals)
    out = vec_kernel({"o": np.zeros(-(-n // 4) * 4, np.uint64)}, body)["o"]
    for i, v in enumerate(vals):
        assert out[3 * i] == bin(v).count("1")
        assert out[3 * i + 1] == 64 - bin(v).count("1")
        assert out[3 * i + 2] == 64 - v.bit_length()


def test_bit_count_errors():
    with raises_tik(IllegalOperand, match="src's dtype should be equal to dst's dtype"):
        vec_kernel({"o": np.zeros(4, np.int64)},
                   lambda ti, ub: ti.scalar_countbit1(ti.Scalar("uint64"), ti.Scalar("int32")), build_only=True)
    with raises_tik(IllegalOperand, match="does not support int32"):
        vec_kernel({"o": np.zeros(4, np.int64)},
                   lambda ti, ub: ti.scalar_countbit1(ti.Scalar("int32"), 5), build_only=True)
    with raises_tik(IllegalOperand, match="dst should be Scalar"):
        vec_kernel({"o": np.zeros(4, np.int64)}, lambda ti, ub: ti.scalar_countleading0(5, 5), build_only=True)


@pytest.mark.parametrize("dtype", ["int32", "float16"])
def test_scalar_array_dtypes(dtype):
    def body(ti, ub):
        arr = ti.ScalarArray(dtype, 2, "a", init_value=3)
        ub["o"][0].set_as(arr[1])
    out = vec_kernel({"o": np.zeros(16, np.dtype(dtype))}, body)["o"]
    assert out[0] == 3


# ---------------------------------------------------------------------------------------------
# printf: run-time values of Scalars / Exprs / numbers, printed during start_debug

def test_printf_prints_run_time_values_per_core(capsys):
    ti = tik.Tik()
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    with ti.for_range(0, 2, block_num=2) as core:
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        s = ti.Scalar("int32", init_value=10)
        f = ti.Scalar("float32", init_value=0.25)
        with ti.for_range(0, 2) as i:
            s.set_as(s + i + core * 100)
            ti.printf("core %d i=%d s=%03d f=%.2f %s\n", core, i, s, f * 2, 7)
        ti.vec_dup(8, ub, s, 1, 8)
        with ti.if_scope(core == 0):
            ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="pf", inputs=[], outputs=[y])
    capsys.readouterr()
    out, = ti.tikdb.start_debug({}, interactive=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["core 0 i=0 s=010 f=0.50 7", "core 0 i=1 s=011 f=0.50 7",
                     "core 1 i=0 s=110 f=0.50 7", "core 1 i=1 s=211 f=0.50 7"]
    assert (out == 11).all()
    with raises_tik(UnsupportedOp, match=r"printf of a Tensor \(its contents\) is not simulated"):
        ti2 = tik.Tik()
        t = ti2.Tensor("int32", (8,), name="t", scope=tik.scope_ubuf)
        ti2.printf("%d", t)
    with raises_tik(IllegalOperand, match=r"format 'a=%d b=%d' has 2 conversion\(s\) for 1 value\(s\)"):
        ti3 = tik.Tik()
        ti3.printf("a=%d b=%d", 1)


# ---------------------------------------------------------------------------------------------
# set_printf_params: TIK's ranges and rules; screen / file output; longer format strings

def _printf_kernel(ti, cores=2, fmt="core %d\n"):
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    with ti.for_range(0, cores, block_num=cores) as core:
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.printf(fmt, core)
        ti.vec_dup(8, ub, 5, 1, 8)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="pfp", inputs=[], outputs=[y])
    return ti


def test_set_printf_params_off_screen_to_a_file(capsys, tmp_path):
    ti = tik.Tik()
    ti.set_printf_params(1, 256, is_printf_to_screen=False, printf_file_path=str(tmp_path / "logs"))
    long_fmt = "x" * 219 + " %d\n"                           # 224 = 256 - 32 characters (over the default 128)
    _printf_kernel(ti, 2, long_fmt)
    capsys.readouterr()
    out, = ti.tikdb.start_debug({}, interactive=False)
    assert capsys.readouterr().out == "" and (out == 5).all()
    assert (tmp_path / "logs" / "pfp.txt").read_text() == "x" * 219 + " 0\n" + "x" * 219 + " 1\n"
    assert [t for _, t in ti.tikdb.executable.machine.printed] == ["x" * 219 + " 0\n", "x" * 219 + " 1\n"]
    ti2 = tik.Tik()                                          # defaults: on screen, no file
    ti2.set_printf_params()
    _printf_kernel(ti2, 1)
    capsys.readouterr()
    ti2.tikdb.start_debug({}, interactive=False)
    assert capsys.readouterr().out == "core 0\n"


def test_set_printf_params_errors():
    ti = tik.Tik()
    ti.set_printf_params(1, 64)
    with raises_tik(IllegalOperand, match="set_printf_params can be called only once in a kernel"):
        ti.set_printf_params(1, 64)
    with raises_tik(IllegalOperand, match=r"format_string has 33 characters \(limit: 32 characters "
                                          r"\(single_print_length - 32\)\)"):
        ti.printf("y" * 33)
    ti = tik.Tik()
    ti.printf("a\n")
    with raises_tik(IllegalOperand, match="set_printf_params must be called before every printf; a printf is at"):
        ti.set_printf_params()
    ti = tik.Tik()
    for args, msg in [((0,), r"print_workspace_size = 0 is outside \[1, 32768\]"),
                      ((32769,), r"print_workspace_size = 32769 is outside \[1, 32768\]"),
                      ((1, 32), r"single_print_length = 32 is outside \[64, 1048544\]"),
                      ((1, 100), "single_print_length 100 must be a multiple of 32 bytes"),
                      ((1.5,), "print_workspace_size must be an immediate int"),
                      ((1, 64, 1), "is_printf_to_screen must be a bool"),
                      ((1, 64, True, ""), "printf_file_path must be None or a non-empty str")]:
        with raises_tik(IllegalOperand, match=msg):
            ti.set_printf_params(*args)
    ti = tik.Tik()
    ti.set_printf_params(1, 256)
    with raises_tik(IllegalOperand, match=r"set_printf_params: print_workspace_size\*1024\*1024 = 1048576 is not "
                                          r"divisible by block_num 3"):
        _printf_kernel(ti, 3)
    ti = tik.Tik()
    ti.set_printf_params(1, 1048544)
    with raises_tik(IllegalOperand, match=r"is less than block_num \* \(32 \+ single_print_length\) = 2097152"):
        _printf_kernel(ti, 2)
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match=r"format_string has 129 characters \(limit: 128 characters\)"):
        ti.printf("z" * 129)


def _array_index_kernel(store: bool, guarded: bool = False):
    def body(ti, ub):
        arr = ti.ScalarArray("int32", 4, "lut", [5, 6, 7, 8])
        with ti.for_range(0, 8) as i:
            if store:
                arr[i].set_as(i)
            elif guarded:           # C's && short-circuits: arr[i] is read only for i < 4
                with ti.if_scope(tik.all(i < 4, arr[i] > 6)):
                    ub["o"][i].set_as(arr[i])
            else:
                with ti.if_scope(arr[i] > 6):
                    ub["o"][i].set_as(1)
        ub["o"][0].set_as(arr[3])
    return vec_kernel({"o": np.zeros(8, np.int32)}, body)["o"]


def test_scalar_array_runtime_index_out_of_range_is_an_error():
    """SCALAR_ARRAY_RUNTIME_INDEX: a run-time index outside [0, length) reads an undefined value
    (an error where it is used) and a store through it stops the run; it used to read 0 and drop the
    store silently."""
    with raises_tik(UninitializedRead, match=r"outside \[0, 4\) of ScalarArray 'lut'"):
        _array_index_kernel(store=False)
    with raises_tik(IllegalOperand, match="index of ScalarArray 'lut'"):
        _array_index_kernel(store=True)
    out = _array_index_kernel(store=False, guarded=True)     # a legal kernel still runs
    np.testing.assert_array_equal(out, [8, 0, 7, 8, 0, 0, 0, 0])
