"""ScalarArray (constant and run-time indices), TensorAddrList, and the bit-count scalar
instructions (property test over random 64-bit values against Python's int.bit_count)."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, UnknownName

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
