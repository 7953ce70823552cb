"""Helpers for TIK facade tests."""
import numpy as np
import pytest

from tbe import tik


def build(ti, name="k", inputs=(), outputs=(), **kw):
    ti.BuildCCE(kernel_name=name, inputs=list(inputs), outputs=list(outputs), **kw)
    return ti


def run(ti, feed=None):
    """start_debug with interactive=False; returns the list of outputs."""
    return ti.tikdb.start_debug(feed_dict=feed or {}, interactive=False)


def copy_kernel(dtype="float16", n=128, chip=None):
    """GM -> UB -> GM copy of n elements (n a multiple of a 32-byte block)."""
    ti = tik.Tik()
    x = ti.Tensor(dtype, (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor(dtype, (n,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor(dtype, (n,), name="ub", scope=tik.scope_ubuf)
    per = 32 // np.dtype(np.float16 if dtype == "float16" else dtype).itemsize
    ti.data_move(ub, x, 0, 1, n // per, 0, 0)
    ti.data_move(y, ub, 0, 1, n // per, 0, 0)
    return build(ti, "copy", [x], [y])


def raises_tik(cls=Exception, match=None):
    """pytest.raises for a facade error: also asserts it is a SystemExit and a RuntimeError (CANN behaviour)."""
    return _TikRaises(cls, match)


class _TikRaises:
    def __init__(self, cls, match):
        self._ctx = pytest.raises(cls, match=match)

    def __enter__(self):
        self.info = self._ctx.__enter__()
        return self.info

    def __exit__(self, *exc):
        out = self._ctx.__exit__(*exc)
        if not out:
            return out
        e = self.info.value
        assert isinstance(e, SystemExit) and isinstance(e, RuntimeError), type(e).__mro__
        return out
