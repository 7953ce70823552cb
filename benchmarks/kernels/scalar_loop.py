"""A scalar-unit kernel: ``for_range(0, 100000)`` of ``Scalar`` int32 arithmetic with an ``if_scope``.

Per iteration: ``acc = acc + i * 3``; if ``acc > 1000000``: ``acc = acc - 1000000`` and
``wraps = wraps + 1``; ``mix = (mix ^ i) & 0xFFFF``. The two results go to GM through UB
(``tensor[i].set_as`` + ``data_move``).

Baseline: the same loop in plain Python (``for i in range(n)`` over ints).
"""
from __future__ import annotations

import numpy as np
from tbe import tik
from tbe_compat import platform

N = 100_000


def build(n: int = N):
    platform.reset_platform()
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    acc = ti.Scalar("int32", name="acc", init_value=0)
    wraps = ti.Scalar("int32", name="wraps", init_value=0)
    mix = ti.Scalar("int32", name="mix", init_value=0)
    with ti.for_range(0, n) as i:
        acc.set_as(acc + i * 3)
        with ti.if_scope(acc > 1000000):
            acc.set_as(acc - 1000000)
            wraps.set_as(wraps + 1)
        mix.set_as((mix ^ i) & 0xFFFF)
    ub[0].set_as(acc)
    ub[1].set_as(wraps)
    ub[2].set_as(mix)
    for k in range(3, 8):
        ub[k].set_as(0)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="bench_scalar_loop", inputs=[], outputs=[out])
    return ti


def inputs(n: int = N) -> dict:
    return {}


def plain(n: int):
    acc = wraps = mix = 0
    for i in range(0, n):
        acc = acc + i * 3
        if acc > 1000000:
            acc = acc - 1000000
            wraps = wraps + 1
        mix = (mix ^ i) & 0xFFFF
    return acc, wraps, mix


def baseline(feed: dict, n: int = N):
    return lambda: plain(n)


def check(outputs, feed: dict, n: int = N) -> None:
    want = np.array(list(plain(n)) + [0] * 5, np.int32)
    if not np.array_equal(outputs[0], want):
        raise AssertionError(f"scalar loop: got {outputs[0].tolist()}, want {want.tolist()}")
