"""The user's ``file:line`` of TIK calls (`errors._user_site`): the walk for it starts at the ``with`` of the
API call (`_ApiCall.__enter__` passes that frame) and a user frame's line is memoised by code object and
instruction (`errors._FRAME_SITES`). Both are speed-ups only: every recorded statement keeps the line of the
call that made it -- calls in a Python loop, on two lines of one loop body, in a helper, in a rebuilt kernel
and under a tracer."""
import inspect
import sys

from pto_core import program as P
from tbe import tik
from tbe_compat.tik import errors as tik_errors

HERE = __file__


def _kernel(n: int):
    ti = tik.Tik()
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    for i in range(n):
        ti.vec_dup(128, ub, float(i), 1, 8)                 # LINE_A
        ti.vec_dup(64, ub, 1.0, 1, 8)                       # LINE_B
    _helper(ti, ub)
    return ti


def _helper(ti, ub):
    ti.vec_dup(32, ub, 2.0, 1, 8)                           # LINE_C


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def _dup_lines(ti) -> list:
    """``(file, line)`` of every vector_dup-family op the kernel recorded, in program order."""
    out = []
    for s in P.walk_stmts(ti._builder.program.body):
        if isinstance(s, P.OpStmt) and s.call.spec.family != "sync" and s.call.where is not None and \
                s.call.where.call == "tik.vec_dup":
            out.append((s.call.where.file, s.call.where.line))
    return out


def _expected(n: int) -> list:
    a, b, c = _line(_kernel, "# LINE_A"), _line(_kernel, "# LINE_B"), _line(_helper, "# LINE_C")
    return [(HERE, a), (HERE, b)] * n + [(HERE, c)]


def test_loop_and_helper_lines_and_rebuild():
    first = _dup_lines(_kernel(3))
    assert first == _expected(3)
    again = _dup_lines(_kernel(3))                   # a rebuilt kernel reads the memo: the same lines
    assert again == first
    code = _kernel.__code__
    assert any(hit[0] is code for hit in tik_errors._FRAME_SITES.values())   # the user's frame was memoised


def test_lines_under_a_tracer():
    base = _dup_lines(_kernel(2))
    seen = []

    def tracer(frame, event, arg):
        if frame.f_code is _kernel.__code__ and event == "line":
            seen.append(frame.f_lineno)
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        traced = _dup_lines(_kernel(2))
    finally:
        sys.settrace(old)
    assert seen and traced == base == _expected(2)
