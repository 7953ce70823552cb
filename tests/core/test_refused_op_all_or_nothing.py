"""A refused op changes nothing (memory.ALL_OR_NOTHING_WRITES): an op whose later step is refused after earlier
steps wrote puts those bytes and written flags back. And pto_spec §3.1's BurstTailWarning."""
import warnings

import numpy as np
import pytest

from pto_core import BurstTailWarning, Machine, MachineOptions, pto
from pto_core.errors import OutOfBounds, PtoError, UninitializedRead
from pto_core.program import program

from kernel_helpers import line_of


def _snapshot(m):
    """Bytes and written flags of every buffer made so far (on-chip and GM) plus the special registers."""
    s = {}
    for c in m.cores:
        for sp, b in c.buffers.items():
            s[c.index, sp] = (b.data.copy(), np.array(b.written))
        for i, b in enumerate(c._ubs):
            if b is not None:
                s[c.index, "ub", i] = (b.data.copy(), np.array(b.written))
    for r in m.gm.regions:
        s["gm", r.name] = (r.buffer.data.copy(), np.array(r.buffer.written))
    return s, [dict(ctx.spr) for ctx in m._contexts]


def _refused_without_trace(m, op, error=PtoError):
    before, spr = _snapshot(m)
    with pytest.raises(error):
        op()
    after, spr_after = _snapshot(m)
    for key, (data, flags) in before.items():
        np.testing.assert_array_equal(after[key][0], data, err_msg=f"{key}: data changed")
        np.testing.assert_array_equal(after[key][1], flags, err_msg=f"{key}: written flags changed")
    assert spr_after == spr
    assert all(ctx.undo is None for ctx in m._contexts)


def _machine(**options):
    m = Machine("A2A3", options=MachineOptions(**options)) if options else Machine("A2A3")
    m.activate()
    return m


def test_fixpipe_loop3_second_iteration_out_of_gm_tensor():
    m = _machine()
    src = m.ptr("l0c", "f32", 0)
    m.write(src, np.ones(512, np.float32))
    out = m.gm_alloc((256,), "f32", name="out", data=np.zeros(256, np.float32))
    _refused_without_trace(m, lambda: pto.mte_l0c_gm(src, out, 16, 16, 16, 16, 0, 0, nz2nd=True,
                                                     loop3=(2, 16, 256)), OutOfBounds)
    pto.mte_l0c_gm(src, out, 16, 16, 16, 16, 0, 0, nz2nd=True)          # the corrected op runs
    assert (m.read(out, 256) == 1).all()


def test_fixpipe_loop3_second_iteration_past_l1():
    m = _machine()
    src = m.ptr("l0c", "f32", 0)
    m.write(src, np.ones(512, np.float32))
    dst = m.ptr("l1", "f32", m.target.sizes.l1 - 1024)
    _refused_without_trace(m, lambda: pto.mte_l0c_l1(src, dst, 16, 16, 16, 16, nz2nd=True, loop3=(2, 16, 256)),
                           OutOfBounds)


def test_fixpipe_normal_layout_remainder_group_out_of_tensor():
    m = _machine()
    src = m.ptr("l0c", "f32", 0)
    m.write(src, np.ones(512, np.float32))
    out = m.gm_alloc((264,), "f32", name="out", data=np.zeros(264, np.float32))
    _refused_without_trace(m, lambda: pto.mte_l0c_gm(src, out, 16, 24, 16, 256, 0, 0), OutOfBounds)


def test_fixpipe_loop3_uninitialised_second_tile_under_raise():
    m = _machine(uninitialized="raise")
    src = m.ptr("l0c", "f32", 0)
    m.write(src, np.ones(256, np.float32))                           # tile 0 only
    out = m.gm_alloc((512,), "f32", name="out", data=np.zeros(512, np.float32))
    _refused_without_trace(m, lambda: pto.mte_l0c_gm(src, out, 16, 16, 16, 16, 0, 0, nz2nd=True,
                                                     loop3=(2, 16, 256)), UninitializedRead)


def test_vector_repeats_in_chunks_last_repeat_past_ub():
    m = _machine()
    ub = m.target.sizes.ub
    a = m.ptr("ub", "f16", 0)
    m.write(a, np.ones(ub // 2, np.float16))
    # dst one repeat after src0 (in place, overlapping): repeats run in order, the 4th leaves UB
    _refused_without_trace(m, lambda: pto.ub.vadd(m.ptr("ub", "f16", ub - 768), m.ptr("ub", "f16", ub - 1024), a,
                                                  4), OutOfBounds)


def test_vnchwconv_last_destination_block_past_ub():
    m = _machine()
    ub = m.target.sizes.ub
    m.write(m.ptr("ub", "f16", 0), np.arange(8192).astype(np.float16))
    src = tuple(m.ptr("ub", "f16", 32 * k) for k in range(16))
    dst = tuple(m.ptr("ub", "f16", 8192 + 32 * k) for k in range(15)) + (m.ptr("ub", "f16", ub - 32),)
    _refused_without_trace(m, lambda: pto.ub.vnchwconv(dst, src, 2, rep_stride=(1, 16)), OutOfBounds)


def test_vmrgsort4_second_repeat_past_ub_keeps_data_and_register():
    m = _machine()
    ub = m.target.sizes.ub
    m.write(m.ptr("ub", "f16", 0), (np.arange(4096) % 97).astype(np.float16))
    lists = tuple(m.ptr("ub", "f16", 32 * i) for i in range(4))
    dst = m.ptr("ub", "f16", ub - 160)                               # room for the first merge (128 B) only
    _refused_without_trace(m, lambda: pto.ub.vmrgsort4(dst, lists, (2, 2, 2, 2), 2), OutOfBounds)
    assert "VMS4_SR" not in m.context().spr


# ----------------------------------------------------------------------------- BurstTailWarning (pto_spec §3.1)


@pytest.mark.parametrize("kind", ["add", "max", "min"])
def test_reduce_macro_refused_dst_leaves_work_as_it_was(kind):
    """reduce_* writes %work then %dst: a hazard on %dst (an MTE2 load into it with no flag) used to leave the
    partial results in %work (review331)."""
    from pto_core.errors import HazardError
    m = _machine()
    src = m.ptr("ub", "f16", 0)
    m.write(src, np.ones(128 * 4, np.float16))
    work = m.ptr("ub", "f16", 4096)
    m.write(work, np.zeros(64, np.float16))
    dst = m.ptr("ub", "f16", 8192)
    g = m.gm_alloc((16,), "f16", name="x", data=np.zeros(16, np.float16))
    pto.mte_gm_ub(g, dst, 0, 32, nburst=(1, 32, 32))
    reduce = getattr(pto.ub, f"reduce_{kind}")
    _refused_without_trace(m, lambda: reduce(dst, src, work, 4), HazardError)


def test_burst_tail_warning_once_per_site_at_the_users_line():
    m = _machine()
    g = m.gm_tensor(np.arange(256, dtype=np.uint8), name="g")
    m.write(m.ptr("l1", "u8", 0), np.zeros(256, np.uint8))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("default")
        for _ in range(3):
            pto.mte_gm_l1(g, m.ptr("l1", "u8", 0), 40, nburst=(1, 0, 0))  # LINE-tail-gm
        pto.pipe_barrier("ALL")
        pto.mte_l1_ub(m.ptr("l1", "u8", 0), m.ptr("ub", "u8", 0), 8, nburst=(2, 32, 32))  # LINE-tail-ub
        pto.pipe_barrier("ALL")
        pto.mte_gm_l1(g, m.ptr("l1", "u8", 64), 64, nburst=(1, 0, 0))
    tails = [w for w in got if issubclass(w.category, BurstTailWarning)]
    assert [w.lineno for w in tails] == [line_of(__file__, "# LINE-tail-gm"), line_of(__file__, "# LINE-tail-ub")]
    assert "24 source byte(s)" in str(tails[0].message) and "pto.mte_gm_l1" in str(tails[0].message)
    assert (m.read(m.ptr("l1", "u8", 0), 32) == np.arange(32)).all()   # the tail is still copied


def test_burst_tail_warning_for_constant_length_in_a_program_only():
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with program("k") as k:
            g = k.gm_arg("g", "u8", (256,))
            n = k.reg("i64", 40, name="n")
            pto.mte_gm_l1(g, k.ptr("l1", "u8", 0), 40, nburst=(1, 0, 0))   # LINE-tail-prog
            pto.mte_gm_l1(g, k.ptr("l1", "u8", 0), n, nburst=(1, 0, 0))    # run-time length: no warning
    tails = [w for w in got if issubclass(w.category, BurstTailWarning)]
    assert [w.lineno for w in tails] == [line_of(__file__, "# LINE-tail-prog")]


def test_tik_data_move_never_warns_burst_tail():
    from tbe import tik
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (48,), name="a_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (48,), name="out", scope=tik.scope_gm)
    a = ti.Tensor("float16", (48,), name="a", scope=tik.scope_cbuf)
    u = ti.Tensor("float16", (48,), name="u", scope=tik.scope_ubuf)
    ti.data_move(a, a_gm, 0, 1, 3, 0, 0)
    ti.data_move(u, a, 0, 1, 3, 0, 0)
    ti.data_move(out, u, 0, 1, 3, 0, 0)
    ti.BuildCCE(kernel_name="tail_free", inputs=[a_gm], outputs=[out])
    x = np.arange(48).astype(np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BurstTailWarning)
        y, = ti.tikdb.start_debug({"a_gm": x}, interactive=False)
    np.testing.assert_array_equal(y, x)


def test_pto_as_burst_tail_warning_follows_the_ops_loc():
    """PTO-AS replay (pto-run) of a front end's lowering: the loc names the TIK call, so no BurstTailWarning
    (parsing verified the op with the .pto line before reading its loc: review331); an op whose loc names
    itself warns at the loc's line; an op without a loc at its .pto line."""
    from pto_core.asm import parse
    body = ('module attributes {pto.target_arch = "A2A3"} {\n'
            'func.func @k(%g: !pto.ptr<u8, gm> {pto.shape = [256]}) {\n'
            '  %c0_i64 = arith.constant 0 : i64\n'
            '  %c40_i64 = arith.constant 40 : i64\n  %c1_i64 = arith.constant 1 : i64\n'
            '  %0 = pto.castptr %c0_i64 : i64 -> !pto.ptr<u8, l1>\n'
            '  pto.mte_gm_l1 %g, %0, %c40_i64 nburst(%c1_i64, %c0_i64, %c0_i64) : !pto.ptr<u8, gm>, '
            '!pto.ptr<u8, l1>, i64, i64, i64, i64 LOC\n'
            '  return\n}\n}\n')
    for loc, expect in (('loc("tik.data_move"("user_kernel.py":12:0))', []),
                        ('loc("pto.mte_gm_l1"("user_kernel.py":13:0))', [("user_kernel.py", 13)]),
                        ('', [("k.pto", 7)])):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            parse(body.replace("LOC", loc), source_name="k.pto")
        assert [(w.filename, w.lineno) for w in got if issubclass(w.category, BurstTailWarning)] == expect, loc
