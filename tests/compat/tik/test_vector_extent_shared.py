"""One instruction's operands with the same mask, run-time repeat and strides share one extent expression
(`VectorBase._vec_extent` builds it once): each operand is still checked against its own tensor when the op
runs, and the failing one is named at the user's line."""
import inspect

import numpy as np
import pytest

from pto_core.errors import OutOfBounds

from .helpers import raises_tik
from .vec_helpers import vec_kernel


def _body(ti, ub):
    rep = ti.Scalar("int32", name="rep", init_value=ub["n"])
    ti.vadd(64, ub["d"], ub["a"], ub["b"], rep, 1, 1, 1, 8, 8, 8)  # LINE-vadd


_LINE = next(i for i, s in enumerate(inspect.getsource(inspect.getmodule(_body)).splitlines(), 1)
             if s.endswith("# LINE-vadd"))


def _bufs(nd=128, na=128, nb=128):
    return {"d": np.zeros(nd, np.float32), "a": np.arange(na, dtype=np.float32),
            "b": np.full(nb, 2.0, np.float32)}


def test_shared_extent_in_bounds_runs():
    out = vec_kernel(_bufs(), _body, chip="Ascend910B1", scalars={"n": ("int32", 2)})["d"]
    np.testing.assert_array_equal(out, np.arange(128, dtype=np.float32) + 2)


@pytest.mark.parametrize("short,what", [("nd", "dst (tensor 'd_ub')"), ("na", "src0 (tensor 'a_ub')"),
                                        ("nb", "src1 (tensor 'b_ub')")])
def test_shared_extent_each_operand_is_checked(short, what):
    with raises_tik(OutOfBounds) as ei:
        vec_kernel(_bufs(**{short: 64}), _body, chip="Ascend910B1", scalars={"n": ("int32", 2)})
    assert what in str(ei.value), str(ei.value)
    assert ei.value.where.line == _LINE and ei.value.where.file.endswith("test_vector_extent_shared.py")
