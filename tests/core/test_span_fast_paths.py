"""`memory.INLINE_ON_CHIP_SPANS`: `ExecContext.span` / `span_tracked` of a looked-up on-chip buffer check bounds
and known-written ranges themselves instead of calling `_locate_at` / `_all_written`. Differential tests: random
sequences of span accesses (in and out of bounds, negative, GM, fenced, over unwritten bytes, after a block's
buffers were released) under every ``uninitialized`` mode, and compiled kernels whose copy leaves UB or reads
unwritten bytes on a later loop trip, give the same results, errors, reports and memory with the fast path on
and off.
"""
import random
import warnings

import numpy as np
import pytest

from pto_core import Machine, MachineOptions, pto
from pto_core import memory
from pto_core.errors import FencedProvenance, Provenance, PtoError

SPACES = ("ub", "l1", "l0a", "gm")


def _state(m, ctx, g):
    bufs = [ctx.core.buffer(s) for s in ("ub", "l1", "l0a")] + [g.buffer]
    return ([(b.data.tobytes(), np.asarray(b.written).tobytes(), list(b.known), list(b.held)) for b in bufs],
            list(m.reports), m.reports_dropped)


def _sequence(seed):
    """One random access sequence: its steps and machine options."""
    r = random.Random(seed)
    mode = r.choice(("raise", "record", "warn", "off"))
    steps = []
    for i in range(r.randint(10, 40)):
        space = r.choice(SPACES)
        size = {"ub": 192 * 1024, "l1": 512 * 1024, "l0a": 64 * 1024, "gm": 4096}[space]
        base = r.choice((0, 64, 256, size - 512, size - 64, size, -32, 0x1000 % size))
        lo, hi = sorted((r.randrange(-64, 96), r.randrange(-64, 96)))
        kind = r.choice(("span", "tracked", "tracked"))
        write = r.random() < 0.4
        fence = None
        if r.random() < 0.15:
            flo = r.choice((0, 256))
            fence = ((space if space != "gm" else "ub", flo, flo + 256, "t"),)
        release = r.random() < 0.05
        steps.append((space, base, lo, hi, kind, write, fence, release, r.randrange(256), r.random() < 0.3))
    return MachineOptions(uninitialized=mode, max_reports=r.choice((3, 1000))), steps


def _run(options, steps):
    m = Machine("A2A3", options=options)
    ctx = m.context(0)
    g = m.gm.alloc(4096, name="g")
    out = []
    for i, (space, base, lo, hi, kind, write, fence, release, v, whole) in enumerate(steps):
        if release:
            m.release_core(0)
        where = FencedProvenance("k.py", i, fences=fence) if fence else Provenance("k.py", i)
        ctx.begin_op(f"op{i}", "MTE2", where)
        addr = g.base + base if space == "gm" else base
        ptr = memory.Ptr(space, memory._dtype("u8"), addr, 0, ctx)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                if kind == "span":
                    view, origin = ctx.span(ptr, lo, hi, write=write, operand="x")
                    got = (view.tobytes(), origin, view.flags.writeable)
                    if write:
                        view[:] = v
                else:
                    view, flags, origin = ctx.span_tracked(ptr, lo, hi, write=write, operand="x")
                    got = (view.tobytes(), flags.tobytes(), origin, flags.flags.writeable,
                           memory.all_written(flags))
                    if write:
                        view[:] = v
                        flags[:] = whole       # an op that writes some bytes and leaves others undefined
                    elif not whole:
                        ctx.check_written(flags, operand="x", ptr=ptr)
            out.append(("ok", got, [str(x.message) for x in w]))
        except PtoError as e:
            out.append((type(e).__name__, str(e)))
        out.append(_state(m, ctx, g))
    return out


@pytest.mark.parametrize("seed", range(120))
def test_inline_spans_equal_the_general_path(monkeypatch, seed):
    options, steps = _sequence(seed)
    got = {}
    for on in (True, False):
        monkeypatch.setattr(memory, "INLINE_ON_CHIP_SPANS", on)
        got[on] = _run(options, steps)
    assert got[True] == got[False]


def test_random_sequences_reach_every_outcome(monkeypatch):
    """The sequences above are not vacuous: they hit out-of-bounds and fence errors, uninitialised reads
    (raised and recorded) and successful reads of known-written and unwritten ranges."""
    seen = set()
    for seed in range(120):
        options, steps = _sequence(seed)
        for res in _run(options, steps)[::2]:
            if res[0] == "ok":
                seen.add(("ok", len(res[1]), res[1][-1] if len(res[1]) == 5 else None))
            else:
                seen.add((res[0], "outside the tensor" in res[1]))
    assert {("OutOfBounds", False), ("OutOfBounds", True), ("UninitializedRead", False),
            ("ok", 3, None), ("ok", 5, True), ("ok", 5, False)} <= seen, seen


def _loop_kernel(trips, ub_step, read_step):
    """A compiled kernel that copies 256 bytes GM -> UB at ``i * ub_step`` per trip ``i`` (out of UB on a late
    trip when ``ub_step`` is large) and 256 bytes from UB ``i * read_step`` back to GM (bytes nothing wrote
    from the second trip on when ``read_step`` differs: moves carry the written flags, the output has bytes
    the kernel did not write)."""
    from pto_core.program import program
    with program("spanloop", target="A2A3") as k:
        x = k.gm_arg("x", "u8", (256,))
        y = k.gm_arg("y", "u8", (256 * trips,), io="out")
        with k.for_(0, trips, dtype="s32") as i:
            pto.mte_gm_ub(x, k.ptr("ub", "u8", 0) + i * ub_step, 0, 256, nburst=(1, 256, 256))
            pto.set_flag("MTE2", "MTE3", 0)
            pto.wait_flag("MTE2", "MTE3", 0)
            pto.mte_ub_gm(k.ptr("ub", "u8", 0) + i * read_step, y + i * 256, 256, nburst=(1, 256, 256))
            pto.set_flag("MTE3", "MTE2", 0)
            pto.wait_flag("MTE3", "MTE2", 0)
    return k.program


@pytest.mark.parametrize("ub_step, read_step", [
    (0x8000, 0x8000),          # trips 0..5 fit in UB (192 KiB), trip 6 does not
    (0x8000, 0),               # the loads leave UB on trip 6, the reads do not
    (0, 128),                  # trip 1 copies back 128 bytes nothing wrote, later trips 256
    (0x400, 0x400),            # clean
])
def test_compiled_loops_fail_on_the_same_trip_with_the_same_error(monkeypatch, ub_step, read_step):
    from pto_core.interpreter import compile_program
    x = np.arange(256, dtype=np.uint8)
    got = {}
    for on in (True, False):
        monkeypatch.setattr(memory, "INLINE_ON_CHIP_SPANS", on)
        exe = compile_program(_loop_kernel(8, ub_step, read_step), ())
        try:
            out = exe.run({"x": x})["y"].tobytes()
            got[on] = ("ok", out, exe.reports, exe.unwritten_outputs)
        except PtoError as e:
            got[on] = (type(e).__name__, str(e), e.where, exe.machine.gm.region("y").buffer.data.tobytes())
    assert got[True] == got[False]
    if ub_step == 0x8000:
        assert got[True][0] == "OutOfBounds" and "outside ub" in got[True][1], got[True][:2]
        assert got[True][3][:6 * 256] == x.tobytes() * 6       # trips 0..5 ran
    elif read_step == 128:
        assert got[True][0] == "ok" and got[True][3] == {"y": (128 + 6 * 256, 8 * 256, 256 + 128)}, got[True][3]
    else:
        assert got[True] == ("ok", x.tobytes() * 8, [], {})
