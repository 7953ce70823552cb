"""Differential fuzz of the hazard verifier's and the flag ops' speed paths against their general forms.

* `ops.sync.FLAG_BIND`: compiled ``set_flag`` / ``wait_flag`` with compile-time operands run as whole ops (the
  verifier counts them on pipe S and records the previous op's accesses at the next op);
* `checks.hazards.RECORD_AT_ONCE`: during a compiled run the verifier records each access as it checks it, not
  when the next op begins;
* `checks.shadow.TILE_SHADOWS`: a buffer whose accesses so far all covered one block range keeps its history as
  one writer stamp and per-pipe read epochs until another range (or a check of its blocks) needs the maps;
* `checks.hazards.BATCH_RUN_RECORDS`: a burst access of several rows (a FIXPIPE store) is recorded with one
  `BlockMap.assign_ranges` per map instead of one `BlockMap.assign` per row (tests at the end of this file);
* `HazardTracker.on_access_rmw` (`memory.RMW_SPANS`): a read and a write of the same bytes by one op checked and
  recorded in one call when neither can conflict (the last test).

Random compiled programs of the test stand-in ops (`sync_standins`: copies, reads, writes, read-modify-writes on
every pipe, a mad and a FIXPIPE with unit flags), flags (right, missing, wrong event id, swapped pipes, set twice,
left set), ``_dyn`` flags, barriers and, on A5, buffer ids, some inside loops (a hazard or a deadlock on a later
trip), with ``hazard_same_pipe`` "ordered" and "barrier", run with each path on and off: the same first error
(class, text, provenance), reports and output bytes.
"""
import importlib
import random

import pytest

from pto_core import Machine, MachineOptions, pto
from pto_core.checks import hazards, shadow
from pto_core.ops import sync

importlib.import_module("sync_standins")        # registers the t_* stand-in ops

PIPES = ("MTE2", "MTE1", "V", "MTE3", "FIX", "M", "S")
COPY = {"MTE2": "t_mte2", "MTE1": "t_mte1", "MTE3": "t_mte3", "V": "t_vec", "FIX": "t_fix", "M": "t_cube",
        "S": "t_scalar"}
#: (space, byte address) slots the ops pick from: overlapping ranges in UB and L1, one L0 tile each
SLOTS = (("ub", 0), ("ub", 0x100), ("ub", 0x400), ("ub", 0x1000), ("l1", 0), ("l1", 0x200))
SIZES = (32, 64, 256, 512, 1024)


def _op(r, g, ptr, pipe):
    """``(pipe it runs on, emit)`` of one data op meant for ``pipe`` (or a mad / FIXPIPE with a unit flag, an L0
    tile write)."""
    kind = r.random()
    n = r.choice(SIZES)
    uf = r.random() < 0.5
    if kind < 0.1:
        flag = {"unit_flag": r.choice(("check_only", "check_and_set"))} if uf else {}
        return "M", lambda: pto.t_mad(ptr("l0a", 0), ptr("l0b", 0), ptr("l0c", 0), 512, **flag)
    if kind < 0.2:
        flag = {"unit_flag": r.choice(("check_only", "check_and_clear"))} if uf else {}
        dst = r.choice((g, ptr("ub", 0x800)))
        return "FIX", lambda: pto.t_fixpipe(ptr("l0c", 0), dst, 512, **flag)
    if kind < 0.25:
        tile, v = r.choice(("l0a", "l0b")), r.randrange(256)
        return "MTE1", lambda: pto.t_write_mte1(ptr(tile, 0), 512, v)
    slot, v = ptr(*r.choice(SLOTS)), r.randrange(256)
    if kind < 0.45:
        what = r.choice(("read", "write", "rmw"))
        fn = getattr(pto, f"t_{what}_{pipe.lower()}")
        return pipe, lambda: fn(slot, n, *(() if what == "read" else (v,)))
    src = g if r.random() < 0.3 else ptr(*r.choice(SLOTS))
    return pipe, lambda: getattr(pto, COPY[pipe])(src, slot, n)


def _sync(r, target, prev, cur, strict):
    """The edge before an op on ``cur`` after one on ``prev``: usually right, sometimes missing or wrong."""
    ev = r.randrange(4)
    x = r.random()
    if prev == cur:
        if strict and cur != "S" and x < 0.95:
            pto.pipe_barrier(cur)                                 # hazard_same_pipe="barrier" needs one
        return
    if x < 0.03:
        return                                                   # missing
    if x < 0.045:
        pto.set_flag(prev, cur, ev)                               # left set (or set twice on a later trip)
        return
    if x < 0.055:
        pto.wait_flag(prev, cur, ev)                              # deadlock
        return
    if x < 0.065:
        pto.set_flag(prev, cur, ev)
        pto.wait_flag(cur, prev, ev)                              # swapped pipes
        return
    if x < 0.075:
        pto.set_flag(prev, cur, 5)                                # event id 5: an error on Ascend910A
        pto.wait_flag(prev, cur, 5)
        return
    if x < 0.1:
        pto.pipe_barrier("ALL")
        return
    if x < 0.11:
        pto.pipe_barrier(prev if prev != "S" else "V")           # orders prev with itself only
        return
    if x < 0.16:
        pto.set_flag_dyn(prev, cur, ev)                           # the _dyn forms (their own bind)
        pto.wait_flag_dyn(prev, cur, ev)
        return
    if x < 0.2 and target == "A5":
        bid = r.randrange(3)
        pto.get_buf(prev, bid)
        pto.rls_buf(prev, bid, 0)
        pto.get_buf(cur, bid)
        pto.rls_buf(cur, bid, 0)
        return
    pto.set_flag(prev, cur, f"EVENT_ID{ev}" if r.random() < 0.3 else ev)
    pto.wait_flag(prev, cur, ev)


def _program(seed):
    from pto_core.program import program
    r = random.Random(seed)
    target = r.choice(("A2A3", "A5"))
    with program(f"fuzz{seed}", target=target) as k:
        g = k.gm_arg("g", "u8", (4096,), io="out", init=1)
        ptrs = {}

        def ptr(space, addr):
            key = (space, addr)
            if key not in ptrs:
                ptrs[key] = k.ptr(space, "u8", addr)
            return ptrs[key]

        strict = r.random() < 0.3
        pto.t_mte2(g, ptr("ub", 0), 4096)                       # something written to start from
        pto.t_mte2(g, ptr("l1", 0), 2048)
        pto.set_flag("MTE2", "MTE1", 0)
        pto.wait_flag("MTE2", "MTE1", 0)
        pto.t_mte1(ptr("l1", 0), ptr("l0a", 0), 512)
        pto.t_mte1(ptr("l1", 0), ptr("l0b", 0), 512)
        prev = "MTE1"
        for _ in range(r.randint(2, 4)):
            loop = r.random() < 0.5
            scope = k.for_(0, r.randint(2, 3), dtype="s32") if loop else None
            if scope is not None:
                scope.__enter__()
            for _ in range(r.randint(1, 4)):
                cur, emit = _op(r, g, ptr, r.choice(PIPES))
                _sync(r, target, prev, cur, strict)
                emit()
                prev = cur
            if scope is not None:
                scope.__exit__(None, None, None)
        if r.random() < 0.7:
            _sync(r, target, prev, "MTE3", strict)
            pto.t_mte3(ptr("ub", 0x100), g, 512)
    options = MachineOptions(hazard_same_pipe="barrier" if strict else "ordered",
                             uninitialized=r.choice(("record", "record", "raise")))
    machine = "Ascend910A" if r.random() < 0.2 else target       # 4 event ids: EVENT_ID5 fails when it runs
    return k.program, machine, options


def _outcome(prog, target, options):
    from pto_core.interpreter import compile_program
    exe = compile_program(prog, ())            # a new compile: the paths are chosen when ops are bound
    try:
        out = exe.run({}, machine=Machine(target, options=options))
        err = None
    except Exception as e:                                     # noqa: BLE001 - compared between the paths
        out, err = None, (type(e).__name__, str(e), e.where)
    return err, list(exe.reports), None if out is None else out["g"].tobytes()


def _both(monkeypatch, seed, flag):
    """The outcome of program ``seed`` with module flag ``flag`` (module, name) on and off."""
    prog, target, options = _program(seed)
    got = []
    for on in (True, False):
        monkeypatch.setattr(*flag, on)
        got.append(_outcome(prog, target, options))
    monkeypatch.undo()
    return got


@pytest.mark.parametrize("flag", [(sync, "FLAG_BIND"), (hazards, "RECORD_AT_ONCE"), (shadow, "TILE_SHADOWS")],
                         ids=lambda f: f[1])
def test_fast_path_equals_the_general_path_on_random_programs(monkeypatch, flag):
    kinds = {"ok": 0, "HazardError": 0, "SyncError": 0}
    for seed in range(150):
        fast, slow = _both(monkeypatch, seed, flag)
        assert fast == slow, seed
        kind = fast[0][0] if fast[0] else "ok"
        kinds[kind] = kinds.get(kind, 0) + 1
    # the programs reach every outcome: clean runs, hazards and protocol errors (a fuzz that cannot fail
    # on a wrong verdict would be no test)
    assert min(kinds["ok"], kinds["HazardError"], kinds["SyncError"]) >= 5, kinds


def test_bound_flag_ops_compile_to_whole_ops(monkeypatch):
    """The fuzz above compares two different forms: with `FLAG_BIND` a compiled set_flag / wait_flag is
    `ops.sync`'s own whole op, without it the interpreter's ``begin_op`` wrapper around the bound run."""
    from pto_core.interpreter import _bound_op
    from pto_core.ops.registry import OPS
    for name, owner in (("set_flag", "_bind_set"), ("wait_flag", "_bind_wait")):
        spec = OPS[name]
        for on in (True, False):
            monkeypatch.setattr(sync, "FLAG_BIND", on)
            op = _bound_op("pto." + name, "S", None, spec.execute, ("MTE2", "V", 0), {}, spec.bind)
            assert op.__qualname__.startswith(owner) is on


def _unit_flag_program():
    """A FIXPIPE read of L0C ordered before the next mad's write by a unit flag only (no set_flag from FIX to M),
    then one more mad write: that write is ordered after the first mad's, which cleared the FIXPIPE read."""
    from pto_core.program import program
    with program("unit_clear", target="A2A3") as k:
        g = k.gm_arg("g", "u8", (4096,), io="out", init=1)
        l1, l0a, l0b, l0c = (k.ptr(s, "u8", 0) for s in ("l1", "l0a", "l0b", "l0c"))
        pto.t_mte2(g, l1, 512)
        pto.set_flag("MTE2", "MTE1", 0)
        pto.wait_flag("MTE2", "MTE1", 0)
        pto.t_mte1(l1, l0a, 512)
        pto.t_mte1(l1, l0b, 512)
        pto.set_flag("MTE1", "M", 0)
        pto.wait_flag("MTE1", "M", 0)
        pto.t_mad(l0a, l0b, l0c, 512, unit_flag="check_and_set")
        pto.t_fixpipe(l0c, g, 512, unit_flag="check_and_clear")
        pto.t_mad(l0a, l0b, l0c, 512, unit_flag="check_only")    # WAR on the FIXPIPE read: the unit flag orders it
        pto.t_mad(l0a, l0b, l0c, 512)                             # after the mad above on M: nothing left to order
        pto.set_flag("M", "FIX", 0)
        pto.wait_flag("M", "FIX", 0)
        pto.t_fixpipe(l0c, g, 512)
    return k.program


def test_a_write_ordered_by_a_unit_flag_clears_the_reads_it_passed(monkeypatch):
    got = []
    for on in (True, False):
        monkeypatch.setattr(hazards, "RECORD_AT_ONCE", on)
        got.append(_outcome(_unit_flag_program(), "A2A3", MachineOptions()))
    assert got[0] == got[1]
    assert got[0][0] is None and got[0][2] is not None, got[0][0]


# ---------------------------------------------------------------------------- the tracker on its own

#: block ranges of a 64-block buffer the accesses pick from: one tile used again and again, the whole buffer,
#: overlapping and disjoint others
RANGES = ((0, 40), (0, 40), (0, 40), (0, 64), (8, 16), (40, 64), (39, 41))


def _history(sh):
    if sh is None:
        return None
    if sh.t1:
        sh.materialize()
    return (sh.w.array(0, sh.nblocks).tolist(), {q: r.array(0, sh.nblocks).tolist() for q, r in sh.r.items()},
            dict(sh.max_w), dict(sh.max_r))


def _values(hist):
    """What a history says about blocks: writer stamps, the read maps holding a read, newest writer epochs."""
    return [None if h is None else (h[0], {q: v for q, v in h[1].items() if any(v)}, h[2]) for h in hist]


def _bare_tracker():
    """A `HazardTracker` on a stand-in context ("ordered" same-pipe model), its run begun (recording at once)."""
    from types import SimpleNamespace
    ctx = SimpleNamespace(machine=SimpleNamespace(options=SimpleNamespace(hazard_same_pipe="ordered")),
                          sync_state=None, target=None)
    h = hazards.HazardTracker(ctx)
    h.begin_run()
    return h


def _flag(h, src: str, dst: str) -> None:
    """A set_flag on pipe ``src`` and its wait_flag on pipe ``dst``, as bound flag ops drive the tracker."""
    h.begin_sync_op()
    tok = h.flag_release(hazards.PIPE_INDEX[src])
    h.begin_sync_op()
    h.flag_acquire(hazards.PIPE_INDEX[dst], tok)


def _tracker_run(steps, at_once, tiles, monkeypatch):
    """``steps`` on a tracker of its own (``begin_run``: recording at once): (events, history of both buffers)."""
    from pto_core.errors import HazardError
    from pto_core.memory import Buffer
    monkeypatch.setattr(hazards, "RECORD_AT_ONCE", at_once)
    monkeypatch.setattr(shadow, "TILE_SHADOWS", tiles)
    h = _bare_tracker()
    bufs = [Buffer("l0a", 64 * 32, label="l0a"), Buffer("ub", 64 * 32, label="ub")]
    events = []
    for step in steps:
        if step[0] == "flag":
            _flag(h, step[1], step[2])
            continue
        if step[0] == "barrier":
            h.begin_op("pto.barrier", "S", None)
            h.barrier("ALL")
            continue
        _, pipe, accesses = step
        h.begin_op(f"op.{pipe}", pipe, None)
        try:
            for which, rng, write in accesses:
                b0, b1 = RANGES[rng]
                h.on_access(bufs[which], b0 * 32, b1 * 32, write, "x")
            events.append("ok")
        except HazardError as e:
            events.append((e.kind, e.byte_range, str(e)))
            h.begin_op("after", "S", None)     # a compiled run would end here; the test goes on from the history
    h.begin_op("end", "S", None)
    return events, [_history(h.shadows.get(b)) for b in bufs]


def test_tile_shadows_and_recording_at_once_keep_the_same_verdicts_and_history(monkeypatch):
    """Random ops of a few pipes on two buffers (one tile range used again and again, others now and then), with
    flags and barriers between some: the same errors (kind, bytes, text) and the same history (writer stamps,
    read epochs per pipe in the same order, newest epochs) with the tile form and recording at once on or off
    (deferred: the general path)."""
    pipes = ("MTE1", "M", "FIX", "MTE2")
    errors = 0
    for seed in range(400):
        r = random.Random(seed)
        steps = []
        for _ in range(r.randint(1, 14)):
            x = r.random()
            if x < 0.3:
                steps.append(("flag", r.choice(pipes), r.choice(pipes)))
            elif x < 0.38:
                steps.append(("barrier",))
            else:
                n = r.randint(1, 3)
                steps.append(("op", r.choice(pipes), [(int(r.random() < 0.3), r.randrange(len(RANGES)),
                                                       r.random() < 0.5) for _ in range(n)]))
        deferred = _tracker_run(steps, False, False, monkeypatch)
        at_once = _tracker_run(steps, True, False, monkeypatch)
        assert _tracker_run(steps, True, True, monkeypatch) == at_once, seed
        assert _tracker_run(steps, False, True, monkeypatch) == deferred, seed
        # recording at once records a read that a later write of its op covers (then clears it): a read map of
        # zeros more, a newer epoch in ``max_r``; every block's values are the same
        assert at_once[0] == deferred[0], seed
        assert _values(at_once[1]) == _values(deferred[1]), seed
        errors += any(ev != "ok" for ev in deferred[0])
    assert 40 <= errors <= 360, errors         # both verdicts are common


def _scalar_program():
    """Scalar-unit (pipe S) stores between bound flag ops, then an unsynchronised vector read of one of them."""
    from pto_core.program import program
    with program("scalar_names", target="A2A3") as k:
        g = k.gm_arg("g", "u8", (4096,), io="out", init=1)
        a, b = k.ptr("ub", "u8", 0), k.ptr("ub", "u8", 0x400)
        pto.t_mte2(g, a, 512)
        for _ in range(3):                                        # S counts these flag ops as its ops #1..#6
            pto.set_flag("MTE2", "S", 0)
            pto.wait_flag("MTE2", "S", 0)
        pto.t_write_s(b, 32, 7)                                   # PIPE_S op #7
        pto.set_flag("MTE2", "V", 1)
        pto.wait_flag("MTE2", "V", 1)
        pto.t_write_s(a, 32, 9)                                   # PIPE_S op #10
        pto.t_read_v(a, 64)                                       # RAW on the second store: no S -> V edge
    return k.program


def test_a_hazard_names_the_scalar_op_and_its_number_among_flag_ops(monkeypatch):
    got = []
    for on in (True, False):
        monkeypatch.setattr(sync, "FLAG_BIND", on)
        got.append(_outcome(_scalar_program(), "A2A3", MachineOptions()))
    assert got[0] == got[1]
    name, text, _ = got[0][0]
    assert name == "HazardError" and "pto.t_write_s (PIPE_S op #10 at" in text, text


def test_a_run_refused_before_it_starts_leaves_a_callers_machine_recording_as_before():
    """`Executable.run` on a caller's machine whose arguments do not bind (a scalar that does not fit) raises before
    the kernel starts: the machine's verifier must not stay in the compiled runs' record-at-once mode
    (`RECORD_AT_ONCE`), else an eager op refused after its first access (a GM read, then an out-of-bounds UB
    destination) left that read recorded and a later legal write of the bytes was a false WAR hazard."""
    import numpy as np

    from pto_core.errors import ConfigError, OutOfBounds
    from pto_core.interpreter import compile_program
    from pto_core.program import program
    with program("bind_fails", target="A2A3") as k:
        x = k.gm_arg("x", "u8", (256,))
        k.gm_arg("y", "u8", (256,), io="out")
        k.scalar_arg("n")
        pto.mte_gm_ub(x, k.ptr("ub", "u8", 0), 0, 256, nburst=(1, 256, 256))
    m = Machine("A2A3")
    with pytest.raises(ConfigError, match="does not fit"):
        compile_program(k.program, ()).run({"x": np.zeros(256, np.uint8), "n": 2 ** 40}, machine=m)
    g = m.gm.alloc(256, name="g")
    gp = m.ptr("gm", "u8", g.base)
    with pytest.raises(OutOfBounds, match="outside ub"):       # reads g, then its destination is refused
        pto.mte_gm_ub(gp, m.ptr("ub", "u8", 192 * 1024 - 128), 0, 256, nburst=(1, 256, 256))
    pto.mte_ub_gm(m.ptr("ub", "u8", 0), gp, 256, nburst=(1, 256, 256))    # no op read g: no hazard


@pytest.mark.parametrize("step", ["release_held", "end_kernel"])
def test_a_run_whose_end_raises_leaves_a_callers_machine_recording_as_before(step, monkeypatch):
    """The end of a compiled run can raise too (review429: `Machine.release_held` re-raises a warning the run held
    back when warnings are errors): the caller's machine must then be reset as after any failed run
    (`abort_kernel`), not stay in record-at-once mode (`RECORD_AT_ONCE`), where an eager op refused after its first
    access left that access recorded (a false WAR for a later legal write of the bytes)."""
    import numpy as np

    from pto_core.errors import OutOfBounds
    from pto_core.interpreter import compile_program
    from pto_core.memory import Machine as M
    from pto_core.program import program
    with program("end_fails", target="A2A3") as k:
        x = k.gm_arg("x", "u8", (256,))
        k.gm_arg("y", "u8", (256,), io="out")
        pto.mte_gm_ub(x, k.ptr("ub", "u8", 0), 0, 256, nburst=(1, 256, 256))
    m = Machine("A2A3")
    real = getattr(M, step)

    def failing(self, *a, **kw):
        real(self, *a, **kw) if step == "release_held" else None
        raise RuntimeWarning("a held warning turned into an error")
    monkeypatch.setattr(M, step, failing)
    with pytest.raises(RuntimeWarning, match="turned into an error"):
        compile_program(k.program, ()).run({"x": np.zeros(256, np.uint8)}, machine=m)
    monkeypatch.setattr(M, step, real)
    g = m.gm.alloc(256, name="g")
    gp = m.ptr("gm", "u8", g.base)
    with pytest.raises(OutOfBounds, match="outside ub"):       # reads g, then its destination is refused
        pto.mte_gm_ub(gp, m.ptr("ub", "u8", 192 * 1024 - 128), 0, 256, nburst=(1, 256, 256))
    pto.mte_ub_gm(m.ptr("ub", "u8", 0), gp, 256, nburst=(1, 256, 256))    # no op read g: no hazard


# ---------------------------------------------------------------------------------------- BATCH_RUN_RECORDS
def _random_map(r, n, monkeypatch):
    """A `BlockMap` of ``n`` blocks after a few random assignments (some maps past `MAX_RUNS`: the array form)."""
    m = shadow.BlockMap(n, r.randrange(3))
    for _ in range(r.randint(0, 12)):
        b0 = r.randrange(n)
        m.assign(b0, r.randint(b0 + 1, min(n, b0 + 9)), r.randrange(4))
    return m


def _random_ranges(r, n):
    """Ascending, disjoint, not touching block ranges in ``[0, n)`` (what `_record_runs` hands over)."""
    ranges, pos = [], r.choice((0, r.randrange(n)))
    while pos < n and len(ranges) < r.randint(1, 10):
        end = r.choice((n, r.randint(pos + 1, min(n, pos + 6))))
        ranges.append((pos, end))
        pos = end + r.randint(1, 7)
    return ranges


def test_assign_ranges_equals_one_assign_per_range(monkeypatch):
    """`BlockMap.assign_ranges` leaves the values `assign` of each range in turn leaves (a plain array as the
    reference) and, when both stay in the run form, the same runs; also across `MAX_RUNS` (the array form)."""
    import copy
    import numpy as np
    forms = set()
    for seed in range(3000):
        r = random.Random(seed)
        monkeypatch.setattr(shadow, "MAX_RUNS", r.choice((512, 6, 3)))
        n = r.randint(2, 80)
        m = _random_map(r, n, monkeypatch)
        one = copy.deepcopy(m)
        ranges, v = _random_ranges(r, n), r.randrange(4)
        ref = m.array(0, n).copy()
        for b0, b1 in ranges:
            one.assign(b0, b1, v)
            ref[b0:b1] = v
        m.assign_ranges(ranges, v)
        assert np.array_equal(m.array(0, n), ref) and np.array_equal(one.array(0, n), ref), seed
        if m.starts is not None and one.starts is not None:
            assert (m.starts, m.vals) == (one.starts, one.vals), seed
            assert all(a != b for a, b in zip(m.vals, m.vals[1:])), seed     # neighbouring runs differ
        forms.add((m.starts is None, len(ranges) > 1))
    assert forms == {(False, False), (False, True), (True, False), (True, True)}, forms


def _fixpipe_program(seed):
    """FIXPIPE (``mte_l0c_gm``, one burst per row: `HazardTracker.on_access_runs`) stores of L0C tiles into one GM
    matrix in a loop, column tiles overlapping or not, rows block-aligned or not, with MTE2 reads of the output
    between them (read maps the stores clear); a flag now and then missing (a WAW / WAR / RAW on a later trip)."""
    from pto_core.program import program
    r = random.Random(seed)
    m, n, trips = r.randint(1, 32), 16 * r.randint(1, 3), r.randint(2, 4)
    cols = n * trips + r.choice((0, 1, 8, 16))
    shift, step = r.choice((0, 0, 1, 3)), r.choice((n, n // 2))
    ss = -(-m // 16) * 16
    with program(f"fixruns{seed}", target="A2A3") as k:
        c = k.gm_arg("g", "f32", ((m + 3) * cols + 8,), io="out", init=2)
        l0c = k.ptr("l0c", "f32", 0)
        pto.set_flag("FIX", "M", 0)
        with k.for_(0, trips, name="t", dtype="s32") as t:
            if r.random() < 0.95:
                pto.wait_flag("FIX", "M", 0)
            pto.t_write_m(l0c, ss * n * 4, r.randrange(256))
            if r.random() < 0.9:
                pto.set_flag("M", "FIX", 0)
                pto.wait_flag("M", "FIX", 0)
            pto.mte_l0c_gm(l0c, c + shift + t * step, m, n, ss, cols, 0, 0, nz2nd=True)
            if r.random() < 0.5:
                if r.random() < 0.9:
                    pto.set_flag("FIX", "MTE2", 1)
                    pto.wait_flag("FIX", "MTE2", 1)
                pto.t_read_mte2(c + r.randrange(cols), 4 * r.randint(1, 2 * cols))
                if r.random() < 0.9:
                    pto.set_flag("MTE2", "FIX", 1)
                    pto.wait_flag("MTE2", "FIX", 1)
            pto.set_flag("FIX", "M", 0)
        pto.wait_flag("FIX", "M", 0)
    return k.program


def test_batched_run_records_keep_verdicts_reports_and_outputs_of_fixpipe_loops(monkeypatch):
    """`hazards.BATCH_RUN_RECORDS` on and off: the same first error (class, text, provenance), reports and output
    bytes for random FIXPIPE store loops; the batched record is taken, and the programs both pass and fail."""
    calls = []
    real = hazards.HazardTracker._record_runs

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(hazards.HazardTracker, "_record_runs", counted)
    kinds = {}
    for seed in range(80):
        prog = _fixpipe_program(seed)
        got = []
        for on in (True, False):
            monkeypatch.setattr(hazards, "BATCH_RUN_RECORDS", on)
            got.append(_outcome(prog, "A2A3", MachineOptions(uninitialized="record")))
        assert got[0] == got[1], seed
        kind = got[0][0][0] if got[0][0] else "ok"
        kinds[kind] = kinds.get(kind, 0) + 1
    assert len(calls) >= 50 and kinds.get("ok", 0) >= 10 and kinds.get("HazardError", 0) >= 5, (len(calls), kinds)


def test_batched_run_records_keep_the_same_verdicts_and_history(monkeypatch):
    """Random `on_access` / `on_access_runs` (reads and writes; rows block-aligned or not, apart, touching or
    overlapping) of a few pipes on one buffer, with flags between some: the same errors and the same history
    (writer stamps, read epochs per pipe, newest epochs) with `BATCH_RUN_RECORDS` on or off."""
    from pto_core.errors import HazardError
    from pto_core.memory import Buffer
    pipes = ("MTE2", "FIX", "V")

    def run(steps, batch):
        monkeypatch.setattr(hazards, "BATCH_RUN_RECORDS", batch)
        h = _bare_tracker()
        buf = Buffer("gm", 256 * 32, label="gm")
        events = []
        for step in steps:
            if step[0] == "flag":
                _flag(h, step[1], step[2])
                continue
            _, pipe, lo, count, run_, stride, write = step
            h.begin_op(f"op.{pipe}", pipe, None)
            try:
                if count:
                    h.on_access_runs(buf, lo, count, run_, stride, write, "x")
                else:
                    h.on_access(buf, lo, lo + run_, write, "x")
                events.append("ok")
            except HazardError as e:
                events.append((e.kind, e.byte_range, str(e)))
                h.begin_op("after", "S", None)
        h.begin_op("end", "S", None)
        sh = h.shadows.get(buf)
        hist = _history(sh)             # (materialises a tile form)
        runs = None if sh is None else [(m.starts, m.vals) for m in (sh.w, *sh.r.values())]
        return events, hist, runs       # the same runs too (neighbouring runs differ: one form per history)

    calls = []
    real = hazards.HazardTracker._record_runs

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(hazards.HazardTracker, "_record_runs", counted)
    errors = 0
    for seed in range(500):
        r = random.Random(seed)
        steps = []
        for _ in range(r.randint(1, 16)):
            if r.random() < 0.45:
                steps.append(("flag", r.choice(pipes), r.choice(pipes)))
                steps.append(("flag", r.choice(pipes), r.choice(pipes)))
                continue
            align = r.random() < 0.5
            run_ = r.randint(1, 8) * 32 if align else r.randint(1, 200)
            stride = r.choice((run_, run_ + r.randint(1, 300), max(1, run_ - r.randint(0, run_)))) if not align \
                else 32 * r.randint(max(1, run_ // 32 - 1), 12)
            count = r.choice((0, 1, r.randint(2, 12)))
            lo = r.randrange(0, 2048, 32 if align else 1)
            steps.append(("op", r.choice(pipes), lo, count, run_, stride, r.random() < 0.5))
        on, off = run(steps, True), run(steps, False)
        assert on == off, seed
        errors += any(ev != "ok" for ev in on[0])
    assert 50 <= errors <= 450 and len(calls) >= 150, (errors, len(calls))


def test_rmw_access_keeps_the_same_verdicts_and_history(monkeypatch):
    """`HazardTracker.on_access_rmw` (a read, then a write of the same bytes by one op, at once: `memory.RMW_SPANS`)
    or, when it declines, the two `on_access` calls, against always the two calls: the same errors and the same
    history (stamps, read epochs, newest epochs, runs), recording at once or deferred, tile form or maps."""
    from pto_core.errors import HazardError
    from pto_core.memory import Buffer
    pipes = ("M", "FIX", "MTE1")

    def run(steps, rmw, at_once):
        monkeypatch.setattr(hazards, "RECORD_AT_ONCE", at_once)
        h = _bare_tracker()
        buf = Buffer("l0c", 64 * 32, label="l0c")
        events = []
        for step in steps:
            if step[0] == "flag":
                _flag(h, step[1], step[2])
                continue
            _, pipe, kind, rng = step
            b0, b1 = RANGES[rng]
            h.begin_op(f"op.{pipe}", pipe, None)
            try:
                if kind == "rmw":
                    took = rmw and h.on_access_rmw(buf, b0 * 32, b1 * 32)
                    events.append(took)
                    if not took:
                        h.on_access(buf, b0 * 32, b1 * 32, False, "x")
                        h.on_access(buf, b0 * 32, b1 * 32, True, "x")
                else:
                    h.on_access(buf, b0 * 32, b1 * 32, kind == "write", "x")
                events.append("ok")
            except HazardError as e:
                events.append((e.kind, e.byte_range, str(e)))
                h.begin_op("after", "S", None)
        h.begin_op("end", "S", None)
        sh = h.shadows.get(buf)
        hist = _history(sh)
        return events, hist, None if sh is None else [(m.starts, m.vals) for m in (sh.w, *sh.r.values())]

    took = errors = 0
    for seed in range(400):
        r = random.Random(seed)
        steps = []
        for _ in range(r.randint(1, 14)):
            if r.random() < 0.35:
                steps.append(("flag", r.choice(pipes), r.choice(pipes)))
            else:
                steps.append(("op", r.choice(pipes), r.choice(("rmw", "rmw", "read", "write")),
                              r.choice((0, 0, 0, 3, 4, 5))))
        for at_once in (True, False):
            on, off = run(steps, True, at_once), run(steps, False, at_once)
            assert [e for e in on[0] if e is not True and e is not False] == [e for e in off[0] if e is not False], \
                (seed, at_once)
            assert on[1:] == off[1:], (seed, at_once)
            took += on[0].count(True)
            errors += any(e not in ("ok", True, False) for e in on[0])
    assert took >= 300 and 50 <= errors <= 750, (took, errors)
