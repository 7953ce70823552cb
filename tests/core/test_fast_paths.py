"""Fast paths against the general paths (or the plain numpy algorithm) they replace: same bits, same checks.

Each optimisation in the hot paths (see the "Speed" notes in the module docstrings of
``pto_core.ops.cube``, ``pto_core.ops.mte``, ``pto_core.ops.registry``) has a test here that
runs the fast path and the slow path it replaced (or an independent re-implementation of
the old algorithm) on random inputs, special values included, and compares bit patterns.
"""
import warnings

import numpy as np
import pytest

from pto_core import Machine, MachineOptions, dtype, layout, pto
from pto_core.ops.cube import f16_to_f32
from pto_core.errors import IllegalOperand
from pto_core.program import cast

RNG = np.random.default_rng(2024)
ALL_F16 = np.arange(1 << 16, dtype=np.uint16)


# ============================================================================ f16 -> f32 decode (pto.mad operands)


def test_f16_decode_matches_numpy_cast_on_every_code():
    want = ALL_F16.view(np.float16).astype(np.float32).view(np.uint32)
    assert np.array_equal(f16_to_f32(ALL_F16).view(np.uint32), want)
    out = np.empty(ALL_F16.shape, np.int32)
    got = f16_to_f32(ALL_F16, out)
    assert got.base is out or np.shares_memory(got, out)
    assert np.array_equal(got.view(np.uint32), want)


def test_f16_decode_of_strided_views_is_c_ordered_and_exact():
    codes = RNG.permutation(ALL_F16)                       # every code, inf/NaN among normal values
    v = codes.reshape(16, 16, 16, 16).transpose(1, 2, 0, 3)  # an Nz tile read in logical order
    want = v.view(np.float16).astype(np.float32)
    got = f16_to_f32(v)
    assert got.flags.c_contiguous and got.shape == v.shape
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    got2 = f16_to_f32(v, np.empty(v.shape, np.int32))
    assert np.array_equal(got2.view(np.uint32), want.view(np.uint32))
    assert f16_to_f32(np.zeros((0, 3), np.uint16)).shape == (0, 3)


# ============================================================================ pto.mad / mad_acc GEMM


def _stage_nz(m, ptr, mat):
    """Write a logical f16 matrix (rows, cols multiples of 16) in Nz order (A5 L0A, L0B as B^T)."""
    r, c = mat.shape
    m.write(ptr, layout.pack(mat, "Nz", "f16"))


def _nz_acc(m, dst, r, c):
    return layout.unpack(m.read(dst, (r * c,)), "Nz", r, c, "f32", fractal=1024)


@pytest.mark.parametrize("mm,n,k", [(256, 256, 128), (48, 32, 512), (16, 16, 16)])
def test_mad_and_mad_acc_bits_equal_one_plain_f32_gemm_each(mm, n, k):
    """The decoded operands, the GEMM into a reused buffer and the Nz accumulation give exactly
    ``acc + matmul(A32, B32^T.T)`` with numpy's own f16 cast and a freshly allocated product."""
    m = Machine("A5")
    lhs, rhs, dst = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
    acc = np.zeros((mm, n), np.float32)
    for step in range(3):
        a = (RNG.standard_normal((mm, k)) * 8).astype(np.float16)
        bt = (RNG.standard_normal((n, k)) * 8).astype(np.float16)
        if step == 2:        # specials: inf and NaN inputs propagate under nosat
            a[0, 0], bt[1, 1] = np.inf, np.nan
        _stage_nz(m, lhs, a)
        _stage_nz(m, rhs, bt)
        pto.set_flag("MTE1", "M", 0)
        pto.wait_flag("MTE1", "M", 0)
        (pto.mad if step == 0 else pto.mad_acc)(lhs, rhs, dst, mm, n, k, sat=False)
        pto.set_flag("M", "MTE1", 0)
        pto.wait_flag("M", "MTE1", 0)
        with np.errstate(invalid="ignore", over="ignore"):
            prod = np.matmul(a.astype(np.float32), bt.astype(np.float32).T)
            acc = prod if step == 0 else acc + prod
        got = _nz_acc(m, dst, mm, n)
        assert np.array_equal(got.view(np.uint32), acc.view(np.uint32)), step


@pytest.mark.parametrize("shape", [(4096,), (3, 70000), (64, 64, 16)])
def test_f16_decode_reports_exactly_whether_a_code_is_inf_or_nan(shape):
    from pto_core.ops.cube import _f16_to_f32_finite
    finite_codes = ALL_F16[(ALL_F16 & 0x7C00) != 0x7C00]
    special_codes = ALL_F16[(ALL_F16 & 0x7C00) == 0x7C00]
    for n_special in (0, 1, 3):
        codes = RNG.choice(finite_codes, size=shape)
        for _ in range(n_special):
            codes[tuple(RNG.integers(0, s) for s in shape)] = RNG.choice(special_codes)
        got, finite = _f16_to_f32_finite(codes)
        assert finite == (n_special == 0)
        assert np.array_equal(got.view(np.uint32), codes.view(np.float16).astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("where", ["a", "b", "both", "none"])
def test_sat_mad_on_large_tiles_normalises_specials_found_by_the_decoder(where):
    """Tiles above the table-gather size take the decoder's finiteness report instead of a second
    scan: an inf or NaN anywhere in either operand is still normalised (inf -> f16 max, NaN -> 0)."""
    mm, n, k = 64, 48, 96
    m = Machine("A5")
    lhs, rhs, dst = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
    a = RNG.standard_normal((mm, k)).astype(np.float16)
    bt = RNG.standard_normal((n, k)).astype(np.float16)
    if where in ("a", "both"):
        a[RNG.integers(mm), RNG.integers(k)] = -np.inf
        a[RNG.integers(mm), RNG.integers(k)] = np.nan
    if where in ("b", "both"):
        bt[RNG.integers(n), RNG.integers(k)] = np.inf
    _stage_nz(m, lhs, a)
    _stage_nz(m, rhs, bt)
    pto.set_flag("MTE1", "M", 0)
    pto.wait_flag("MTE1", "M", 0)
    pto.mad(lhs, rhs, dst, mm, n, k, sat=True)
    pto.set_flag("M", "MTE1", 0)
    pto.wait_flag("M", "MTE1", 0)

    def normal(x):
        return np.nan_to_num(x.astype(np.float32), nan=0.0, posinf=65504.0, neginf=-65504.0)
    want = np.matmul(normal(a), normal(bt).T)
    got = _nz_acc(m, dst, mm, n)
    assert np.isfinite(got).all()
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


# ============================================================================ fast vs general paths of the moves


def _both_paths(monkeypatch, setup, run):
    """Run ``run(machine, *setup(machine))`` with the fast paths on and off on identical machines;
    return the two machines (fill=random so stale bytes differ from anything an op writes)."""
    from pto_core.ops import mte
    out = []
    for fast in (True, False):
        monkeypatch.setattr(mte, "FAST_PATHS", fast)
        m = Machine("A5", options=MachineOptions(fill="random", seed=7))
        run(m, *setup(m))
        out.append(m)
    return out


def _same_buffers(m1, m2, spaces):
    for space in spaces:
        b1, b2 = m1.cores[0].buffer(space), m2.cores[0].buffer(space)
        assert np.array_equal(b1.data, b2.data), space
        assert np.array_equal(b1.written, b2.written), space


FRAC_CASES = [  # (dtype, mode, n, d, groups, row pad (elements), dst loop2/loop3 extra, small C0)
    ("f16", "nd2nz", 64, 96, 1, 0, (1, 0), False),
    ("f16", "nd2nz", 37, 45, 2, 3, (1, 2), False),        # padding lanes
    ("f32", "nd2nz", 16, 64, 3, 8, (2, 1), False),
    ("s8", "nd2nz", 20, 64, 1, 4, (1, 0), False),
    ("e2m1x2", "nd2nz", 18, 128, 2, 0, (1, 1), False),    # 4-bit, whole 32-byte blocks
    ("e2m1x2", "nd2nz", 18, 70, 1, 2, (1, 0), False),     # 4-bit with padding
    ("f16", "dn2nz", 48, 64, 2, 5, (1, 3), False),
    ("bf16", "dn2nz", 33, 20, 1, 0, (1, 0), False),
    ("f16", "nd2nz", 9, 3, 2, 1, (0, 0), True),           # small C0
]


@pytest.mark.parametrize("dt,mode,n,dv,groups,pad,extra,small", FRAC_CASES)
@pytest.mark.parametrize("hole", [False, True])
def test_frac_fast_paths_equal_general_path(monkeypatch, dt, mode, n, dv, groups, pad, extra, small, hole):
    """Data and written flags of mte_gm_l1_frac with the fast paths on and off; ``hole`` leaves a
    source byte unwritten so the flags are moved, not set."""
    d = dtype(dt)
    row_elems, rows = (dv, n) if mode == "nd2nz" else (n, dv)
    inner = d.nbytes(row_elems + pad * (2 if d.bits == 4 else 1))
    outer = rows * inner + 96
    nbytes = groups * outer + 64
    raw = RNG.integers(0, 256, nbytes, dtype=np.uint8)
    c0, l2 = d.c0, 1 + extra[0] if not small else 0
    d1 = -(-dv // c0)
    l3 = n * l2 + extra[1] if not small else 0
    l4 = (d1 * l3 + 1) if not small else 2

    def setup(m):
        g = m.gm_alloc((nbytes,), "u8", name="src")
        m.write(g, raw)
        if hole:
            m.gm.region("src").buffer.written[inner + 1] = False     # inside row 1 of group 0
        return (g.cast(dt), m.ptr("l1", dt, 96))

    def run(m, g, l1):
        pto.mte_gm_l1_frac(g, l1, **{mode: True}, shape=(n, dv), src_layout=(inner, outer),
                           dst_group=(groups, l2, l3, l4), ctrl=(0, small))

    fast, general = _both_paths(monkeypatch, setup, run)
    _same_buffers(fast, general, ["l1"])


def test_from_f16_equals_the_cast_on_every_code_and_view():
    """The vector engine's f16 -> f32 widening (bit moves above 512 values, the cast below)."""
    from pto_core.numerics.floats import from_f16
    h = RNG.permutation(ALL_F16).view(np.float16)
    for v in (h, h.reshape(256, 256).T, h[::3], h[:500], h.reshape(16, 4096)[:, :100]):
        got = from_f16(v)
        assert got.dtype == np.float32 and got.shape == v.shape and got.flags.c_contiguous
        assert np.array_equal(got.view(np.uint32), v.astype(np.float32).view(np.uint32))


def test_f16_decode_in_slabs_equals_one_pass():
    from pto_core.numerics import floats
    codes = RNG.integers(0, 1 << 16, (300, 7, 64), dtype=np.uint16)    # > one slab; inf/NaN codes included
    v = codes.transpose(1, 0, 2)
    want = v.view(np.float16).astype(np.float32)
    assert v.size > floats._F16_SLAB
    got = f16_to_f32(v)
    assert got.flags.c_contiguous and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    got2 = f16_to_f32(v, np.empty(v.shape, np.int32))
    assert np.array_equal(got2.view(np.uint32), want.view(np.uint32))


BURST_CASES = [  # (len_burst, nburst(count, src_stride, dst_stride), loops)
    (256, (1, 0, 0), None),                 # one burst: contiguous fast path
    (96, (4, 96, 96), None),                # back to back on both sides: fast path
    (100, (3, 100, 128), None),             # general path (dst rows rounded to 32-byte blocks)
    (64, (3, 64, 96), [(2, 512, 1024)]),    # general path with a loop
    (50, (2, 50, 64), None),                # tail bytes past len_burst
]


@pytest.mark.parametrize("len_burst,nburst,loop", BURST_CASES)
@pytest.mark.parametrize("hole", [False, True])
def test_burst_copies_fast_path_equals_general_path(monkeypatch, len_burst, nburst, loop, hole):
    """mte_gm_ub / mte_ub_gm / mte_gm_l1 byte bursts with the contiguous fast path on and off."""
    raw = RNG.integers(0, 256, 8192, dtype=np.uint8)

    def setup(m):
        g = m.gm_alloc((8192,), "u8", name="src")
        if hole:                                   # byte 5 never written (partial writes: a real hole)
            m.write(g, raw[:5])
            m.write(g + 6, raw[6:])
        else:
            m.write(g, raw)
        return (g, m.gm_alloc((8192,), "u8", name="out"))

    def run(m, g, out):
        ub, l1 = m.ptr("ub", "u8", 64), m.ptr("l1", "u8", 128)
        pto.mte_gm_ub(g, ub, 0, len_burst, nburst=nburst, loop=loop)
        pto.mte_gm_l1(g, l1, len_burst, nburst=nburst, loop=loop)
        pto.set_flag("MTE2", "MTE3", 0)
        pto.wait_flag("MTE2", "MTE3", 0)
        pto.mte_ub_gm(ub, out, len_burst, nburst=(nburst[0], nburst[2], nburst[1]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # the hole's uninitialised-read reports
        fast, general = _both_paths(monkeypatch, setup, run)
    _same_buffers(fast, general, ["ub", "l1"])
    for name in ("out",):
        r1, r2 = fast.gm.region(name).buffer, general.gm.region(name).buffer
        assert np.array_equal(r1.data, r2.data) and np.array_equal(r1.written, r2.written)
    for m in (fast, general):                      # the hole reached UB and L1 (the case is not vacuous)
        assert bool(m.cores[0].buffer("ub").written[64 + 5]) is not hole
        assert bool(m.cores[0].buffer("l1").written[128 + 5]) is not hole


@pytest.mark.parametrize("nburst", [(1, 0, 0), (8, 64, None)])
@pytest.mark.parametrize("hole", [False, True])
def test_contiguous_load_of_written_bytes_is_remembered_and_holes_still_report(hole, nburst):
    """A one-burst GM -> L1 load of fully written bytes marks its L1 span written as a known range (later reads
    need no scan of the map); a source with an unwritten byte takes the flag-copying path, and the L1 -> L0A
    move after it carries that byte's flag along, as before."""
    m = Machine("A5", options=MachineOptions(uninitialized="record"))
    g = m.gm_alloc((8192,), "u8", name="src")
    raw = RNG.integers(0, 256, 8192, dtype=np.uint8)
    if hole:                                  # byte 100 never written
        m.write(g, raw[:100])
        m.write(g + 101, raw[101:])
    else:
        m.write(g, raw)
    l1 = m.ptr("l1", "u8", 1024)
    count, gap, _ = nburst                    # one 4096-byte burst, or 8 rows of 512 with gaps in GM
    pto.mte_gm_l1(g, l1, 4096 // count, nburst=(count, 4096 // count + gap, 4096 // count) if count > 1 else nburst)
    buf = m.cores[0].buffer("l1")
    assert buf.written[1024:1024 + 4096].sum() == 4096 - hole
    assert ((1024, 1024 + 4096) in buf.known) != hole
    pto.set_flag("MTE2", "MTE1", 0)
    pto.wait_flag("MTE2", "MTE1", 0)
    pto.mte_l1_l0a(l1, m.ptr("l0a", "u8", 0), 64, 64)
    l0a = m.cores[0].buffer("l0a")
    assert (not l0a.written[:4096].all()) == hole        # the move carries the unwritten byte along (no use yet)


# ============================================================================ hazard bookkeeping shortcuts


def test_read_then_covering_write_of_one_op_still_orders_later_accesses():
    """An op that reads and then writes the same UB bytes (in-place vadd) records only the write;
    later unsynchronised accesses from other pipes are still hazards, synchronised ones are not."""
    from pto_core.errors import HazardError
    m = Machine("A5")
    a, b = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 0x1000)
    m.write(a, np.ones(128, np.float16))
    m.write(b, np.ones(128, np.float16))
    out = m.gm_alloc((128,), "f16", name="out")
    src = m.gm_tensor(np.ones(128, np.float16), name="src")
    pto.ub.vadd(a, a, b, 1)                                 # V reads a, then writes a
    with pytest.raises(HazardError, match="RAW") as e:
        pto.mte_ub_gm(a, out, 256, nburst=(1, 0, 0))        # MTE3 reads what V wrote, no edge
    assert "pto.ub.vadd" in str(e.value)
    with pytest.raises(HazardError, match="WAW"):
        pto.mte_gm_ub(src, a, 0, 256, nburst=(1, 0, 0))     # MTE2 overwrites it, no edge
    pto.set_flag("V", "MTE2", 0)
    pto.wait_flag("V", "MTE2", 0)
    pto.mte_gm_ub(src, a, 0, 256, nburst=(1, 0, 0))         # ordered now: no error
    assert not m.end_kernel()


@pytest.mark.parametrize("nbytes", [32, 480, 512, 544, 4096, 65536])   # around the 16-block Python-int test
@pytest.mark.parametrize("bad_block", ["first", "last"])
def test_hazard_checks_on_few_and_many_blocks_agree(nbytes, bad_block):
    """RAW, WAW and WAR are found whether the earlier access touched the first or the last block
    of the checked range, for ranges checked on Python ints (<= 16 blocks) and with numpy."""
    import sync_standins  # noqa: F401  (registers the t_* stand-in ops)
    from pto_core.errors import HazardError
    off = 0 if bad_block == "first" else nbytes - 32
    for kind in ("RAW", "WAW", "WAR"):
        m = Machine("A2A3")
        x = m.ptr("ub", "u8", 0)
        m.write(x, np.zeros(nbytes, np.uint8))
        if kind == "WAR":
            pto.t_read_mte3(x + off, 32)                 # MTE3 reads one block
            op = lambda: pto.t_write_v(x, nbytes, 1)     # noqa: E731  V overwrites the range
        else:
            pto.t_write_mte2(x + off, 32, 1)             # MTE2 writes one block
            op = (lambda: pto.t_read_v(x, nbytes)) if kind == "RAW" else (lambda: pto.t_write_v(x, nbytes, 2))
        with pytest.raises(HazardError, match=kind) as e:
            op()
        assert e.value.byte_range == (off, off + 32)
        src = "MTE3" if kind == "WAR" else "MTE2"
        pto.set_flag(src, "V", 0)
        pto.wait_flag(src, "V", 0)
        op()                                             # ordered now


# ============================================================================ call validation cache


def test_cached_clause_validation_reports_the_same_first_error():
    """The clause-name verdict is cached per (op, names); a call with two problems still reports
    the one the uncached check finds first (the bad value before the later out-of-order name),
    and a cached shape still checks every value."""
    from pto_core.errors import IllegalOperand
    m = Machine("A5")
    g = m.gm_tensor(np.ones(64, np.float16), name="g")
    u = m.ptr("ub", "f16", 0)
    out = m.gm_alloc((64,), "f16", name="out")
    m.write(u, np.ones(64, np.float16))
    pto.mte_ub_gm(u, out, 64, nburst=(1, 0, 0), loop=[(1, 0, 0)])     # caches the shape (nburst, loop)
    for _ in range(2):
        with pytest.raises(IllegalOperand, match="out of canonical order"):
            pto.mte_gm_ub(g, u, 0, 64, loop=[(1, 0, 0)], nburst=(1, 0, 0))
        with pytest.raises(IllegalOperand, match="takes 3..3 parameters"):
            pto.mte_gm_ub(g, u, 0, 64, nburst=(1, 0), loop=None)
        with pytest.raises(IllegalOperand, match="takes 3..3 parameters") as e:
            pto.mte_ub_gm(u, out, 64, nburst=(1, 0), loop=[(1, 0)])        # cached shape, two bad values
        assert e.value.operand == "nburst"
    m2 = Machine("A5", options=MachineOptions(check_hazards=False))
    pto.mte_gm_ub(m2.gm_tensor(np.ones(64, np.float16), name="g"), m2.ptr("ub", "f16", 0), 0, 64, nburst=(1, 0, 0))


def test_f16_decode_self_check_passes_and_guards_the_fast_path(monkeypatch):
    from pto_core.numerics import floats
    from pto_core.ops import cube
    assert floats.f16_bits_exact()                      # numpy keeps subnormals: the bit moves are exact
    v = RNG.permutation(ALL_F16)[:4096].reshape(64, 64)
    want = v.view(np.float16).astype(np.float32).view(np.uint32)
    calls = []
    monkeypatch.setattr(floats, "f16_to_f32", lambda *a: calls.append(a) or pytest.fail("bit moves used"))
    monkeypatch.setattr(floats, "_F16_CHECK", [False])  # as if a flush-to-zero mode broke them
    for got in (cube._decode(v.view(np.float16), dtype("f16")), floats.from_f16(v.view(np.float16))):
        assert np.array_equal(got.view(np.uint32), want)
    assert not calls


# ============================================================================ GM regions without a written map


def _gm_buffer(m, ptr):
    return m.resolve(ptr, 1)[0]


def test_gm_input_region_keeps_no_flags_until_an_op_stores_some():
    m = Machine("A2A3", options=MachineOptions(check_hazards=False))
    x = m.gm_tensor(np.arange(256, dtype=np.float16), name="x")
    buf = _gm_buffer(m, x)
    assert not buf.written.flags.writeable and buf.written.strides == (0,)     # no per-byte memory
    ub = m.ptr("ub", "f16", 0)
    m.write(ub, np.ones(64, np.float16))                 # UB bytes [0, 128) written, [128, 256) not
    pto.mte_gm_ub(x, m.ptr("ub", "f16", 256), 0, 512, nburst=(1, 512, 512))
    assert not buf.written.flags.writeable               # reads leave the map alone
    assert not m.reports
    pto.mte_ub_gm(ub, x + 64, 256, nburst=(1, 256, 256))  # moves 128 unwritten UB bytes into x[128:192]
    assert buf.written.flags.writeable and buf.written.shape == (512,)
    want = np.ones(512, bool)
    want[256:384] = False
    assert np.array_equal(buf.written, want)
    pto.mte_gm_ub(x, m.ptr("ub", "f16", 1024), 0, 256, nburst=(1, 256, 256))    # x[0:128]: written
    assert not m.reports
    assert m.resolve(m.ptr("ub", "f16", 1024), 1)[0].written[1024:1280].all()
    pto.mte_gm_ub(x + 128, m.ptr("ub", "f16", 2048), 0, 64, nburst=(1, 64, 64))  # x[128:160]: not written
    assert not m.resolve(m.ptr("ub", "f16", 2048), 1)[0].written[2048:2112].any()   # the flags moved along


def test_gm_input_region_flags_after_writes_equal_a_materialised_map():
    """The same op sequence on a lazily all-written region and on a region whose map is a real array."""
    def run(lazy):
        m = Machine("A2A3", options=MachineOptions(check_hazards=False))
        x = m.gm_tensor(RNG.standard_normal(1024).astype(np.float32) if lazy else np.zeros(1024, np.float32),
                        name="x")
        buf = _gm_buffer(m, x)
        if not lazy:
            buf.written = np.ones(buf.data.shape, bool)
        ub = m.ptr("ub", "f32", 0)
        m.write(ub, np.arange(32, dtype=np.float32))
        pto.mte_ub_gm(ub, x + 8, 256, nburst=(2, 128, 512))       # 128 + 128 bytes, the second unwritten
        pto.mte_ub_gm(ub, x + 512, 64, nburst=(1, 64, 64))
        return buf.written.copy(), [r[1] for r in m.reports]
    lazy, eager = run(True), run(False)
    assert np.array_equal(lazy[0], eager[0]) and 0 < np.count_nonzero(~lazy[0]) < lazy[0].size
    assert lazy[1] == eager[1]


# ============================================================================ vector engine: dense operands


def _vector_case(monkeypatch, fast, body, options):
    from pto_core.ops import vector_engine as ve
    monkeypatch.setattr(ve, "DENSE_FAST_PATH", fast)
    m = Machine("A5", options=MachineOptions(fill="random", seed=3, **options))
    try:
        body(m)
        err = None
    except Exception as e:          # the two paths must raise the same error
        err = (type(e).__name__, str(e))
    ub = m.cores[0].buffer("ub")
    return ub.data.copy(), ub.written.copy(), list(m.reports), err


VECTOR_CASES = [  # (op, dtype, repeat, dst offset, src0 offset, src1 offset, unwritten byte of src0 or None)
    ("vadd", "f16", 1, 0x2000, 0, 0x1000, None),
    ("vmul", "f32", 3, 0x2000, 0, 0x1000, None),
    ("vsub", "s16", 8, 0x2000, 0, 0x1000, None),
    ("vadd", "f16", 4, 0x100, 0, 0x1000, None),        # dst overlaps src0 one repeat later: chunks
    ("vadd", "f32", 2, 0, 0, 0x1000, None),            # in place
    ("vmax", "f16", 2, 0x2000, 0, 0x1000, 300),        # uninitialised read reported
    ("vadd", "f16", 2, 0x2000, 0x3FF00, 0x1000, None),  # runs past the end of UB: the same error
]


@pytest.mark.parametrize("op,dt,repeat,d_off,a_off,b_off,hole", VECTOR_CASES)
@pytest.mark.parametrize("uninit", ["record", "raise"])
def test_vector_dense_fast_path_equals_strided_path(monkeypatch, op, dt, repeat, d_off, a_off, b_off, hole, uninit):
    """Lane-wise vector ops with the dense 1-D view path on and off: same UB bytes and written flags,
    same reports (uninitialised reads) and the same error; saturating f16 values included."""
    vals = RNG.integers(0, 256, 0x4000, dtype=np.uint8)
    if dt == "f16":
        vals.view(np.uint16)[::37] = 0x7C00        # inf among random codes (NaN too, by chance)

    def body(m):
        a, b, c = m.ptr("ub", dt, a_off), m.ptr("ub", dt, b_off), m.ptr("ub", dt, d_off)
        cut = len(vals) if hole is None else a_off + hole      # leave byte `cut` unwritten
        m.write(m.ptr("ub", "u8", 0), vals[:cut])
        if cut + 1 < len(vals):
            m.write(m.ptr("ub", "u8", cut + 1), vals[cut + 1:])
        getattr(pto.ub, op)(c, a, b, repeat)
        pto.ub.vadd(c, c, b, 1)

    fast = _vector_case(monkeypatch, True, body, {"uninitialized": uninit})
    slow = _vector_case(monkeypatch, False, body, {"uninitialized": uninit})
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
    assert fast[2] == slow[2] and fast[3] == slow[3]
    if a_off + 0x400 < 0x4000 and (hole is None or uninit == "record"):
        assert fast[3] is None                     # the case ran (and wrote) on both paths
    if hole is not None and uninit == "record":
        assert any(k == "uninitialized" for k, _ in fast[2])


def test_vector_dense_fast_path_reports_the_same_hazard(monkeypatch):
    """A vector op reading UB an MTE load wrote without a flag: the same HazardError on both paths."""
    def body(m):
        g = m.gm_tensor(np.ones(256, np.float16), name="g")
        a, c = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 0x1000)
        pto.mte_gm_ub(g, a, 0, 512, nburst=(1, 0, 0))
        pto.ub.vadd(c, a, a, 2)

    fast = _vector_case(monkeypatch, True, body, {})
    slow = _vector_case(monkeypatch, False, body, {})
    assert fast[3] is not None and fast[3][0] == "HazardError"
    assert fast[3] == slow[3] and fast[2] == slow[2]


@pytest.mark.parametrize("dst_outer", ["row", "col"])
def test_fractal_word_copy_equals_byte_copy(dst_outer):
    """`copy_fractals` (L1 -> L0 loads, load2d, img2col) moves 8-byte words: the same bytes as a byte-wise copy,
    on strided source and destination grids at odd (32-byte aligned) offsets."""
    from pto_core.ops.mte import FRACTAL, copy_fractals, strided
    rng = np.random.default_rng(7)
    src = rng.integers(0, 256, 40 * FRACTAL + 96, dtype=np.uint8)
    rows, cols = 3, 4
    sv = strided(src[96:], (rows, cols, FRACTAL), (FRACTAL, 9 * FRACTAL, 1))
    strides = (FRACTAL, 5 * FRACTAL) if dst_outer == "col" else (6 * FRACTAL, FRACTAL)
    got, want = (np.full(40 * FRACTAL + 32, 0xA5, np.uint8) for _ in range(2))
    copy_fractals(strided(got[32:], (rows, cols, FRACTAL), strides + (1,), True), sv)
    strided(want[32:], (rows, cols, FRACTAL), strides + (1,), True)[...] = sv
    assert np.array_equal(got, want)
    copy_fractals(strided(got[32:], (rows * cols, FRACTAL), (FRACTAL, 1), True), sv.reshape(-1, FRACTAL)[::-1])
    strided(want[32:], (rows * cols, FRACTAL), (FRACTAL, 1), True)[...] = sv.reshape(-1, FRACTAL)[::-1]
    assert np.array_equal(got, want)                 # load2d addr_dec: fractals in decreasing order


@pytest.mark.parametrize("sat", [True, False])
@pytest.mark.parametrize("mm,n,k", [(256, 64, 128), (1, 32, 64), (48, 16, 32)])
def test_mad_acc_through_a_work_array_equals_the_transposed_accumulate(sat, mm, n, k):
    """f32 ``mad_acc`` copies the product into Nz order (64-byte rows) and adds it contiguously: the
    same bits as adding the transposed product to the L0C tile, inf and NaN old values
    included (sat: inf -> f32 max, NaN -> 0; nosat: kept), GEMV (m == 1) too."""
    m = Machine("A5")
    lhs, rhs, dst = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
    rows = max(16, -(-mm // 16) * 16)
    a = (RNG.standard_normal((mm, k)) * 4).astype(np.float16)
    bt = (RNG.standard_normal((n, k)) * 4).astype(np.float16)
    old = RNG.standard_normal((rows, n)).astype(np.float32)
    old[0, :4] = [np.inf, -np.inf, np.nan, np.finfo(np.float32).max]     # special old values
    m.write(dst, layout.pack(old, "Nz", "f32", fractal=1024))
    if mm == 1:
        m.write(lhs, a.reshape(-1))
    else:
        _stage_nz(m, lhs, a)
    _stage_nz(m, rhs, bt)
    pto.set_flag("MTE1", "M", 0)
    pto.wait_flag("MTE1", "M", 0)
    pto.mad_acc(lhs, rhs, dst, mm, n, k, sat=sat)
    pto.set_flag("M", "MTE1", 0)
    pto.wait_flag("M", "MTE1", 0)
    with np.errstate(over="ignore", invalid="ignore"):
        prod = np.zeros((rows, n), np.float32)
        prod[:mm] = np.matmul(a.astype(np.float32), bt.astype(np.float32).T)
        want = old + prod
    assert np.isinf(want[0, :2]).all() and np.isnan(want[0, 2]) and np.isfinite(want[1:]).all()
    if sat:
        want = np.nan_to_num(want, nan=0.0, posinf=np.finfo(np.float32).max, neginf=-np.finfo(np.float32).max)
    got = _nz_acc(m, dst, rows, n)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


# ============================================================================ bound flag ops (OpSpec.bind)


def _flag_program(body, target="A5"):
    from pto_core.program import program
    with program("flags", target=target) as k:
        g = k.gm_arg("g", "f16", (256,), io="out", init=1.0)
        a, c = k.ptr("ub", "f16", 0), k.ptr("ub", "f16", 0x1000)
        body(k, g, a, c)
    return k.program


def _run_flags(monkeypatch, bound, body, machine=None):
    """Run ``body``'s program with the flag ops' bind hook on or off: (error class, text, where), reports, output."""
    import dataclasses
    from pto_core.ops.registry import OPS
    if not bound:
        for name in ("set_flag", "wait_flag", "set_flag_dyn", "wait_flag_dyn"):
            monkeypatch.setitem(OPS, name, dataclasses.replace(OPS[name], bind=None))
    exe = _flag_program(body).compile()
    try:
        if machine is not None:
            exe.run({})                               # on the program's target first, then on ``machine``'s
        out = exe.run({}, **({"machine": machine()} if machine else {}))
        err = None
    except Exception as e:                            # noqa: BLE001 - compared between the two paths
        out, err = None, (type(e).__name__, str(e), e.where)
    monkeypatch.undo()
    return err, list(exe.reports), None if out is None else out["g"].tobytes()


def _clean(k, g, a, c):
    pto.set_flag("V", "MTE2", 0)                   # a wait that teaches MTE2 nothing new
    pto.wait_flag("V", "MTE2", 0)
    pto.mte_gm_ub(g, a, 0, 512, nburst=(1, 0, 0))
    pto.set_flag("MTE2", "V", "EVENT_ID1")
    pto.wait_flag("MTE2", "V", "EVENT_ID1")
    with k.for_(0, 3, dtype="s32"):
        pto.set_flag_dyn("MTE2", "V", 2)
        pto.wait_flag_dyn("MTE2", "V", np.int64(2))
        pto.ub.vadd(c, a, a, 2)
    pto.set_flag("V", "MTE3", 0)
    pto.wait_flag("V", "MTE3", 0)
    pto.mte_ub_gm(c, g, 512, nburst=(1, 0, 0))


def _unordered(k, g, a, c):
    pto.mte_gm_ub(g, a, 0, 512, nburst=(1, 0, 0))
    with k.for_(0, 3, dtype="s32"):                # flags between other pipes: the vadd is still unordered
        pto.set_flag("MTE3", "V", 1)
        pto.wait_flag("MTE3", "V", 1)
    pto.ub.vadd(c, a, a, 2)


def _refill(k, g, a, c):
    for _ in range(2):                             # V's thresholds are cached by the first vadd, then change
        pto.mte_gm_ub(g, a, 0, 512, nburst=(1, 0, 0))
        pto.set_flag("MTE2", "V", 0)
        pto.wait_flag("MTE2", "V", 0)
        pto.ub.vadd(c, a, a, 2)
        pto.set_flag("V", "MTE2", 0)
        pto.wait_flag("V", "MTE2", 0)


def _set_twice(k, g, a, c):
    with k.for_(0, 2, dtype="s32"):
        pto.set_flag("MTE2", "V", 3)


def _wait_unset(k, g, a, c):
    pto.set_flag("MTE2", "V", 3)
    pto.wait_flag("MTE2", "V", 3)
    pto.wait_flag("MTE2", "V", 3)


def _event_5(k, g, a, c):
    pto.set_flag("MTE2", "V", 5)
    pto.wait_flag("MTE2", "V", 5)


@pytest.mark.parametrize("body,machine", [(_clean, None), (_refill, None), (_unordered, None), (_set_twice, None),
                                          (_wait_unset, None), (_event_5, lambda: Machine("Ascend910A")),
                                          (_event_5, None)])
def test_bound_flag_ops_equal_the_general_path(monkeypatch, body, machine):
    """set_flag/wait_flag with compile-time operands (canonical operands made once, `OpSpec.bind`) give the
    same output, reports and first error (class, text, provenance) as the general execute."""
    fast = _run_flags(monkeypatch, True, body, machine)
    slow = _run_flags(monkeypatch, False, body, machine)
    assert fast == slow
    expect = {_clean: None, _refill: None, _event_5: None}.get(body, "?") if machine is None else "SyncError"
    if expect is None:
        assert fast[0] is None and fast[2] is not None
    else:
        assert fast[0] is not None and (expect == "?" or fast[0][0] == expect)
        assert fast[0][2] is not None                # the user's line


def test_clock_acquire_reports_whether_the_row_changed():
    """`PipeClocks.acquire` is True exactly when ``known[p]`` grew (the hazard tracker keeps its cached
    thresholds otherwise; `test_bound_flag_ops_equal_the_general_path` [_refill] covers a change)."""
    from pto_core.checks.vector_clock import PipeClocks
    c = PipeClocks()
    c.tick(4)
    snap = c.release(4)
    assert c.acquire(1, snap) is True and c.known[1][4] == 1
    assert c.acquire(1, snap) is False and c.known[1][4] == 1
    assert c.acquire(1, [0] * len(snap)) is False
    c.tick(4)
    assert c.acquire(1, c.release(4)) is True and c.known[1][4] == 2


# ============================================================================ compiled load_scalar / store_scalar


def _old_load(space, dt, where):
    """The general form the compiled scalar load inlines: ``ctx.read`` of a `Ptr`."""
    from pto_core.memory import Ptr
    nb, sto = dt.nbytes(1), dt.storage
    conv = {"f": float, "b": bool}.get(dt.kind, int)

    def load_scalar(ctx, addr):
        ctx.begin_op("pto.load_scalar", "S", where)
        return conv(ctx.read(Ptr(space, dt, addr), nb, operand="src").view(sto)[0])
    return load_scalar


def _old_store(space, dt, where):
    from pto_core.memory import Ptr
    nb, sto = dt.nbytes(1), dt.storage

    def store_scalar(ctx, addr, value):
        ctx.begin_op("pto.store_scalar", "S", where)
        ctx.write(Ptr(space, dt, addr), nb, operand="dst").view(sto)[0] = value
    return store_scalar


def _scalar_case(monkeypatch, general, case, uninit):
    from pto_core import interpreter
    from pto_core.program import program
    if general:
        monkeypatch.setattr(interpreter, "_make_load", _old_load)
        monkeypatch.setattr(interpreter, "_make_store", _old_store)
    with program("scalars", target="A5") as k:
        g = k.gm_arg("g", "f32", (64,), io="inout")
        u = k.ptr("ub", "f32", 0)
        pto.mte_gm_ub(g, u, 0, 128, nburst=(1, 0, 0))
        if case != "hazard":                                      # (without the flag: a RAW hazard on S)
            pto.set_flag("MTE2", "S", 0)
            pto.wait_flag("MTE2", "S", 0)
        with k.for_(0, 40, dtype="s32") as i:
            v = k.load(u, i) + k.load(u, i + 40)                  # elements 41.. are never written
            k.store(u, i + 1, v + 1.5)
            if case == "oob":
                k.store(u, i * 0x4000, v)
            k.store(g, i, k.load(g, i) * 2.0)
    try:
        exe = k.program.compile()
        out = exe.run({"g": np.arange(64, dtype=np.float32)}, options=MachineOptions(uninitialized=uninit))
        res = (None, out["g"].tobytes())
    except Exception as e:                                   # noqa: BLE001 - compared between the two paths
        res = ((type(e).__name__, str(e), e.where, getattr(e, "operand", None), getattr(e, "op", None)), None)
    monkeypatch.undo()
    return res, list(exe.reports)


@pytest.mark.parametrize("case", ["ok", "oob", "hazard"])
@pytest.mark.parametrize("uninit", ["record", "raise"])
def test_compiled_scalar_loads_and_stores_equal_the_ctx_read_write_path(monkeypatch, case, uninit):
    """The compiled load_scalar/store_scalar (locate + access hooks inlined) give the same values, reports
    and first error (class, text, provenance, operand) as ``ctx.read`` / ``ctx.write`` of a `Ptr`."""
    fast = _scalar_case(monkeypatch, False, case, uninit)
    slow = _scalar_case(monkeypatch, True, case, uninit)
    assert fast == slow
    if case == "ok" and uninit == "record":
        assert fast[0][0] is None and any(kind == "uninitialized" for kind, _ in fast[1])
    if case != "ok" or uninit == "raise":
        assert fast[0][0] is not None and fast[0][0][2] is not None


# ============================================================================ bound vector ops (OpSpec.bind)


def _vec_program(body):
    from pto_core.program import program
    with program("vec", target="A5") as k:
        g = k.gm_arg("g", "f16", (1024,), io="out", init=1.5)
        a, b, c = k.ptr("ub", "f16", 0), k.ptr("ub", "f16", 0x1000), k.ptr("ub", "f16", 0x2000)
        body(k, g, a, b, c)
    return k.program


def _run_vec(monkeypatch, bound, body, machine=None):
    """Run ``body``'s program with the lanewise ops' bind hook on or off: (error class, text, where), reports,
    output. With ``machine``, the compiled program runs on its own target first, then on that machine's."""
    from pto_core.ops import vector_elementwise
    monkeypatch.setattr(vector_elementwise, "VECTOR_BIND", bound)
    exe = _vec_program(body).compile()
    try:
        if machine is not None:
            exe.run({})
        out = exe.run({}, **({"machine": machine()} if machine else {}))
        err = None
    except Exception as e:                            # noqa: BLE001 - compared between the two paths
        out, err = None, (type(e).__name__, str(e), e.where)
    monkeypatch.undo()
    return err, list(exe.reports), None if out is None else out["g"].tobytes()


def _vec_load(g, a, b):
    pto.mte_gm_ub(g, a, 0, 2048, nburst=(1, 0, 0))
    pto.mte_gm_ub(g, b, 0, 2048, nburst=(1, 0, 0))
    pto.set_flag("MTE2", "V", 0)
    pto.wait_flag("MTE2", "V", 0)


def _vec_store(g, c):
    pto.set_flag("V", "MTE3", 0)
    pto.wait_flag("V", "MTE3", 0)
    pto.mte_ub_gm(c, g, 2048, nburst=(1, 0, 0))


def _vec_clean(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32"):
        pto.ub.vadd(c, a, b, 2)
        pto.ub.vmuls(c, c, 0.3, 2, mask=(0x00FF00FF00FF00FF, 0xFFFF0000FFFF0000))
        pto.ub.vmax(c, c, a, 1, blk_stride=(1, 2, 1), rep_stride=(8, 8, 8))
        pto.ub.vadds(c, c, 65504.0, 2, counter=(200,))
        pto.ub.vmul(c, c, b, 0)
        pto.ub.vexp(c, c, 1)
    _vec_store(g, c)


def _vec_ints(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 2, dtype="s32"):
        pto.ub.vshr(k.ptr("ub", "s16", 0x2000), k.ptr("ub", "s16", 0), 3, 2, round=True)
        pto.ub.vshl(k.ptr("ub", "s16", 0x2000), k.ptr("ub", "s16", 0x2000), 15, 1)
    _vec_store(g, c)


def _vec_uninit(k, g, a, b, c):
    with k.for_(0, 2, dtype="s32"):
        pto.ub.vadd(c, a, b, 1)                   # reads unwritten UB
    _vec_store(g, c)


def _vec_unordered(k, g, a, b, c):
    pto.mte_gm_ub(g, a, 0, 2048, nburst=(1, 0, 0))
    pto.ub.vadd(c, a, a, 1)                       # no flag between MTE2 and V


def _vec_counter(k, g, a, b, c):
    _vec_load(g, a, b)
    pto.ub.vadd(c, a, b, 2, counter=(200,))       # counter mode: refused on v100 targets at run time


@pytest.mark.parametrize("body,machine", [(_vec_clean, None), (_vec_ints, None), (_vec_uninit, None),
                                          (_vec_unordered, None), (_vec_counter, None),
                                          (_vec_clean, lambda: Machine("Ascend910B1")),
                                          (_vec_counter, lambda: Machine("Ascend910A"))])
def test_bound_vector_ops_equal_the_general_path(monkeypatch, body, machine):
    """Lanewise vector ops with compile-time operands (checks, dtype legality, scalar and plan made once per
    target, `OpSpec.bind`) give the same output, reports and first error (class, text, provenance) as the
    general execute, also when the compiled program then runs on a machine with another target."""
    fast = _run_vec(monkeypatch, True, body, machine)
    slow = _run_vec(monkeypatch, False, body, machine)
    assert fast == slow
    if body is _vec_counter and machine is not None:
        assert fast[0] is not None and fast[0][2] is not None      # refused on 910A, at the user's line
    elif body in (_vec_clean, _vec_ints):
        assert fast[0] is None and fast[2] is not None
    elif body in (_vec_uninit, _vec_unordered):
        assert fast[1] or (fast[0] is not None and fast[0][2] is not None)     # reported, or refused at the line


def _vecrt_clean(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        o = i * 128                                   # run-time pointers, 256 B apart
        pto.ub.vadd(c + o, a + o, b + o, 1)
        pto.ub.vmuls(c + o, c + o, 0.3, 1, mask=(0x00FF00FF00FF00FF, 0xFFFF0000FFFF0000))
        pto.ub.vadds(c + o, c + o, 65504.0, 1, counter=(100,))
        pto.ub.vmax(c, c + o, a, 1)                   # one run-time pointer among constant ones
        pto.ub.vexp(c + o, c + o, 1)
    _vec_store(g, c)


def _vecrt_misaligned(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadd(c, a + i * 8, b + i * 128, 1)     # 16 B steps: the second pass is off 32 B
    _vec_store(g, c)


def _vecrt_two_bad(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vadd(c + 8, a + i * 128 + 8, b, 1)     # dst (constant) and src0 (run-time) both off 32 B: dst named
    _vec_store(g, c)


def _vecrt_out_of_range(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 4, dtype="s32") as i:
        pto.ub.vadd(c + i * 0x10000, a, b + i * 64, 1)   # 128 KiB steps: runs off the UB
    _vec_store(g, c)


def _vecrt_overlap(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadd(a + i * 16, a + i * 32, b + i * 16, 2)   # dst and src0 overlap, differently each pass
    _vec_store(g, c)


def _vecrt_uninit(k, g, a, b, c):
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vadd(c + i * 128, a + i * 128, b + i * 128, 1)   # reads unwritten UB
    _vec_store(g, c)


def _vecrt_unordered(k, g, a, b, c):
    pto.mte_gm_ub(g, a, 0, 2048, nburst=(1, 0, 0))
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vadd(c + i * 128, a + i * 128, a, 1)   # no flag between MTE2 and V


def _vecrt_dtypes(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vadd(c + i * 128, k.ptr("ub", "f32", 0) + i * 64, b + i * 128, 1)   # mixed dtypes: refused


def _vecrt_counter(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vadd(c + i * 128, a + i * 128, b, 2, counter=(200,))   # refused on v100 targets


def _vecrt_counter_zero(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadds(c + i * 128, a, 1.0, 1, counter=(i * 100,))      # 0 (COUNTER_ZERO_AT_RUN_TIME_IS_NOOP), 100, 200
    _vec_store(g, c)


def _vecrs_clean(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        x = cast(i, "f32")                            # run-time scalars, constant pointers (softmax's form)
        pto.ub.vmuls(c, a, x * 0.3 + 0.1, 1)
        pto.ub.vadds(c, c, 0.0 - x, 2, mask=(0x00FF00FF00FF00FF, 0xFFFF0000FFFF0000))
        pto.ub.vmaxs(c + i * 128, c, x * 0.5, 1)      # a run-time scalar and a run-time pointer
        pto.ub.vshr(k.ptr("ub", "s16", 0x3000), k.ptr("ub", "s16", 0), i * 5, 1, round=True)
        pto.ub.vadds(k.ptr("ub", "s16", 0x3000), k.ptr("ub", "s16", 0x3000), i * 10000 - 15000, 1)
    _vec_store(g, c)


def _vecrs_special(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        x = cast(i, "f32")
        big = x * 1e30 * 1e30                         # 0, then inf
        pto.ub.vadds(c, a, big, 1)
        pto.ub.vmuls(c, c, big - big, 1)              # 0, then NaN
        pto.ub.vmuls(c, c, x * 70000.0, 1)            # out of range for f16: rounds to inf
    _vec_store(g, c)


def _vecrs_s16_range(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadds(k.ptr("ub", "s16", 0x2000), k.ptr("ub", "s16", 0), 0 - i * 20000, 1)   # -40000 on pass 3


def _vecrs_shift_range(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vshl(k.ptr("ub", "s16", 0x2000), k.ptr("ub", "s16", 0), i * 9, 1)   # 18 > 16 on pass 3


def _vecrs_negative(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vshr(k.ptr("ub", "s16", 0x2000), k.ptr("ub", "s16", 0), 1 - i, 1)    # -1 on pass 3


def _vecrs_fraction(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadds(k.ptr("ub", "s16", 0x2000), k.ptr("ub", "s16", 0), cast(i, "f32") * 0.75, 1)  # 0.75: refused


@pytest.mark.parametrize("body,machine", [(_vecrt_clean, None), (_vecrt_misaligned, None), (_vecrt_two_bad, None),
                                          (_vecrt_out_of_range, None), (_vecrt_overlap, None),
                                          (_vecrt_uninit, None), (_vecrt_unordered, None), (_vecrt_dtypes, None),
                                          (_vecrt_clean, lambda: Machine("Ascend910B1")),
                                          (_vecrt_counter, lambda: Machine("Ascend910A")),
                                          (_vecrt_counter_zero, None),
                                          (_vecrt_counter_zero, lambda: Machine("Ascend910B1")),
                                          (_vecrs_clean, None), (_vecrs_special, None), (_vecrs_s16_range, None),
                                          (_vecrs_shift_range, None), (_vecrs_negative, None),
                                          (_vecrs_fraction, None),
                                          (_vecrs_clean, lambda: Machine("Ascend910B1")),
                                          (_vecrs_shift_range, lambda: Machine("Ascend910B1"))])
def test_bound_vector_ops_with_run_time_pointers_equal_the_general_path(monkeypatch, body, machine):
    """Lanewise vector ops whose pointers are computed at run time (`OpSpec.bind_holes`): the address-independent
    setup is made once per target, the pointer checks (alignment, space), bounds, hazards and initialisation
    still run on every op; same output, reports and first error (class, text, provenance) as the general
    execute, also after a target switch."""
    from pto_core.ops import vector_elementwise
    calls, checks = [], []
    real, real_check = vector_elementwise._scalar_value, vector_elementwise.ve.check_ub

    def counting(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    def counting_check(*a, **kw):
        checks.append(1)
        return real_check(*a, **kw)

    def count():
        monkeypatch.setattr(vector_elementwise, "_scalar_value", counting)
        monkeypatch.setattr(vector_elementwise.ve, "check_ub", counting_check)

    count()
    fast = _run_vec(monkeypatch, True, body, machine)
    nfast, nfast_checks = len(calls), len(checks)
    count()
    slow = _run_vec(monkeypatch, False, body, machine)
    assert fast == slow
    if body is _vecrt_clean:
        assert fast[0] is None and fast[2] is not None
        assert nfast < len(calls) - nfast             # the bound form converts the scalars once per target
    elif body is _vecrs_clean:
        assert fast[0] is None and fast[2] is not None
        assert nfast == len(calls) - nfast            # run-time scalars: converted on every op, both ways
        assert nfast_checks < len(checks) - nfast_checks    # the constant pointers: checked once per target
    elif body in (_vecrs_s16_range, _vecrs_shift_range, _vecrs_negative, _vecrs_fraction):
        assert fast[0] is not None and fast[0][2] is not None and "i=" in fast[0][1]   # at the failing pass
    elif body is _vecrt_counter_zero:
        assert fast[0] is None and fast[2] is not None              # a run-time counter of 0 is a no-op
    elif body is _vecrt_counter:
        assert fast[0] is not None and fast[0][2] is not None      # refused on 910A, at the user's line
    elif body in (_vecrt_misaligned, _vecrt_out_of_range, _vecrt_dtypes):
        assert fast[0] is not None and fast[0][2] is not None
    elif body in (_vecrt_uninit, _vecrt_unordered):
        assert fast[1] or (fast[0] is not None and fast[0][2] is not None)


# ---------------------------------------------------------------- run-time repeat counts (OpSpec.bind_holes)


def _vecrr_init(k):
    """Sources of up to 255 f16 repeats (64 KiB each) at 0x8000 and 0x18000, written by the vector pipe."""
    a, b = k.ptr("ub", "f16", 0x8000), k.ptr("ub", "f16", 0x18000)
    pto.ub.vector_dup(a, 1.25, 255)
    pto.ub.vector_dup(b, -0.5, 255)
    return a, b


def _vecrr_clean(k, g, a, b, c):
    _vec_load(g, a, b)
    big_a, big_b = _vecrr_init(k)
    d = big_a                                         # in place: the UB of Ascend910B1 is 192 KiB
    for _ in range(2):                                # the same repeats again: the memoised plans
        with k.for_(0, 4, dtype="s32") as i:
            rep = i * 85                              # 0 (no-op), 85, 170, 255
            pto.ub.vadd(d, big_a, big_b, rep)
            pto.ub.vmuls(d, d, 0.3, rep)
            pto.ub.vexp(d, d, rep, mask=(0x00FF00FF00FF00FF, 0xFFFF0000FFFF0000))
            pto.ub.vadds(c, a, cast(i, "f32") * 0.5, 1 + i)          # run-time scalar and repeat
            pto.ub.vmax(c + i * 128, a, b, 4 - i)                     # run-time pointer and repeat
            pto.ub.vadd(c, a, b, i + 1, rep_stride=(8, 0, 8))         # a stride clause
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vadd(c, a, b, 1 + i)
        pto.ub.vadd(c, a, b, 1)                       # the same op, constant repeat: same plan cache
    pto.ub.vadd(c, a, b, 200, counter=(300,))         # counter mode: the repeat operand is ignored
    _vec_store(g, c)
    pto.set_flag("MTE3", "V", 0)
    pto.wait_flag("MTE3", "V", 0)
    pto.ub.vadd(c, d, d, 8)
    _vec_store(g, c)


def _vecrr_counter(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vadd(c, a, b, i + 1, counter=(200,))   # refused on v100 targets


def _vecrr_256(k, g, a, b, c):
    _vec_load(g, a, b)
    big_a, big_b = _vecrr_init(k)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadd(big_a, big_a, big_b, 254 + i)     # 256 on pass 3: refused
    _vec_store(g, c)


def _vecrr_negative(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vmuls(c, a, 2.0, 1 - i)                # 1, 0 (no-op), -1: refused
    _vec_store(g, c)


def _vecrr_out_of_range(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadd(k.ptr("ub", "f16", 0x3F000), a, a, 8 + i * 8)   # 24 repeats end past the 256 KiB UB
    _vec_store(g, c)


def _vecrr_loaded(k, g, a, b, c):
    t = k.gm_arg("tiling", "s32", (2,), io="workspace", init=127)
    _vec_load(g, a, b)
    big_a, big_b = _vecrr_init(k)
    n = k.load(t, 0)                                  # a dynamic kernel's tiling value, read from GM
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadd(big_a, big_a, big_b, n * (i + 1) + i)    # 127, 255, then 383: refused
    _vec_store(g, c)


def _vecrr_uninit(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vadd(c, a, b, 8 + i * 4)               # 12 and 16 repeats read past the 2 KiB loaded
    _vec_store(g, c)


@pytest.mark.parametrize("body,machine", [(_vecrr_clean, None), (_vecrr_256, None), (_vecrr_negative, None),
                                          (_vecrr_out_of_range, None), (_vecrr_loaded, None),
                                          (_vecrr_uninit, None),
                                          (_vecrr_clean, lambda: Machine("Ascend910B1")),
                                          (_vecrr_out_of_range, lambda: Machine("Ascend910B1")),
                                          (_vecrr_counter, lambda: Machine("Ascend910A"))])
def test_bound_vector_ops_with_run_time_repeats_equal_the_general_path(monkeypatch, body, machine):
    """Lanewise vector ops whose repeat count is computed at run time (a dynamic kernel's tiling Scalar,
    `OpSpec.bind_holes`): checks, dtype legality and scalar are made once per target, the plan once per
    repeat value; the repeat range check (0..255, 0 a no-op), bounds, hazards and initialisation for that
    repeat give the same output, reports and first error (class, text, provenance) as the general execute,
    also after a target switch."""
    from pto_core.ops import vector_elementwise
    calls = []
    real = vector_elementwise._scalar_value

    def count():
        monkeypatch.setattr(vector_elementwise, "_scalar_value", lambda *a, **kw: calls.append(1) or real(*a, **kw))

    count()
    fast = _run_vec(monkeypatch, True, body, machine)
    nfast = len(calls)
    count()
    slow = _run_vec(monkeypatch, False, body, machine)
    assert fast == slow
    if body is _vecrr_clean:
        assert fast[0] is None and not fast[1] and fast[2] is not None
        # the constant scalar of the run-time-repeat vmuls: converted once per target, not per op
        assert nfast < len(calls) - nfast
    elif body is _vecrr_counter:
        assert fast[0] is not None and fast[0][2] is not None      # refused on 910A, at the user's line
    elif body is _vecrr_uninit:
        assert fast[1] or (fast[0] is not None and fast[0][2] is not None)
    else:
        assert fast[0] is not None and fast[0][2] is not None and "i=" in fast[0][1]   # at the failing pass


# ============================================================================ bound burst moves (OpSpec.bind)


def _run_mte(monkeypatch, bound, body, machine=None):
    """Run ``body``'s program with the burst moves' bind hook on or off: (error class, text, where), reports,
    outputs. With ``machine``, the compiled program runs on its own target first, then on that machine's."""
    from pto_core.ops import mte
    from pto_core.program import program
    monkeypatch.setattr(mte, "MTE_BIND", bound)
    with program("bursts", target="A5") as k:
        g = k.gm_arg("g", "f16", (1000,), io="inout")
        o = k.gm_arg("o", "f16", (1000,), io="out", init=0.5)
        body(k, g, o, k.ptr("ub", "f16", 0), k.ptr("l1", "f16", 0))
    exe = k.program.compile()
    data = {"g": (np.arange(1000) % 97).astype(np.float16)}
    try:
        if machine is not None:
            exe.run(dict(data))
        out = exe.run(dict(data), **({"machine": machine()} if machine else {}))
        err = None
    except Exception as e:                            # noqa: BLE001 - compared between the two paths
        out, err = None, (type(e).__name__, str(e), e.where)
    monkeypatch.undo()
    return err, list(exe.reports), None if out is None else (out["g"].tobytes(), out["o"].tobytes())


def _sync(src, dst):
    pto.set_flag(src, dst, 0)
    pto.wait_flag(src, dst, 0)


def _mte_clean(k, g, o, u, l1):
    with k.for_(0, 2, dtype="s32"):
        pto.mte_gm_ub(g, u, 0, 256, nburst=(3, 320, 256))                       # aligned rows
        pto.mte_gm_ub(g, k.ptr("ub", "f16", 0x1000), 1, 70,
                      nburst=(2, 100, 96), loop=((2, 300, 192),))               # unaligned: dummy tail
        pto.mte_gm_ub(g, k.ptr("ub", "f16", 0x2000), 0, 40, nburst=(2, 64, 64), pad=(7.0, 2, 3))
        _sync("MTE2", "MTE3")
        pto.mte_ub_gm(u, o, 200, nburst=(3, 256, 300))                          # de-padding store
        pto.mte_ub_gm(k.ptr("ub", "f16", 0x2000), o, 64, nburst=(1, 0, 0), l2_cache_ctl=(3,))
        pto.mte_gm_l1(g, l1, 100, nburst=(2, 128, 128))
        _sync("MTE2", "MTE1")
        pto.mte_l1_ub(l1, k.ptr("ub", "f16", 0x3000), 64, nburst=(2, 128, 64))
        _sync("MTE3", "MTE2")
        _sync("MTE1", "MTE2")


def _mte_atomic(k, g, o, u, l1):
    pto.mte_gm_ub(g, u, 0, 512, nburst=(1, 0, 0))
    _sync("MTE2", "MTE3")
    pto.set_atomic_f16()
    pto.set_atomic_add()
    with k.for_(0, 2, dtype="s32"):
        pto.mte_ub_gm(u, g, 512, nburst=(1, 0, 0))
    pto.set_atomic_none()


def _mte_tail(k, g, o, u, l1):
    pto.mte_gm_ub(g, u, 0, 2080, nburst=(1, 0, 0))      # reads past the 2000-byte tensor's padding: unknown
    _sync("MTE2", "MTE3")
    pto.mte_ub_gm(u, o, 2016, nburst=(1, 0, 0))          # writes into the allocation padding: dropped


def _mte_misaligned(k, g, o, u, l1):
    with k.for_(0, 2, dtype="s32"):
        pto.mte_gm_ub(g, k.ptr("ub", "f16", 0x10), 0, 64, nburst=(1, 0, 0))    # UB destination off 32 B


def _mte_out_of_bounds(k, g, o, u, l1):
    pto.mte_gm_ub(g, u, 0, 256, nburst=(1, 0, 0))
    _sync("MTE2", "MTE3")
    pto.mte_ub_gm(u, o, 256, nburst=(9, 0, 256))          # runs past o and its padding


def _mte_unordered(k, g, o, u, l1):
    pto.mte_gm_ub(g, u, 0, 256, nburst=(1, 0, 0))
    pto.mte_ub_gm(u, o, 256, nburst=(1, 0, 0))            # no flag MTE2 -> MTE3


@pytest.mark.parametrize("body,machine", [(_mte_clean, None), (_mte_atomic, None), (_mte_tail, None),
                                          (_mte_misaligned, None), (_mte_out_of_bounds, None),
                                          (_mte_unordered, None), (_mte_clean, lambda: Machine("Ascend910B1")),
                                          (_mte_misaligned, lambda: Machine("Ascend910A"))])
def test_bound_burst_moves_equal_the_general_path(monkeypatch, body, machine):
    """mte_gm_ub / mte_ub_gm / mte_gm_l1 / mte_l1_ub with compile-time operands (burst checks and groups made
    once per target, `OpSpec.bind`) give the same outputs, reports and first error (class, text, provenance)
    as the general execute, also when the compiled program then runs on a machine with another target."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # _mte_tail's overread: checked in the reports below
        fast = _run_mte(monkeypatch, True, body, machine)
        slow = _run_mte(monkeypatch, False, body, machine)
    assert fast == slow
    if body in (_mte_clean, _mte_atomic, _mte_tail):
        assert fast[0] is None and fast[2] is not None
    else:
        assert fast[0] is not None and fast[0][2] is not None          # refused at the user's line
    if body is _mte_tail:
        assert {r[0] for r in fast[1]} >= {"gm-overread", "gm-tail"}


def _mte_run_time_gm(k, g, o, u, l1):
    with k.for_(0, 3, dtype="s32") as i:
        pto.mte_gm_ub(g + i * 128, u, 0, 256, nburst=(1, 0, 0))               # GM address computed per run
        _sync("MTE2", "MTE3")
        pto.mte_ub_gm(u, o + i * 900, 256, nburst=(1, 0, 0))                  # i = 1 overruns o
        _sync("MTE3", "MTE2")


def _mte_run_time_ub(k, g, o, u, l1):
    with k.for_(0, 3, dtype="s32") as i:
        pto.mte_gm_ub(g, u + i * 8, 0, 256, nburst=(1, 0, 0))                 # UB address computed: 16 B off
        _sync("MTE2", "MTE3")


@pytest.mark.parametrize("body,machine", [(_mte_run_time_gm, None), (_mte_run_time_ub, None),
                                          (_mte_run_time_gm, lambda: Machine("Ascend910B1"))])
def test_burst_moves_with_a_run_time_operand_equal_the_general_path(monkeypatch, body, machine):
    """A burst move whose one run-time operand is a GM pointer binds its checks and groups once
    (`OpSpec.bind_hole`); a run-time UB pointer takes the general path: same outputs, reports, first error."""
    fast = _run_mte(monkeypatch, True, body, machine)
    slow = _run_mte(monkeypatch, False, body, machine)
    assert fast == slow
    assert fast[0] is not None and fast[0][2] is not None          # refused at the user's line


def _mte_ub_moves(k, g, o, u, l1):
    pto.mte_gm_ub(g, u, 0, 2048, nburst=(1, 0, 0))
    _sync("MTE2", "V")
    _sync("MTE2", "MTE3")
    with k.for_(0, 3, dtype="s32") as i:
        pto.mte_ub_ub(u, k.ptr("ub", "f16", 0x1000), 2, nburst=(3, 1, 0))          # 32-byte units, gaps
        pto.mte_ub_ub(u + i * 16, k.ptr("ub", "f16", 0x2000) + i * 32, 1, nburst=(2, 0, 1))   # run-time pointers
        pto.mte_ub_l1(u, l1, 4, nburst=(2, 0, 2))
        pto.mte_ub_l1(u + i * 64, l1 + i * 256, 1, nburst=(1, 0, 0))
    _sync("V", "MTE3")
    pto.mte_ub_gm(k.ptr("ub", "f16", 0x1000), o, 512, nburst=(1, 0, 0))
    _sync("MTE3", "MTE1")
    pto.mte_l1_ub(l1, k.ptr("ub", "f16", 0x3000), 256, nburst=(1, 0, 0))
    _sync("MTE1", "MTE3")
    pto.mte_ub_gm(k.ptr("ub", "f16", 0x3000), o, 256, nburst=(1, 0, 0))


def _mte_ub_ub_misaligned(k, g, o, u, l1):
    pto.mte_gm_ub(g, u, 0, 512, nburst=(1, 0, 0))
    _sync("MTE2", "V")
    with k.for_(0, 3, dtype="s32") as i:
        pto.mte_ub_ub(u, k.ptr("ub", "f16", 0x1000) + i * 8, 1, nburst=(1, 0, 0))   # 16 B off on pass 2


def _mte_ub_ub_out_of_bounds(k, g, o, u, l1):
    pto.mte_gm_ub(g, u, 0, 512, nburst=(1, 0, 0))
    _sync("MTE2", "V")
    pto.mte_ub_ub(u, k.ptr("ub", "f16", 0x3FF00), 2, nburst=(8, 0, 0))             # runs off the UB


def _mte_ub_l1_count(k, g, o, u, l1):
    pto.mte_gm_ub(g, u, 0, 512, nburst=(1, 0, 0))
    _sync("MTE2", "MTE3")
    with k.for_(0, 2, dtype="s32"):
        pto.mte_ub_l1(u, l1, 1, nburst=(0, 0, 0))       # zero bursts: refused when it runs


@pytest.mark.parametrize("body,machine", [(_mte_ub_moves, None), (_mte_ub_ub_misaligned, None),
                                          (_mte_ub_ub_out_of_bounds, None), (_mte_ub_l1_count, None),
                                          (_mte_ub_moves, lambda: Machine("Ascend910B1")),
                                          (_mte_ub_ub_out_of_bounds, lambda: Machine("Ascend910B1"))])
def test_bound_ub_ub_and_ub_l1_moves_equal_the_general_path(monkeypatch, body, machine):
    """mte_ub_ub / mte_ub_l1 (32-byte units) bind like the byte-burst moves (`OpSpec.bind`, `bind_hole`; a
    run-time on-chip pointer re-runs the checks every time): same outputs, reports and first error."""
    from pto_core.ops import mte
    calls = []
    real = mte.check_int

    def count():
        monkeypatch.setattr(mte, "check_int", lambda *a, **kw: calls.append(1) or real(*a, **kw))

    count()
    fast = _run_mte(monkeypatch, True, body, machine)
    nfast = len(calls)
    count()
    slow = _run_mte(monkeypatch, False, body, machine)
    assert fast == slow
    if body is _mte_ub_moves:
        assert fast[0] is None and not fast[1] and fast[2] is not None
        assert nfast < len(calls) - nfast             # the constant moves: checked once per target
    else:
        assert fast[0] is not None and fast[0][2] is not None          # refused at the user's line


def test_gm_find_with_the_find_padded_hint_equals_the_bisect_lookup():
    """`GmMemory.find` tries the region `find_padded` found last: the same region, offset or error text for
    addresses inside, at the end of, past, in the padding or guard gap after, and before every region."""
    m = Machine("A5")
    regions = [m.gm.alloc(n, name=f"r{n}") for n in (0, 100, 64, 2000)]

    def outcome(addr, n):
        try:
            r, off = m.gm.find(addr, n)
            return r.name, off
        except Exception as e:                        # noqa: BLE001 - compared between the two lookups
            return type(e).__name__, str(e)

    probes = []
    for r in regions:
        for d in (-40, -1, 0, 1, 36, r.size - 1, r.size, r.size + 1, r.padded_size, r.padded_size + 64):
            for n in (0, 1, 4, 64, r.size):
                probes.append((r.base + d, n))
    for addr, n in probes:
        m.gm._hint = None
        plain = outcome(addr, n)
        for r in regions:
            m.gm._hint = r
            assert outcome(addr, n) == plain, (addr, n, r.name)


# ============================================================================ img2col: dense destination


def _img2col_case(monkeypatch, fast, body, options):
    from pto_core.ops import legacy_cube
    monkeypatch.setattr(legacy_cube, "IMG2COL_DENSE_DST", fast)
    m = Machine("Ascend310", options=MachineOptions(fill="random", seed=5, **options))
    try:
        body(m)
        err = None
    except Exception as e:          # the two paths must raise the same error
        err = (type(e).__name__, str(e))
    l0a, l0c = m.cores[0].buffer("l0a"), m.cores[0].buffer("l0c")
    return (l0a.data.copy(), np.array(l0a.written, copy=True), l0c.data.copy(), list(m.reports), err,
            list(l0a.known))


def _img2col_body(ds, hole=None, synced=True, pad_value=-3.0, k0=16):
    """A 2 x 5 x 6 map (one pixel unwritten if ``hole``), img2col of a 48 x 32 block into L0A (Zz,
    ``ds`` fractals per M row: 2 is dense; K from ``k0``: 272 includes the zero lanes past 3 * 3 * 32), the
    weights into L0B, a mad reading both."""
    def body(m):
        fm = (np.arange(2 * 5 * 6 * 16) % 23 - 11).astype(np.float16)
        src = m.ptr("l1", "f16", 0)
        if hole is None:
            m.write(src, fm)
        else:
            m.write(src, fm[:hole])
            m.write(src + (hole + 16), fm[hole + 16:])
        w = m.ptr("l1", "f16", 0x8000)
        m.write(w, (np.arange(32 * 16) % 7 - 3).astype(np.float16))
        a, b, c = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
        pto.set_flag("MTE2", "MTE1", 0)
        pto.wait_flag("MTE2", "MTE1", 0)
        pto.img2col(src, a, 5, 6, 32, k0, 32, -2, 48, ds, stride=(1, 1), filter=(3, 3), dilation=(1, 1),
                    pad=(1, 1, 1, 1), pad_value=(pad_value,))
        pto.load2d(w, b, 0, 2, 1, 0)
        if synced:
            pto.set_flag("MTE1", "M", 0)
            pto.wait_flag("MTE1", "M", 0)
        if ds == 2:
            pto.mad(a, b, c, 48, 16, 32, disable_gemv=True)
    return body


@pytest.mark.parametrize("ds,k0", [(2, 16), (3, 16), (2, 272), (3, 272)])
@pytest.mark.parametrize("hole,synced,uninit", [(None, True, "record"), (16 * 7, True, "record"),
                                                (16 * 7, True, "raise"), (None, False, "record")])
def test_img2col_dense_destination_equals_strided_marking(monkeypatch, ds, k0, hole, synced, uninit):
    """img2col into back-to-back L0A fractals (gathered straight into L0A, one known written range) and through
    the general path (a work array copied into L0A, strided marking): the same L0A bytes and written flags, the same L0C result of the mad reading the tile, the same
    reports (uninitialised map pixel), the same hazard error (mad without the MTE1 -> M flag)."""
    body = _img2col_body(ds, hole, synced, k0=k0)
    fast = _img2col_case(monkeypatch, True, body, {"uninitialized": uninit})
    slow = _img2col_case(monkeypatch, False, body, {"uninitialized": uninit})
    for f, s in zip(fast[:3], slow[:3]):
        assert np.array_equal(f, s)
    assert fast[3] == slow[3] and fast[4] == slow[4]
    if synced and uninit == "record":
        assert fast[4] is None
    if not synced and ds == 2:
        assert fast[4] is not None and fast[4][0] == "HazardError"
    if hole is not None and uninit == "record" and k0 == 16:       # K from 272 reads channel block 1 only
        assert any(k == "uninitialized" for k, _ in fast[3])
    if ds == 3 and fast[4] is None:
        assert not fast[1][:3 * 3 * 512].all()       # the gap fractals stay unwritten
    if ds == 2 and fast[4] is None:
        assert any(lo <= 0 and 3 * 2 * 512 <= hi for lo, hi in fast[5])     # the tile is a known written range


# ============================================================================ on-chip buffers made on first use


@pytest.mark.parametrize("fill", ["pattern", "zero", "random"])
def test_lazy_buffers_equal_eager_buffers(monkeypatch, fill):
    """On-chip buffers made on first use (LAZY_BUFFERS) and all made with the Machine: the same initial
    bytes and written flags in every space, in any order of first use (random fill: the same draws),
    the same error for a space the target does not have."""
    from pto_core import memory
    from pto_core.targets import ON_CHIP_SPACES

    def run(lazy, order):
        monkeypatch.setattr(memory, "LAZY_BUFFERS", lazy)
        m = Machine("A5", cores=2, options=MachineOptions(fill=fill, seed=11, fill_byte=0x3C))
        got = {}
        for core in (1, 0):
            for space in order:
                try:
                    b = m.cores[core].buffer(space)
                    got[core, space] = (b.data.copy(), np.array(b.written, copy=True), b.label)
                except Exception as e:
                    got[core, space] = (type(e).__name__, str(e))
        return got

    spaces = list(ON_CHIP_SPACES) + ["nosuch"]
    want = run(False, spaces)
    for got in (run(True, spaces), run(True, spaces[::-1])):
        assert got.keys() == want.keys()
        for key, w in want.items():
            g = got[key]
            assert len(g) == len(w) and all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
                                            for a, b in zip(g, w)), key
    assert sum(isinstance(v[0], np.ndarray) for v in want.values()) >= 8


def test_img2col_pad_value_memo_key_sign_equals_numpy_signbit():
    """The pad-value memo keys a Python float's sign with math.copysign instead of np.signbit: the same sign
    bit on zeros, NaNs, infinities and subnormals, so memoised values equal fresh conversions in any call order."""
    import math

    from pto_core.ops import legacy_cube as lc
    vals = [0.0, -0.0, 1.5, -2.0, float("nan"), -float("nan"), float("inf"), -float("inf"), 5e-324, -5e-324,
            np.float32(-0.0), np.float16(0.0), 3, -3]
    for v in vals:
        if type(v) is float:
            assert (math.copysign(1.0, v) < 0) == bool(np.signbit(v))
    for d in (dtype("f16"), dtype("f32")):
        for order in (vals, vals[::-1]):
            lc._PAD_VALUES.clear()
            for v in order + order:
                got, want = lc._pad_value(v, d), lc._pad_value_uncached(v, d)
                assert got.tobytes() == want.tobytes(), (v, d.name)


# ============================================================================ bound reductions (OpSpec.bind)


def _run_red(monkeypatch, bound, body, machine=None):
    """`_run_vec` with the reductions' bind hooks (`vector_reduce.REDUCE_BIND`) on or off."""
    from pto_core.ops import vector_reduce
    monkeypatch.setattr(vector_reduce, "REDUCE_BIND", bound)
    return _run_vec(monkeypatch, True, body, machine)


def _red_clean(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 3, dtype="s32"):
        pto.ub.vcadd(c, a, 4, mask=(0x00FF00FF00FF00FF, 0xFFFF0000FFFF0000), rep_stride=(1, 8))
        pto.ub.vcmax(c + 16, a, 4, blk_stride=(2,), rep_stride=(1, 4))
        pto.ub.vcmin(c + 32, b, 2)
        pto.ub.vcgadd(c + 48, a, 2, mask=(0, 0x0F0F0000FFFF000F))          # empty blocks keep their value
        pto.ub.vcgmax(c + 64, b, 2)
        pto.ub.vcgmin(c + 80, a, 1, mask=(0, 0xFFFF))
        pto.ub.vcpadd(c + 96, a, 1)
        pto.ub.reduce_add(c + 160, a, w, 8, rep_stride=8)
        pto.ub.reduce_max(c + 176, a, w, 8, mask=100, rep_stride=8, cal_index=True)
        pto.ub.reduce_min(c + 192, b, w, 8, rep_stride=4, cal_index=True)
        pto.ub.reduce_min(c + 208, b, w, 3, rep_stride=8)
        pto.ub.reduce_add(k.ptr("ub", "f32", 0x2200), k.ptr("ub", "f32", 0), k.ptr("ub", "f32", 0x3000), 4)
        pto.ub.reduce_max(k.ptr("ub", "f32", 0x2240), k.ptr("ub", "f32", 0), k.ptr("ub", "f32", 0x3000), 4,
                          cal_index=True)
    _vec_store(g, c)


def _red_rt_ptrs(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 4, dtype="s32") as i:
        pto.ub.vcmax(c + i * 2, a + i * 128, 1)                   # run-time dst and src
        pto.ub.vcgadd(c + 64 + i * 8, b, 1)
        pto.ub.reduce_min(c + 128 + i * 2, a + i * 128, w, 2, cal_index=True)   # chamfer's per-point form
        pto.ub.reduce_add(c + 160 + i, b, w + i * 16, 3)          # run-time dst and work
    _vec_store(g, c)


def _red_rt_repeat(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    for _ in range(2):                                # the same repeats again: the memoised plans
        with k.for_(0, 4, dtype="s32") as i:
            pto.ub.vcadd(c, a, i * 2)                 # 0 (no-op), 2, 4, 6
            pto.ub.vcgmin(c + 16 + i * 8, b, i + 1, rep_stride=(1, 2))
            pto.ub.reduce_max(c + 64, a, w, i + 1, cal_index=True)
            pto.ub.reduce_add(c + 96 + i, b, w, 8 - i * 2, mask=77)
    _vec_store(g, c)


def _red_index_limit(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 3, dtype="s32") as i:
        # 510, 511, then 512 repeats with cal_index: the f16 index limit (511) refuses the last pass
        pto.ub.reduce_min(c, a, w, 510 + i, rep_stride=0, cal_index=True)
        pto.ub.reduce_min(c + 16, a, w, 510 + i * 2, rep_stride=0)          # without cal_index: fine
    _vec_store(g, c)


def _red_repeat_range(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vcadd(c, a, 254 + i, rep_stride=(1, 0))           # 256 on pass 3: refused
        pto.ub.reduce_add(c + 16, a, w, 2 - i, rep_stride=0)     # 0 on pass 3 would be refused as well
    _vec_store(g, c)


def _red_zero_repeat(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.reduce_max(c, a, w, 2 - i)                # 0 repeats on pass 3: vec_reduce_* takes 1..4095
    _vec_store(g, c)


def _red_out_of_range(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 4, dtype="s32") as i:
        pto.ub.reduce_min(c, a + i * 0x10000, w, 1, cal_index=True)   # 128 KiB steps: runs off the UB
    _vec_store(g, c)


def _red_misaligned(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vcadd(c + i, a, 1)                                 # 2 B steps: fine (element alignment)
        pto.ub.reduce_max(c + i, a, w, 1, cal_index=True)         # dst needs 4 B: pass 2 is refused
    _vec_store(g, c)


def _red_src_misaligned(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vcgmax(c + i, a + i * 8, 1)     # pass 2: src (16 B) and dst (2 B) both off: src is named first
    _vec_store(g, c)


def _red_overlap(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.reduce_max(w + 8 - i * 4, a, w, 2, cal_index=True)  # work [w, w+4) meets dst on pass 2
    _vec_store(g, c)


def _red_uninit(k, g, a, b, c):
    _vec_load(g, a, b)
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vcadd(c, a, 8 + i * 4)                             # 12 and 16 repeats read past the 2 KiB loaded
        pto.ub.reduce_min(c + 16, b + i * 512, w, 2)
    _vec_store(g, c)


def _red_unordered(k, g, a, b, c):
    pto.mte_gm_ub(g, a, 0, 2048, nburst=(1, 0, 0))
    w = k.ptr("ub", "f16", 0x3000)
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.reduce_max(c + i * 16, a, w, 1)                    # no flag between MTE2 and V


def _red_f32(k, g, a, b, c):
    _vec_load(g, a, b)
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vcadd(k.ptr("ub", "f32", 0x2000) + i, k.ptr("ub", "f32", 0), 2)   # f32 sums: legal on v100
        pto.ub.reduce_max(k.ptr("ub", "f32", 0x2100) + i * 2, k.ptr("ub", "f32", 0),
                          k.ptr("ub", "f32", 0x3000), 2, cal_index=True)      # vcmax f32: refused on v100
    _vec_store(g, c)


@pytest.mark.parametrize("body,machine", [
    (_red_clean, None), (_red_rt_ptrs, None), (_red_rt_repeat, None), (_red_index_limit, None),
    (_red_repeat_range, None), (_red_zero_repeat, None), (_red_out_of_range, None), (_red_misaligned, None),
    (_red_src_misaligned, None), (_red_overlap, None), (_red_uninit, None), (_red_unordered, None),
    (_red_f32, None),
    (_red_clean, lambda: Machine("Ascend910B1")), (_red_rt_repeat, lambda: Machine("Ascend910B1")),
    (_red_rt_ptrs, lambda: Machine("Ascend910A")), (_red_f32, lambda: Machine("Ascend910A")),
    (_red_clean, lambda: Machine("Ascend910A"))])
def test_bound_reductions_equal_the_general_path(monkeypatch, body, machine):
    """vcadd ... vcpadd and the reduce_add/max/min macros in a compiled program (`vector_reduce.REDUCE_BIND`:
    checks, dtype legality and plan once per target, per pointer dtypes and per run-time repeat value) give the
    same output, reports and first error (class, text, provenance) as the general execute: constant, run-time
    pointers and repeats, refused at a later pass (repeat ranges, the cal_index limit, alignment, work/dst
    overlap, the UB's end), uninitialised and unordered reads, and after a target switch (A2's in-order
    vec_reduce_add, v100's f16-only vcmax)."""
    from pto_core.ops import vector_reduce
    calls = []
    real_rr, real_macro = vector_reduce._check_src_dst, vector_reduce._macro_check

    def count():
        monkeypatch.setattr(vector_reduce, "_check_src_dst", lambda *a, **kw: calls.append(1) or real_rr(*a, **kw))
        monkeypatch.setattr(vector_reduce, "_macro_check", lambda *a, **kw: calls.append(1) or real_macro(*a, **kw))

    count()
    fast = _run_red(monkeypatch, True, body, machine)
    nfast = len(calls)
    count()
    slow = _run_red(monkeypatch, False, body, machine)
    assert fast == slow
    if body in (_red_clean, _red_rt_ptrs, _red_rt_repeat) and machine is None:
        assert fast[0] is None and not fast[1] and fast[2] is not None
        assert nfast < len(calls) - nfast                # bound: the operand checks once per target, not per op
    elif body in (_red_f32, _red_clean) and machine is not None and machine().target.name == "Ascend910A":
        assert fast[0] is not None and fast[0][0] == "UnsupportedOp" and fast[0][2] is not None
    elif body in (_red_uninit, _red_unordered):
        assert fast[1] or (fast[0] is not None and fast[0][2] is not None)
    elif body in (_red_index_limit, _red_repeat_range, _red_zero_repeat, _red_out_of_range, _red_misaligned,
                  _red_src_misaligned, _red_overlap):
        assert fast[0] is not None and fast[0][2] is not None and "i=" in fast[0][1]   # at the failing pass


# ------------------------------------------------- vector_dup bound (OpSpec.bind, bind_holes, bind_dyn)


def _dup_clean(k, g, a, b, c):
    t = k.gm_arg("tiling", "s32", (2,), io="workspace", init=3)
    n = k.load(t, 0)                                  # a dynamic kernel's tiling value, read from GM
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vector_dup(c, 0.25, 8)                                   # all compile-time
        pto.ub.vector_dup(c + i * 128, -3.0, 2)                          # run-time destination
        pto.ub.vector_dup(c + 512, 7.0, 1, mask=(i * 32 + 32,))          # run-time mask (count)
        pto.ub.vector_dup(c + 640, cast(i * n, "f32"), n - 1 + i)        # run-time scalar and repeat
        pto.ub.vector_dup(c + i * 256, 1.5, 1, mask=(0, i * 255 + 1))    # run-time destination and bit mask
    _vec_store(g, c)


def _dup_later_mask(k, g, a, b, c):
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vector_dup(c, 2.0, 1, mask=(64 - i * 32,))               # 64, 32, then 0 lanes: refused
    _vec_store(g, c)


def _dup_later_repeat(k, g, a, b, c):
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vector_dup(c + i * 128, 2.0, 1 - i, mask=(16,))           # 1, 0 (no-op), -1: refused
    _vec_store(g, c)


def _dup_out_of_bounds(k, g, a, b, c):
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vector_dup(k.ptr("ub", "f16", 0x3F000) + i * 0x400, 2.0, 16, mask=(128,))   # pass 2 ends past UB
    _vec_store(g, c)


def _dup_misaligned(k, g, a, b, c):
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vector_dup(c + i * 8, 2.0, 1, mask=(i + 1,))              # 16 B off on pass 2
    _vec_store(g, c)


def _dup_uninit(k, g, a, b, c):
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vector_dup(c, 2.0, 8, mask=(120 + i,))                    # the last lanes of each repeat unwritten
    pto.ub.vadd(b, c, c, 8)                                              # reads them
    _vec_store(g, c)


def _dup_scalar_range(k, g, a, b, c):
    d = k.ptr("ub", "s16", 0x2000)
    with k.for_(0, 3, dtype="s32") as i:
        pto.ub.vector_dup(d, i * 20000, 1, mask=(i + 1,))                # 0, 20000, then 40000: not an s16
    _vec_store(g, c)


def _dup_constant_scalar_range(k, g, a, b, c):
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vector_dup(k.ptr("ub", "s16", 0x2000) + i * 16, 40000, 1, mask=(i + 1,))   # never an s16
    _vec_store(g, c)


def _dup_dtype(k, g, a, b, c):
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vector_dup(k.ptr("ub", "bf16", 0x2000), 1.0, 1, mask=(i + 1,))   # bf16: not on every target
    _vec_store(g, c)


@pytest.mark.parametrize("body,machine", [(_dup_clean, None), (_dup_later_mask, None), (_dup_later_repeat, None),
                                          (_dup_out_of_bounds, None), (_dup_misaligned, None), (_dup_uninit, None),
                                          (_dup_scalar_range, None), (_dup_dtype, None),
                                          (_dup_clean, lambda: Machine("Ascend910B1")),
                                          (_dup_out_of_bounds, lambda: Machine("Ascend910B1")),
                                          (_dup_dtype, lambda: Machine("Ascend910A"))])
def test_bound_vector_dup_equals_the_general_path(monkeypatch, body, machine):
    """vector_dup binds like the lanewise ops (`OpSpec.bind`, `bind_holes`) and with run-time clause values
    (`OpSpec.bind_dyn`: a TIK mask Scalar): dtype legality and a constant scalar once per target, destination
    check, scalar range and plan (mask, repeat) per op; same output, reports and first error (class, text,
    provenance) as the general execute, also after a target switch."""
    from pto_core.ops import vector_elementwise
    calls = []
    real = vector_elementwise._scalar_value

    def count():
        monkeypatch.setattr(vector_elementwise, "_scalar_value", lambda *a, **kw: calls.append(1) or real(*a, **kw))

    count()
    fast = _run_vec(monkeypatch, True, body, machine)
    nfast = len(calls)
    count()
    slow = _run_vec(monkeypatch, False, body, machine)
    assert fast == slow
    if body is _dup_clean:
        assert fast[0] is None and not fast[1] and fast[2] is not None
        assert nfast < len(calls) - nfast             # the constant scalars: converted once per target
    elif body is _dup_uninit:
        assert fast[1] or (fast[0] is not None and fast[0][2] is not None)
    elif body is _dup_dtype and machine is None:
        assert fast[0] is None or fast[0][2] is not None
    else:
        assert fast[0] is not None and fast[0][2] is not None     # refused at the user's line
        if body is not _dup_dtype:
            assert "i=" in fast[0][1]                 # at the failing pass


def test_vector_dup_constant_scalar_out_of_range_is_refused_when_recorded():
    """A constant scalar that does not fit the destination dtype is refused where the op is written (the
    record-time verify), before any compile or run, naming the op's line."""
    with pytest.raises(IllegalOperand, match="scalar 40000 does not fit s16") as e:
        _vec_program(_dup_constant_scalar_range)
    assert "test_fast_paths.py" in str(e.value) and "at core" not in str(e.value)


def test_vector_dup_plan_key_tells_a_bool_repeat_from_1():
    """The dup plan cache keys the repeat with its type: a repeat of True is refused even after a plan for 1
    exists (check_repeat rejects bools), as for the lanewise ops."""
    from pto_core.ops import vector_elementwise as v
    from pto_core.targets import get_target
    t = get_target("A5")
    v._dup_plan(t, dtype("f16"), 1)
    with pytest.raises(Exception) as e:
        v._dup_plan(t, dtype("f16"), True)
    assert "repeat" in str(e.value)


# ----------------------------------------------- burst moves with run-time clause values (OpSpec.bind_dyn)


def _mtec_clean(k, g, o, u, l1):
    with k.for_(0, 2, dtype="s32"), k.for_(0, 3, dtype="s32") as i:      # each value twice: the memoised plans
        pto.mte_gm_ub(g + i * 64, u, 0, 64, nburst=(i + 1, 64, 64))                      # GM hole + count
        pto.mte_gm_ub(g, k.ptr("ub", "f16", 0x1000), 0, 40, nburst=(2, 64 + i * 32, 64))   # static ptrs
        pto.mte_gm_ub(g, k.ptr("ub", "f16", 0x2000), 0, 64, nburst=(1, 0, 0), loop=((i + 1, 200, 64),))
        pto.mte_gm_ub(g, k.ptr("ub", "f16", 0x3000) + i * 256, 0, 64, nburst=(i + 1, 0, 0))  # UB hole: per op
        _sync("MTE2", "MTE3")
        _sync("MTE2", "V")
        pto.mte_ub_gm(u, o + i * 100, 64, nburst=(i + 1, 64, 100))                       # atomic-capable store
        pto.mte_gm_l1(g, l1, 64, nburst=(i + 1, 64, 64))
        _sync("MTE2", "MTE1")
        pto.mte_l1_ub(l1, k.ptr("ub", "f16", 0x4000), 64, nburst=(i + 1, 64, 64))
        pto.mte_ub_ub(u, k.ptr("ub", "f16", 0x5000), 2, nburst=(i + 1, 0, 0))
        _sync("MTE3", "MTE2")
        _sync("MTE1", "MTE2")
        _sync("V", "MTE2")
    _sync("MTE1", "MTE3")
    pto.mte_ub_gm(k.ptr("ub", "f16", 0x4000), o + 600, 128, nburst=(1, 0, 0))


def _mtec_count(k, g, o, u, l1):
    with k.for_(0, 3, dtype="s32") as i:
        pto.mte_gm_ub(g + i * 64, u, 0, 64, nburst=(2 - i, 64, 64))                      # 2, 1, then 0: refused


def _mtec_stride(k, g, o, u, l1):
    with k.for_(0, 3, dtype="s32") as i:
        pto.mte_gm_ub(g, u, 0, 64, nburst=(2, 64, 64 + i * 16))                          # UB stride 16 B off


def _mtec_out_of_bounds(k, g, o, u, l1):
    with k.for_(0, 3, dtype="s32") as i:
        pto.mte_gm_ub(g, u, 0, 64, nburst=(1, 0, 0))
        _sync("MTE2", "MTE3")
        pto.mte_ub_gm(u, o + i * 10, 64, nburst=(1 + i * 14, 0, 128))                    # pass 2 runs past o
        _sync("MTE3", "MTE2")


def _mtec_uninit(k, g, o, u, l1):
    with k.for_(0, 2, dtype="s32") as i:
        pto.mte_gm_ub(g, u, 0, 64, nburst=(1 + i, 64, 64))                               # 64 B, then 128 B
        _sync("MTE2", "V")
        pto.ub.vadd(k.ptr("ub", "f16", 0x1000), u, u, 1)                                 # reads 256 B
        _sync("V", "MTE2")


def _mtec_ub_hole(k, g, o, u, l1):
    t = k.gm_arg("tiling", "s32", (2,), io="workspace", init=1)
    n = k.load(t, 0)                                  # the same run-time count on every pass
    with k.for_(0, 3, dtype="s32") as i:
        pto.mte_gm_ub(g, u + i * 8, 0, 64, nburst=(n, 0, 0))                             # UB 16 B off on pass 2


@pytest.mark.parametrize("body,machine", [(_mtec_clean, None), (_mtec_count, None), (_mtec_stride, None),
                                          (_mtec_out_of_bounds, None), (_mtec_uninit, None), (_mtec_ub_hole, None),
                                          (_mtec_clean, lambda: Machine("Ascend910B1")),
                                          (_mtec_count, lambda: Machine("Ascend910B1"))])
def test_burst_moves_with_run_time_clause_values_equal_the_general_path(monkeypatch, body, machine):
    """A burst move whose burst count, strides or loop are computed at run time (`OpSpec.bind_dyn`: TIK
    data_move with a Scalar nburst) reuses the checks and groups per distinct value when its run-time pointers
    are in GM, else checks per op: same outputs, reports and first error (class, text, provenance)."""
    from pto_core.ops import mte
    calls = []
    real = mte.check_int

    def count():
        monkeypatch.setattr(mte, "check_int", lambda *a, **kw: calls.append(1) or real(*a, **kw))

    count()
    fast = _run_mte(monkeypatch, True, body, machine)
    nfast = len(calls)
    count()
    slow = _run_mte(monkeypatch, False, body, machine)
    assert fast == slow
    if body is _mtec_clean:
        assert fast[0] is None and not fast[1] and fast[2] is not None
        assert nfast < len(calls) - nfast             # the plans made per value are reused
    elif body is _mtec_uninit:
        assert fast[1] or (fast[0] is not None and fast[0][2] is not None)
    else:
        assert fast[0] is not None and fast[0][2] is not None and "i=" in fast[0][1]   # at the failing pass


def test_bind_dyn_memo_keys_only_plain_int_clause_values():
    """The memo of `OpSpec.bind_dyn` moves keys a run-time clause value only when every leaf is a Python int:
    True or 1.0 must not find the plan of 1."""
    from pto_core.ops.mte import _clause_key, _plain_key
    assert _clause_key((((1, 2, 3), {}),)) == ((1, 2, 3),)              # the fast path: an args clause of ints
    assert _clause_key((((True, 2, 3), {}),)) is None and _clause_key((((1.0, 2, 3), {}),)) is None
    assert _clause_key((((np.int32(1), 2, 3), {}),)) is None
    assert _clause_key(((1, 2, 3),)) == _plain_key(((1, 2, 3),)) == ("tuple", ("tuple", 1, 2, 3))
    assert _clause_key(((((2, 3, 4),), {}),)) == _plain_key(((((2, 3, 4),), {}),)) != (((2, 3, 4),),)
    assert _clause_key((((1,), {"k": 2}),)) == ("tuple", ("tuple", ("tuple", 1), ("dict", ("k", 2))))


# ------------------------------------------ plan cache keys typed: a cached plan never accepts True or 1.0


def _typed_key_case(body, warm):
    """First error (class, operand, provenance mentions the pass) of ``body`` in a fresh program; with ``warm``
    an op with the int value 1 runs first (its plan is cached in the module-wide plan cache)."""
    from pto_core.program import program
    with program("typed_keys", target="A5") as k:
        a, c = k.ptr("ub", "f16", 0), k.ptr("ub", "f16", 0x1000)
        pto.ub.vector_dup(a, 1.0, 2)
        body(k, a, c, warm)
    try:
        k.program.compile().run({})
    except Exception as e:                            # noqa: BLE001 - the first error is compared
        return type(e).__name__, e.operand, str(e).split("[at ")[-1]
    return None


def _typed_reduce_repeat(k, a, c, warm):
    if warm:
        pto.ub.vcmax(c, a, 1)
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vcmax(c + 16, a, i == 0)                  # a bool repeat: refused on the first pass


def _typed_dup_mask(k, a, c, warm):
    if warm:
        pto.ub.vector_dup(c, 1.0, 1, mask=(1,))
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vector_dup(c + 16, 2.0, 1, mask=(i == 0,))       # a bool mask: refused on the first pass


def _typed_lanewise_mask(k, a, c, warm):
    if warm:
        pto.ub.vadd(c, a, a, 1, mask=(1,))
    with k.for_(0, 2, dtype="s32") as i:
        pto.ub.vadd(c + 128, a, a, 1, mask=(i == 0,))


@pytest.mark.parametrize("body", [_typed_reduce_repeat, _typed_dup_mask, _typed_lanewise_mask])
@pytest.mark.parametrize("bound", [True, False])
def test_plan_cache_keys_tell_bool_and_float_values_from_ints(monkeypatch, body, bound):
    """The vector plan caches are module-wide; a plan made for a repeat or mask of 1 must not let a later True
    (or 1.0) skip the checks that refuse it: the first error is the same, at the same pass, whether or not an
    op with the int value ran before (bound or general path)."""
    from pto_core.ops import vector_elementwise, vector_reduce
    monkeypatch.setattr(vector_elementwise, "VECTOR_BIND", bound)
    monkeypatch.setattr(vector_reduce, "REDUCE_BIND", bound)
    cold = _typed_key_case(body, False)
    warm = _typed_key_case(body, True)
    assert cold is not None and "i=0" in cold[2]
    assert warm == cold


def test_hashable_keys_leaves_by_type():
    from pto_core.ops.vector_elementwise import _hashable
    assert _hashable(("x", 1, ((1, 2), {}))) == _hashable(("x", 1, ((1, 2), {})))
    assert _hashable(("x", True, None)) != _hashable(("x", 1, None))
    assert _hashable(("x", ((True, 2), {}))) != _hashable(("x", ((1, 2), {})))
    assert _hashable(("x", ((1.0,), {"k": 2}))) != _hashable(("x", ((1,), {"k": 2})))
    assert _hashable(("x", ((1,), {"k": 2.0}))) != _hashable(("x", ((1,), {"k": 2})))
    assert _hashable(("x", ((np.int64(2), 3), {}))) != _hashable(("x", ((2, 3), {})))


# ------------------------------------------------- run-time checks bound (assertions.ASSERT_BIND)


def _chk_program(body, cores=1):
    """A 2-pass (or 2-core) kernel: ``body(k, i, n, y)`` with the loop (or core) index ``i``, a tiling value ``n``
    (2, read from GM) and the output ``y`` (s32 (2, 8)); each pass stores its row of y (the cores race when
    ``body`` spills)."""
    from pto_core.program import program
    with program("chk", target="A2A3") as k:
        t = k.gm_arg("tiling", "s32", (8,), io="workspace", init=2)
        y = k.gm_arg("y", "s32", (2, 8), io="out", init=0)
        u = k.ptr("ub", "s32", 0)
        n = k.load(t, 0)
        with k.for_(0, 2, dtype="s32", **({"block_num": 2} if cores > 1 else {})) as i:
            body(k, i, n, y, u)
    return k.program


def _chk_store(k, i, y, u, nbytes=32):
    from kernel_helpers import handoff
    with k.for_(0, 8) as j:
        k.store(u, j, i * 8 + j)
    handoff("S", "MTE3")
    pto.mte_ub_gm(u, y + i * 8, nbytes, nburst=(1, 0, 0))
    handoff("MTE3", "S")


def _chk_clean(k, i, n, y, u):
    pto.assert_in_bounds(i * 8, i * 8 + 8, 16, what="row")             # end == size on pass 1
    pto.assert_in_bounds(n - 3 - i, n - 3 - i, 4, what="empty")        # empty ranges starting before 0 pass
    pto.assert_in_bounds(i, n + 5, n * 4, what="run-time size", hint="h")   # end == size on pass 1 (7 <= 8)
    pto.assert_in_bounds(i * 4, 8, 16)                                  # one run-time value
    pto.assert_in_bounds(0, 16, 16, what="static")                      # all compile-time
    pto.assert_in_range(i + n, 2, 3, what="i + n")                      # lo, then hi
    pto.assert_in_range(1, 0, 2, what="static")
    pto.assert_in_range(n, i, n + i, what="run-time bounds")
    _chk_store(k, i, y, u)


def _chk_end_past(k, i, n, y, u):
    _chk_store(k, i, y, u)
    pto.assert_in_bounds(i * 8, i * 9 + 8, 16, what="row", hint="shrink it")   # [0, 8), then [8, 17)


def _chk_first_negative(k, i, n, y, u):
    _chk_store(k, i, y, u)
    pto.assert_in_bounds(n - 2 - i, 4, 16, what="start")               # 0, then -1


def _chk_size_shrinks(k, i, n, y, u):
    _chk_store(k, i, y, u)
    pto.assert_in_bounds(2, 6, n * 3 - i * 2)                           # 6 <= 6, then 6 > 4


def _chk_range_hi(k, i, n, y, u):
    _chk_store(k, i, y, u)
    pto.assert_in_range(n + i, 0, 2, what="n + i")                      # 2, then 3


def _chk_range_lo(k, i, n, y, u):
    _chk_store(k, i, y, u)
    pto.assert_in_range(n - 2 - i, 0, 5, what="n - 2 - i")              # 0, then -1


def _chk_range_bounds(k, i, n, y, u):
    _chk_store(k, i, y, u)
    pto.assert_in_range(3, i, n - i + 1)                                # [0, 3], then [1, 2]


def _chk_multiple(k, i, n, y, u):
    _chk_store(k, i, y, u)
    pto.assert_multiple(n * 16 + i * 17, 2, what="burst", unit="B", rule="a multiple of the element size 2 B",
                        operand="burst")                                # 32, then 49


def _chk_static_fails(k, i, n, y, u):
    _chk_store(k, i, y, u)
    with k.if_(i == 1):
        pto.assert_in_bounds(0, 17, 16, what="static")                  # refused when reached


def _chk_race(k, i, n, y, u):
    pto.assert_in_bounds(i * 8, i * 8 + 8, 16, what="row")
    pto.assert_in_range(i + n, 2, 3)
    _chk_store(k, i, y, u, nbytes=64 - i * 32)                          # core 0 spills into core 1's row


@pytest.mark.parametrize("body,cores", [(_chk_clean, 1), (_chk_clean, 2), (_chk_end_past, 1), (_chk_end_past, 2),
                                        (_chk_first_negative, 1), (_chk_size_shrinks, 1), (_chk_range_hi, 1),
                                        (_chk_range_hi, 2), (_chk_range_lo, 1), (_chk_range_bounds, 1),
                                        (_chk_multiple, 1), (_chk_multiple, 2), (_chk_static_fails, 1),
                                        (_chk_race, 2)])
def test_bound_run_time_checks_equal_the_general_path(monkeypatch, body, cores):
    """assert_in_bounds / assert_in_range / assert_multiple bind (`OpSpec.bind`, `bind_holes`): the same output, reports (GM races
    between cores included) and first error (class, text, where: the failing pass) as the general execute, on
    both schedulers; the boundary values (end == size, value == lo / hi) pass and one past them fails."""
    from pto_core.ops import assertions

    def run(bound, order):
        monkeypatch.setattr(assertions, "ASSERT_BIND", bound)
        exe = _chk_program(body, cores).compile()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = exe.run({}, order=order, seed=3, options=MachineOptions(gm_races="record"))
            err = None
        except Exception as e:                        # noqa: BLE001 - compared between the two paths
            out, err = None, (type(e).__name__, str(e), e.where)
        monkeypatch.undo()
        return err, list(exe.reports), None if out is None else out["y"].tobytes()

    for order in ("sequential", "random") if cores > 1 else ("sequential",):
        fast, slow = run(True, order), run(False, order)
        assert fast == slow
        if body is _chk_clean:
            assert fast[0] is None and not fast[1] and fast[2] is not None
        elif body is _chk_race:
            assert fast[0] is None and any(kind == "race" for kind, _ in fast[1])
        else:
            assert fast[0] is not None and fast[0][2] is not None     # refused at the user's line
            assert fast[0][0] in ("OutOfBounds", "IllegalOperand")
            if cores == 1:
                assert "i=1" in fast[0][1]                # at the failing (second) pass


def test_assert_multiple_names_the_value_not_its_remainder():
    """k445: ``pto.assert_multiple`` reports the value the kernel computed and the rule (a check built as
    assert_in_range of ``value mod divisor`` showed only the remainder: "... modulo 2 = 1 is outside [0, 0]"); the
    PTO-AS text keeps its clauses."""
    from pto_core import asm
    from pto_core.errors import IllegalOperand
    exe = _chk_program(_chk_multiple).compile()
    with pytest.raises(IllegalOperand) as info:
        exe.run({})
    e = info.value
    assert e.value == 49 and e.operand == "burst" and e.where is not None and e.where.file == __file__
    assert "burst 49 B is not a multiple of the element size 2 B" in str(e) and "= 1" not in str(e), str(e)
    text = asm.print_program(_chk_program(_chk_multiple))
    assert 'pto.assert_multiple' in text and 'rule = "a multiple of the element size 2 B"' in text, text
    assert asm.print_program(asm.parse(text)) == text
    from pto_core.ops import assertions as a
    assert a._bind_multiple((4, 2), {}) is a._pass and a._bind_multiple((5, 2), {}) is None
    assert a._bind_multiple((4, 0), {}) is None
    with pytest.raises(IllegalOperand, match="the divisor of a run-time value is 0, but it must be > 0"):
        a._assert_multiple(None, 4, 0)


@pytest.mark.parametrize("divisor", [0, -4])
def test_assert_multiple_refuses_a_divisor_that_is_not_positive(divisor):
    """review448: a divisor <= 0 is the divisor's error, not the value's: it said "n 8 is not a multiple of -4"
    (false) and "n 8 is not a multiple of 0". A constant divisor is refused when the op is recorded (nothing
    recorded) and when PTO-AS text is read; a run-time one when the check runs, eager and compiled alike."""
    from pto_core import asm
    from pto_core.errors import AsmParseError, IllegalOperand
    from pto_core.program import program
    with program("k", target="A2A3") as k:
        n = k.scalar_arg("n", "i64")
        with pytest.raises(IllegalOperand, match=f"the divisor of n is {divisor}, but it must be > 0") as info:
            pto.assert_multiple(n, divisor, what="n")
        assert info.value.operand == "divisor" and "is not a multiple" not in str(info.value)
    assert len(k.program.body) == 0
    text = ('module {\n  func.func @k(%n: i64) {\n    pto.assert_multiple %n, ' + str(divisor)
            + ' {what = "n"} : i64\n    return\n  }\n}\n')
    with pytest.raises(AsmParseError, match=f"<pto>:3:5: .*the divisor of n is {divisor}, but it must be > 0"):
        asm.parse(text, target="A2A3")
    with program("k", target="A2A3") as k:
        n = k.scalar_arg("n", "i64")
        d = k.scalar_arg("d", "i64")
        pto.assert_multiple(n, d, what="n")
    for prog in (k.program, asm.parse(asm.print_program(k.program), target="A2A3")):
        prog.run({"n": 8, "d": 4})
        with pytest.raises(IllegalOperand, match=f"the divisor of n is {divisor}, but it must be > 0"):
            prog.run({"n": 8, "d": divisor})


def test_bound_run_time_checks_send_other_values_to_the_general_function():
    """The bound checks pass only plain ints through their fast test: a bool, numpy int or float value (and a
    failing value) reaches the general function, which converts and raises as before."""
    from pto_core.ops import assertions as a
    calls = []

    def spy(ctx, *args, **kw):
        calls.append(args)

    real_b, real_r = a._assert_in_bounds, a._assert_in_range
    try:
        a._assert_in_bounds, a._assert_in_range = spy, spy
        b2 = a._bind_in_bounds_holes((None, None, 16), (0, 1), {"what": "w"})
        b3 = a._bind_in_bounds_holes((None, None, None), (0, 1, 2), {})
        r1 = a._bind_in_range_holes((None, 0, 2), (0,), {})
        r3 = a._bind_in_range_holes((None, None, 2), (0, 1), {})
        for f, vals in [(b2, (0, 16)), (b2, (5, 3)), (b2, (-3, -3)), (b3, (1, 4, 4)), (r1, (2,)), (r1, (0,)),
                        (r3, (1, 1))]:
            f(None, *vals)
        assert calls == []                             # passing plain ints: no call
        for f, vals in [(b2, (0, 17)), (b2, (-1, 4)), (b2, (np.int64(0), 4)), (b2, (0, 4.0)), (b2, (True, 4)),
                        (b3, (0, 5, 4)), (b3, (0, 4, np.int32(4))), (r1, (3,)), (r1, (-1,)), (r1, (True,)),
                        (r1, (np.int64(1),)), (r3, (1, 2))]:
            f(None, *vals)
        assert len(calls) == 12
        assert a._bind_in_bounds_holes((None, None, 16.0), (0, 1), {}) is None       # a non-int constant
        assert a._bind_in_range_holes((None, True, 2), (0,), {}) is None
        assert a._bind_in_bounds((0, 17, 16), {}) is None and a._bind_in_bounds((0, 16, 16), {}) is a._pass
        assert a._bind_in_range((3, 0, 2), {}) is None and a._bind_in_range((2, 0, 2), {}) is a._pass
    finally:
        a._assert_in_bounds, a._assert_in_range = real_b, real_r


# ------------------------------------------------- GM race tracker: per-core changed ranges (races.CHANGED_RUNS)


def _gm_store_program(steps):
    """2 cores on a 64-element s32 GM workspace ``ws``; ``steps``: per core, a list of ``("store", at, n, stride,
    value)`` (``n`` elements, in bursts of 8 ``stride`` elements apart when ``stride``) and ``("read", at)`` (8
    elements of ws to y[core]) in program order."""
    from kernel_helpers import handoff
    from pto_core.program import program
    with program("gmruns", target="A2A3") as k:
        ws = k.gm_arg("ws", "s32", (64,), io="workspace", init=0)
        y = k.gm_arg("y", "s32", (2, 8), io="out", init=0)
        u = k.ptr("ub", "s32", 0)
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            for core in (0, 1):
                with k.if_(c == core):
                    for step in steps[core]:
                        if step[0] == "store":
                            _, at, n, stride, value = step
                            with k.for_(0, n) as j:
                                k.store(u, j, j * 0 + value)
                            handoff("S", "MTE3")
                            if stride:
                                pto.mte_ub_gm(u, ws + at, 32, nburst=(n // 8, 32, stride * 4))
                            else:
                                pto.mte_ub_gm(u, ws + at, n * 4, nburst=(1, 0, 0))
                            handoff("MTE3", "S")
                        else:
                            handoff("MTE3", "MTE2")
                            pto.mte_gm_ub(ws + step[1], u, 0, 32, nburst=(1, 0, 0))
                            handoff("MTE2", "MTE3")
                            pto.mte_ub_gm(u, y + c * 8, 32, nburst=(1, 0, 0))
                            handoff("MTE3", "S")
    return k.program


def _gm_random_steps(seed):
    import random
    r = random.Random(seed)
    steps = ([], [])
    for core in (0, 1):
        for _ in range(r.randint(2, 6)):
            if r.random() < 0.25:
                steps[core].append(("read", r.randrange(0, 57)))
            elif r.random() < 0.3:
                steps[core].append(("store", r.randrange(0, 9) * 4, 16, r.choice([12, 16, 20]), r.choice([5, 7])))
            else:
                n = r.choice([8, 16])
                steps[core].append(("store", r.randrange(0, 65 - n), n, 0, r.choice([5, 7, 9])))
    return steps


_GM_REWRITE = ([("store", 0, 8, 0, 5), ("store", 8, 8, 0, 5), ("store", 24, 8, 0, 5), ("store", 4, 8, 0, 7),
                ("store", 16, 8, 0, 7)],
               [("store", 0, 16, 0, 7), ("read", 4), ("read", 16)])
_GM_TAIL = ([("store", 16, 8, 0, 9), ("store", 0, 8, 0, 5), ("store", 4, 8, 0, 7)],   # the last changes the 2nd's tail
            [("store", 4, 8, 0, 7), ("read", 4)])
_GM_TILES = ([("store", 0, 8, 0, 5), ("store", 16, 8, 0, 5), ("store", 8, 8, 0, 5)],          # into the gap: never twice
             [("store", 40, 8, 0, 5), ("read", 0), ("store", 0, 8, 0, 5), ("read", 8)])
_GM_STRIDED = ([("store", 0, 16, 16, 5), ("store", 8, 8, 0, 7), ("store", 16, 8, 0, 9)],      # into the gap, then over
               [("store", 8, 8, 0, 7), ("read", 8), ("read", 16)])


@pytest.mark.parametrize("steps", [_GM_REWRITE, _GM_TAIL, _GM_TILES, _GM_STRIDED] + [_gm_random_steps(s) for s in range(24)])
def test_gm_race_changed_runs_equal_the_bounding_box_path(monkeypatch, steps):
    """The per-core changed ranges only skip rechanged tests that cannot find a byte: the same GM race reports
    (read/write after a core changed bytes twice included), outputs and first error as with the bounding box
    alone, on both schedulers."""
    from pto_core.checks import races

    def run(on, order, seed):
        monkeypatch.setattr(races, "CHANGED_RUNS", on)
        calls = []
        real = races.GmRaceTracker._note_rechanged
        monkeypatch.setattr(races.GmRaceTracker, "_note_rechanged",
                            lambda self, p, ch: calls.append(1) or real(self, p, ch))
        exe = _gm_store_program(steps).compile()
        try:
            out = exe.run({}, order=order, seed=seed, options=MachineOptions(gm_races="record"))
            err = None
        except Exception as e:                        # noqa: BLE001 - compared between the two paths
            out, err = None, (type(e).__name__, str(e), e.where)
        monkeypatch.undo()
        return (err, list(exe.reports), None if out is None else out["y"].tobytes()), len(calls)

    for order, seed in (("sequential", 0), ("random", 1), ("random", 4)):
        (fast, nfast), (slow, nslow) = run(True, order, seed), run(False, order, seed)
        assert fast == slow and nfast <= nslow
        if steps in (_GM_REWRITE, _GM_TAIL) and order == "sequential":
            assert any(kind == "race" and "read/write" in msg for kind, msg in fast[1])
            assert nfast >= 1
        if steps is _GM_TILES:
            assert nfast == 0 < nslow


def test_changed_runs_merge_and_overlap_like_a_byte_set():
    """`races._runs_add` / `_runs_overlap` against a set of bytes, on random ranges (touching ranges merge)."""
    import random
    from pto_core.checks import races
    r = random.Random(7)
    for _ in range(300):
        runs, covered = ([], []), set()
        for _ in range(r.randint(1, 12)):
            lo = r.randrange(0, 200)
            hi = lo + r.randint(1, 40)
            q0 = r.randrange(0, 240)
            q1 = q0 + r.randint(1, 30)
            assert races._runs_overlap(runs, q0, q1) == bool(covered & set(range(q0, q1))) or not runs[0]
            races._runs_add(runs, lo, hi)
            covered |= set(range(lo, hi))
            starts, ends = runs
            assert all(a < b for a, b in zip(starts, ends)) and all(b < a for b, a in zip(ends, starts[1:]))
            assert set().union(*(range(a, b) for a, b in zip(starts, ends))) == covered


# ============================================================================ bound img2col (OpSpec.bind)


def _run_i2c_bound(monkeypatch, bound, ds, k0, hole, m0, target, machine, uninit):
    """A compiled program: a 2 x 5 x 6 f16 map into L1 (one 16-element pixel missing if ``hole``), weights,
    then twice (a loop) img2col of a 48 x 32 block into L0A (``ds`` fractals per M row, K from ``k0``,
    first raster row ``m0``), load2d, mad. With img2col's bind hook on or off: (error class, text, where),
    reports, L0A bytes and flags, L0C bytes."""
    from pto_core.ops import legacy_cube
    from pto_core.program import program
    monkeypatch.setattr(legacy_cube, "IMG2COL_BIND", bound)
    calls = []
    checks = legacy_cube._img2col_checks
    monkeypatch.setattr(legacy_cube, "_img2col_checks", lambda *a, **kw: calls.append(1) or checks(*a, **kw))
    with program("i2c", target=target) as k:
        g = k.gm_arg("fm", "f16", (2 * 5 * 6 * 16,), io="in")
        wg = k.gm_arg("w", "f16", (32 * 16,), io="in")
        src, w = k.ptr("l1", "f16", 0), k.ptr("l1", "f16", 0x8000)
        if hole is None:
            pto.mte_gm_l1(g, src, 2 * 5 * 6 * 16 * 2, nburst=(1, 0, 0))
        else:
            pto.mte_gm_l1(g, src, hole * 2, nburst=(1, 0, 0))
            pto.mte_gm_l1(g + (hole + 16), src + (hole + 16), (2 * 5 * 6 * 16 - hole - 16) * 2, nburst=(1, 0, 0))
        pto.mte_gm_l1(wg, w, 32 * 16 * 2, nburst=(1, 0, 0))
        a, b, c = k.ptr("l0a", "f16", 0), k.ptr("l0b", "f16", 0), k.ptr("l0c", "f32", 0)
        _sync("MTE2", "MTE1")
        with k.for_(0, 2, dtype="s32"):
            pto.img2col(src, a, 5, 6, 32, k0, 32, m0, 48, ds, stride=(1, 1), filter=(3, 3), dilation=(1, 1),
                        pad=(1, 1, 1, 1), pad_value=(-3.0,))
            pto.load2d(w, b, 0, 2, 1, 0)
            _sync("MTE1", "M")
            pto.mad(a, b, c, 48, 16, 32, disable_gemv=True)
            _sync("M", "MTE1")
    exe = k.program.compile()
    data = {"fm": (np.arange(2 * 5 * 6 * 16) % 23 - 11).astype(np.float16),
            "w": (np.arange(32 * 16) % 7 - 3).astype(np.float16)}
    m = machine(MachineOptions(fill="random", seed=5, uninitialized=uninit))
    try:
        if target != m.target.name:
            exe.run(dict(data))               # first on the program's own target
        exe.run(dict(data), machine=m)
        err = None
    except Exception as e:                            # noqa: BLE001 - compared between the two paths
        err = (type(e).__name__, str(e), e.where)
    monkeypatch.undo()
    l0a, l0c = m.cores[0].buffer("l0a"), m.cores[0].buffer("l0c")
    return (err, [r for r in m.reports], l0a.data.tobytes(), np.asarray(l0a.written).tobytes(),
            l0c.data.tobytes()), len(calls)


@pytest.mark.parametrize("ds,k0,hole,m0,uninit,machine", [
    (2, 16, None, -2, "record", "Ascend310"),         # dense destination, padding rows and columns
    (3, 16, None, -2, "record", "Ascend310"),         # gap between fractal rows: the general destination path
    (2, 272, None, 0, "record", "Ascend310"),         # K past 3 * 3 * 32: zero lanes
    (2, 16, 16 * 7, -2, "record", "Ascend310"),       # an unwritten map pixel: reported
    (2, 16, 16 * 7, -2, "raise", "Ascend310"),        # ... raised, at the img2col's line
    (1, 16, None, -2, "record", "Ascend310"),         # dst_stride below the 2 fractals of an M row: refused
    (2, 16, None, -9999, "record", "Ascend310"),      # m_start far above the padded map: refused
    (2, 16, None, -2, "record", "Ascend910A"),        # compiled for 310, run on another chip
    (2, 16, None, -2, "record", "Ascend910B1"),
])
def test_bound_img2col_equals_the_general_path(monkeypatch, ds, k0, hole, m0, uninit, machine):
    """img2col with compile-time operands (checks once per target, plan and pad value kept: `IMG2COL_BIND`) gives
    the same L0A bytes and flags, L0C result, reports and first error (class, text, provenance) as
    `_exec_img2col` on every run, also when the compiled program then runs on a machine of another target."""
    mk = (lambda opts: Machine(machine, options=opts))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast, nfast = _run_i2c_bound(monkeypatch, True, ds, k0, hole, m0, "Ascend310", mk, uninit)
        slow, nslow = _run_i2c_bound(monkeypatch, False, ds, k0, hole, m0, "Ascend310", mk, uninit)
    assert fast == slow
    if fast[0] is None:                                  # checked once per target, not once per run
        assert nfast == (1 if machine == "Ascend310" else 2) and nslow == 2 * nfast
    if ds == 1 or m0 == -9999:
        assert fast[0] is not None and fast[0][0] == "IllegalOperand" and fast[0][2] is not None
    elif hole is not None:
        assert any(r[0] == "uninitialized" for r in fast[1]) if uninit == "record" else \
            fast[0][0] == "UninitializedRead"
    elif machine == "Ascend310":
        assert fast[0] is None and any(fast[4])


# ============================================================================ f16 tile decode: table or bit moves


@pytest.mark.parametrize("sat", [True, False])
@pytest.mark.parametrize("op,mm,n,k", [("mad", 48, 64, 32), ("mad", 17, 33, 35), ("mad_acc", 31, 20, 16),
                                       ("mad_acc", 1, 48, 48), ("mad_bias", 16, 16, 64), ("mad_bias", 5, 7, 9)])
def test_f16_decode_by_table_or_bits_gives_the_same_mad(monkeypatch, sat, op, mm, n, k):
    """The mad's f16 operand tiles decoded by the table gather (every size) and by the bit moves (every size,
    `cube._F16_BY_TABLE`): the same L0C bits, from random 16-bit codes (inf, NaN, subnormal codes among
    them), saturation on and off, odd m / n / k, mad_acc over special old values, mad_bias."""
    from pto_core.ops import cube
    rng = np.random.default_rng(mm * 1000 + n * 10 + k)
    rows, kk, na = max(16, -(-mm // 16) * 16), -(-k // 16) * 16, -(-n // 16) * 16
    a = rng.integers(0, 1 << 16, (rows, kk), dtype=np.uint16)
    a.flat[:6] = [0x7C00, 0xFC00, 0x7E01, 0x0001, 0x83FF, 0x7BFF]          # inf, -inf, NaN, subnormals, max
    bt = rng.integers(0, 1 << 16, (na, kk), dtype=np.uint16)
    bt.flat[:3] = [0x0001, 0xFE00, 0x7C00]
    if mm > 16:                                     # a finite tile too: the decoders' finite flag decides
        a[16:] = (rng.standard_normal((rows - 16, kk)) * 8).astype(np.float16).view(np.uint16)
    old = rng.standard_normal((rows, na)).astype(np.float32)
    old[0, :3] = [np.inf, np.nan, np.finfo(np.float32).max]
    bias = rng.standard_normal(na).astype(np.float32)
    results = []
    for table in (1 << 30, 0):
        monkeypatch.setattr(cube, "_F16_BY_TABLE", table)
        m = Machine("A5")
        lhs, rhs, dst = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
        m.write(dst, layout.pack(old, "Nz", "f32", fractal=1024))
        if mm == 1:
            m.write(lhs, a[0].view(np.float16))
        else:
            _stage_nz(m, lhs, a.view(np.float16))
        _stage_nz(m, rhs, bt.view(np.float16))
        extra = ()
        if op == "mad_bias":
            bp = m.ptr("bt", "f32", 0)
            m.write(bp, bias)
            extra = (bp,)
        pto.set_flag("MTE1", "M", 0)
        pto.wait_flag("MTE1", "M", 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(pto, op)(lhs, rhs, dst, *extra, mm, n, k, sat=sat)
        pto.set_flag("M", "MTE1", 0)
        pto.wait_flag("M", "MTE1", 0)
        results.append((m.read(dst, (rows * na,)).view(np.uint32).copy(), list(m.reports)))
    assert np.array_equal(results[0][0], results[1][0]) and results[0][1] == results[1][1]


def test_f16_decoders_agree_on_every_code_and_layout():
    """`cube._decode_finite` by table and by bit moves on all 65,536 codes (Zz and Nz boxed views): the same
    bits and the same all-finite answer, also for all-finite tiles."""
    from pto_core.ops import cube
    f16 = dtype("f16")
    codes = np.arange(1 << 16, dtype=np.uint16)
    finite = codes[(codes & 0x7C00) != 0x7C00]
    for vals in (codes, finite[:256 * 64]):
        raw = vals.view(np.uint8)
        rows = vals.size // 64
        for lay in ("Zz", "Nz"):
            old = cube._F16_BY_TABLE
            try:
                cube._F16_BY_TABLE = 1 << 30
                t = cube._logical(raw, f16, lay, rows, 64, 16, 16, "", True)
                cube._F16_BY_TABLE = 0
                b = cube._logical(raw, f16, lay, rows, 64, 16, 16, "", True)
            finally:
                cube._F16_BY_TABLE = old
            assert np.array_equal(t[0].view(np.uint32), b[0].view(np.uint32)) and t[1] == b[1]
            assert t[1] == (vals is not codes)


# ============================================================================ f16 encode: no-special pre-check


@pytest.mark.parametrize("sat", ["nosat", "sat", "preserve_nan"])
@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_f16_cast_precheck_equals_the_general_encoder(sat, src):
    """`float_to(x, "f16")` by the cast, whose scan for inf/NaN codes is skipped when max/min lie inside
    +-65520 (`floats._F16_ROUNDS_TO_INF`): the same codes as the exact encoder (`encode_float64`) for
    tiles with and without the boundary values, inf, NaN (both signs), subnormal results, in 1-d and 2-d."""
    from pto_core.numerics.floats import FORMATS, codes_to_storage, encode_float64, float_to
    rng = np.random.default_rng(11)
    edge = np.array([65504.0, 65519.99609375, 65520.0, 65535.0, 65536.0, 1e6, np.inf, np.nan, 6e-8, 1e-9],
                    dtype=np.float64)
    if src is np.float64:
        edge = np.concatenate([edge, [np.nextafter(65520.0, 0.0), np.nextafter(65520.0, np.inf)]])
    tiles = [rng.standard_normal(4096) * 300, (rng.standard_normal((64, 48)) * 2e4)]
    for e in edge:
        for sign in (1.0, -1.0):
            t = rng.standard_normal(1000) * 100
            t[rng.integers(0, 1000)] = sign * e
            tiles.append(t)
            tiles.append(np.full(3, sign * e))
    for t in tiles:
        x = t.astype(src)
        got = float_to(x, "f16", sat=sat)
        want = codes_to_storage(encode_float64(x.astype(np.float64).reshape(-1), FORMATS["f16"], "even", sat),
                                FORMATS["f16"]).reshape(x.shape)
        assert np.array_equal(np.asarray(got).view(np.uint16), np.asarray(want).view(np.uint16))


# ============================================================================ float_to on strided views (no flat copy)


def _float_tiles_with_specials(rng, shape, src):
    """Random tiles of ``shape``: normal, f16-subnormal-heavy, overflow, and inf/NaN/boundary codes."""
    n = int(np.prod(shape))
    normal = rng.standard_normal(n) * 300
    tiny = rng.standard_normal(n) * 2.0 ** -16            # most results f16 subnormal: the bit path
    edge = np.array([65504.0, 65519.99609375, 65520.0, 7e4, 1e39, np.inf, -np.inf, np.nan, -np.nan, 6e-8, 0.0, -0.0])
    spiked = normal.copy()
    spiked[rng.integers(0, n, 40)] = rng.choice(edge, 40)
    with np.errstate(over="ignore", invalid="ignore"):
        return [t.reshape(shape).astype(src) for t in (normal, tiny, spiked, tiny + spiked * (rng.random(n) < .1))]


@pytest.mark.parametrize("sat", ["nosat", "sat", "preserve_nan"])
@pytest.mark.parametrize("src", [np.float32, np.float64])
@pytest.mark.parametrize("dst", ["f16", "bf16", "f32"])
def test_float_to_on_strided_views_equals_the_contiguous_copy(sat, src, dst):
    """`float_to` casts n-d strided views in place of a flat copy (fixpipe slabs of the Nz tile, transposes,
    last axes not a multiple of 16): the same codes as on the C-contiguous copy and as the exact encoder."""
    from pto_core.numerics.floats import FORMATS, codes_to_storage, encode_float64, float_to
    rng = np.random.default_rng(186)
    fmt = FORMATS[dst]
    utype = {16: np.uint16, 32: np.uint32}[fmt.storage.itemsize * 8]
    for tile in _float_tiles_with_specials(rng, (8, 512, 16), src):
        for view in (tile[:, 100:400, :], tile.transpose(1, 0, 2), tile[:, :, 3:13], tile[::2, ::3], tile[1]):
            assert not view.flags.c_contiguous or view.ndim == 2
            got = float_to(view, dst, sat=sat)
            ref = float_to(np.ascontiguousarray(view), dst, sat=sat)
            want = codes_to_storage(encode_float64(view.astype(np.float64).reshape(-1), fmt, "even", sat),
                                    fmt).reshape(view.shape)
            assert got.shape == view.shape and got.flags.c_contiguous
            assert np.array_equal(got.view(utype), ref.view(utype))
            if dst != "f32":           # f32 destinations: inf/NaN kept by encode_float, not by float_to itself
                assert np.array_equal(got.view(utype), np.asarray(want).view(utype))


@pytest.mark.parametrize("sat", ["nosat", "sat"])
def test_quant_convert_of_an_nz_tile_in_slabs_equals_one_pass(sat):
    """`quant.convert` splits a large Nz tile into strided slabs along axis 1 (cast without a copy): the
    same f16 codes as the exact encoder on the whole tile, specials and subnormal results included."""
    from pto_core import dtype as dt
    from pto_core.numerics import quant as Q
    from pto_core.numerics.floats import FORMATS, codes_to_storage, encode_float64
    rng = np.random.default_rng(7)
    for tile in _float_tiles_with_specials(rng, (16, 256, 16), np.float32):
        assert -(-tile.size // Q.BLOCK_ELEMENTS) > 1
        got = Q.convert(Q.QUANT_MODES["f32_f16"], tile, Q.QuantArgs(dst=dt("f16"), sat=sat), axis=1)
        want = codes_to_storage(encode_float64(tile.astype(np.float64).reshape(-1), FORMATS["f16"], "even", sat),
                                FORMATS["f16"]).reshape(tile.shape)
        assert got.flags.c_contiguous and np.array_equal(got.view(np.uint16), want.view(np.uint16))



@pytest.mark.parametrize("sat", ["nosat", "sat", "preserve_nan"])
def test_quant_convert_of_a_whole_f16_cast_equals_the_slabs(monkeypatch, sat):
    """A contiguous f32 tile cast to f16 into a strided destination is converted whole (`quant._casts_whole`:
    one cast, the range check by one dot, `floats.CHECK_BY_DOT`): the same f16 codes as the slab-wise
    conversion and the dot-free scan, and as the exact encoder, for NaN/inf/overflow/65520/subnormal/-0
    values and tiles of large finite values (sums of squares past the bound: the scan decides)."""
    from pto_core import dtype as dt
    from pto_core.numerics import floats
    from pto_core.numerics import quant as Q
    from pto_core.numerics.floats import FORMATS, codes_to_storage, encode_float64
    rng = np.random.default_rng(233)
    big = np.full((16, 256, 16), 65504.0, np.float32)             # finite, every value below the f16 inf
    big.reshape(-1)[::3] = -65519.99609375                        # the largest magnitude that still rounds to 65504
    tiles = _float_tiles_with_specials(rng, (16, 256, 16), np.float32) + [big]
    args, mode = Q.QuantArgs(dst=dt("f16"), sat=sat), Q.QUANT_MODES["f32_f16"]
    casts_whole = Q._casts_whole
    for tile in tiles:
        assert casts_whole(tile, args, mode)
        want = codes_to_storage(encode_float64(tile.astype(np.float64).reshape(-1), FORMATS["f16"], "even", sat),
                                FORMATS["f16"]).reshape(tile.shape)
        results = []
        for whole, by_dot in ((True, True), (True, False), (False, True)):
            monkeypatch.setattr(floats, "CHECK_BY_DOT", by_dot)
            monkeypatch.setattr(Q, "_casts_whole", (lambda *a: True) if whole else (lambda *a: False))
            dest = np.full((32, 512, 16), 0x5555, np.uint16)
            out = dest.view(np.float16)[8:24, 128:384]             # strided, as an Nz GM destination
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                assert Q.convert(mode, tile, args, axis=1, out=out) is out
            results.append(dest.copy())
            assert np.array_equal(out.view(np.uint16), want.view(np.uint16))
            outside = np.ones(dest.shape, bool)
            outside[8:24, 128:384] = False
            assert (dest[outside] == 0x5555).all()                 # nothing written beside the view
        assert all(np.array_equal(results[0], r) for r in results[1:])

# ------------------------------------------------- scalar-unit element copies (interpreter.SCALAR_STRUCT)


def _rev_program(dt, variant):
    """``y[j] = x[n - 1 - j]`` through UB with a run-time ``n`` (32, read from GM): MTE2 brings x in, the scalar
    unit copies element by element with a run-time bounds check per store, MTE3 takes y out. ``variant`` breaks
    one thing: ``uninit`` (the loads read UB bytes nothing wrote), ``oob`` (the second store leaves UB),
    ``check`` (the bounds check fails on the second pass), ``no_flag_in`` / ``no_flag_out`` (a missing
    MTE2 -> S / S -> MTE3 edge)."""
    from kernel_helpers import handoff
    from pto_core.program import program
    nb = dtype(dt).nbytes(32)
    with program("rev", target="A2A3") as k:
        t = k.gm_arg("tiling", "s32", (8,), io="workspace", init=32)
        x = k.gm_arg("x", dt, (32,), io="in")
        y = k.gm_arg("y", dt, (32,), io="out", init=0)
        u, v = k.ptr("ub", dt, 0), k.ptr("ub", dt, 1024)
        n = k.load(t, 0)
        pto.mte_gm_ub(x, u, 0, nb, nburst=(1, 0, 0))
        if variant != "no_flag_in":
            handoff("MTE2", "S")
        with k.for_(0, n, dtype="s32") as j:
            pto.assert_in_bounds(j, j + 1 + (31 * j if variant == "check" else 0), 32, what="dst of the copy")
            k.store(v, j * (300000 if variant == "oob" else 1), k.load(u, n - 1 - j + (32 if variant == "uninit"
                                                                                          else 0)))
        if variant != "no_flag_out":
            handoff("S", "MTE3")
        pto.mte_ub_gm(v, y, nb, nburst=(1, 0, 0))
    return k.program


def _rev_input(dt):
    return np.tile(_rev_values(dt), 4)


def _rev_values(dt):
    if dt == "f32":
        bits = np.array([0x7FC00001, 0xFFA00000, 0x7F800000, 0x80000000, 0x3F800001, 0x00000001, 0xC0490FDB,
                         0x7F7FFFFF], np.uint32)
        return bits.view(np.float32)
    if dt == "f16":
        return np.array([0x7E01, 0xFD00, 0x7C00, 0x8000, 0x3C01, 0x0001, 0xC248, 0x7BFF], np.uint16).view(np.float16)
    return np.array([-128, 127, -1, 0, 1, 2, 100, -100] if dt == "s8" else [-2**31, 2**31 - 1, -1, 0, 1, 2, 7, 9],
                    dtype(dt).storage)


@pytest.mark.parametrize("dt", ["f32", "f16", "s8", "s32", "bf16"])
@pytest.mark.parametrize("variant", ["clean", "uninit", "oob", "check", "no_flag_in", "no_flag_out"])
def test_scalar_copy_fast_paths_equal_the_general_path(monkeypatch, dt, variant):
    """Compiled load_scalar / store_scalar through ``struct`` (`interpreter.SCALAR_STRUCT`): the same output bits (NaN payloads, -0, inf,
    subnormals, integer extremes), reports and first error (class, text, where: the user's line and pass) as
    the general path, for uninitialised reads, run-time out-of-bounds stores, failing checks and missing
    MTE2 -> S / S -> MTE3 edges."""
    from pto_core import interpreter
    x = _rev_input(dt) if dt != "bf16" else _rev_input("f16").view(np.uint16).view(dtype("bf16").storage)

    def run(on):
        monkeypatch.setattr(interpreter, "SCALAR_STRUCT", on)
        exe = _rev_program(dt, variant).compile()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = exe.run({"x": x.copy()}, options=MachineOptions(uninitialized="raise"))
            err = None
        except Exception as e:                        # noqa: BLE001 - compared between the two paths
            out, err = None, (type(e).__name__, str(e), e.where)
        monkeypatch.undo()
        return err, list(exe.reports), None if out is None else out["y"].tobytes()

    fast, slow = run(True), run(False)
    assert fast == slow
    if variant == "clean":
        assert fast[0] is None and fast[2] == x[::-1].tobytes()
    else:
        assert fast[0] is not None and fast[0][2] is not None, fast
        want = {"uninit": "UninitializedRead", "oob": "OutOfBounds", "check": "OutOfBounds",
                "no_flag_in": "HazardError", "no_flag_out": "HazardError"}[variant]
        assert fast[0][0] == want, fast
        if variant in ("oob", "check"):
            assert "i=1]" in fast[0][1], fast[0][1]     # at the failing (second) pass


def test_scalar_store_struct_rounds_and_refuses_like_numpy():
    """`SCALAR_STRUCT` stores: ``struct``'s f32 / f16 packing of Python floats gives numpy's bits (nearest-even,
    midpoints and one ulp either side, subnormals); values it refuses (overflow) are left to numpy."""
    import struct
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    h = np.sort(h[np.isfinite(h)].astype(np.float64))
    mids = (h[1:] + h[:-1]) / 2
    for vals, fmt, np_t in ((np.concatenate([h, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)]),
                             "<e", np.float16),
                            (np.random.default_rng(2).standard_normal(20000)
                             * 10.0 ** np.random.default_rng(3).integers(-46, 39, 20000), "<f", np.float32)):
        buf = bytearray(struct.calcsize(fmt))
        for v in vals.tolist():
            try:
                struct.pack_into(fmt, buf, 0, v)
            except OverflowError:
                continue
            assert bytes(buf) == np_t(v).tobytes(), (fmt, v)


# ============================================================================ f16 encodes written into the destination


def _f16_specials(dtype, n, subnormal_heavy, specials=True):
    """Random values with NaNs (both signs, payloads), infs, values at and around the f16 overflow
    boundary, f16 subnormals, both zeros; ``subnormal_heavy`` makes `to_f16` take its bit path."""
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 65504.0, 65519.99, 65520.0, -65520.0, 7e4, -1e30,
                        2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, -2.0 ** -15, 0.0, -0.0, 2.0 ** -14, 1.0], dtype)
    scale = 2.0 ** -16 if subnormal_heavy else 1e3
    x = (RNG.standard_normal(n) * scale).astype(dtype)
    if not specials:
        return x
    x[RNG.integers(0, n, 64)] = special[RNG.integers(0, special.size, 64)]
    bits = x.view(np.uint32 if dtype == np.float32 else np.uint64)
    nan_at = RNG.integers(0, n, 8)                                   # NaNs with payloads
    bits[nan_at] = (bits[nan_at] | (np.uint32(0x7F800001) if dtype == np.float32 else np.uint64(0x7FF0000000000001)))
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sat", ["sat", "preserve_nan", "nosat"])
@pytest.mark.parametrize("n,subnormal_heavy", [(100, False), (4096, False), (4096, True), (70000, True)])
@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("specials", [True, False])
def test_f16_encode_into_destination_equals_the_returned_array(dtype, sat, n, subnormal_heavy, strided, specials):
    from pto_core.numerics import float_to
    x = _f16_specials(dtype, n, subnormal_heavy, specials)
    want = float_to(x, "f16", sat=sat)
    if strided:           # every other element of a larger array: the gaps must keep their sentinel
        big = np.full(2 * n, np.float16(-7.0))
        out = big[::2]
    else:
        big = out = np.full(n, np.float16(-7.0))
    got = float_to(x, "f16", sat=sat, out=out)
    assert got is out
    if not specials:                                                  # the reference: numpy's RNE cast
        assert np.array_equal(want.view(np.uint16), x.astype(np.float16).view(np.uint16))
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))
    if strided:
        assert (big[1::2] == np.float16(-7.0)).all()
    x2 = x.reshape(-1, 4) if n % 4 == 0 else x                       # a strided (non-contiguous) source too
    src = x2[:, ::2] if x2.ndim == 2 else x2[::3]
    out2 = np.empty(src.shape, np.float16)
    float_to(src, "f16", sat=sat, out=out2)
    assert np.array_equal(out2.view(np.uint16), float_to(src, "f16", sat=sat).view(np.uint16))


@pytest.mark.parametrize("sat", [None, True, False, "preserve_nan"])
@pytest.mark.parametrize("specials", [True, False])
@pytest.mark.parametrize("m,n,dst_stride", [(256, 256, 512 * 16), (48, 64, 48 * 16), (32, 32, 40 * 16),
                                                (16, 16, 16 * 16)])
def test_fixpipe_nz_writeback_into_gm_runs_equals_the_scatter_path(monkeypatch, sat, specials, m, n, dst_stride):
    """The NZ f32 -> f16 write-back converts straight into the destination's runs; forcing the
    staged conversion + scatter it replaced gives the same GM bytes and the same written map."""
    from pto_core.ops import fixpipe
    from tests.core.fixpipe_support import load_acc
    x = _f16_specials(np.float32, m * n, m * n >= 8192, specials).reshape(m, n)
    n1 = n // 16
    extent = (n1 - 1) * dst_stride + m * 16

    def run(fast):
        if not fast:
            monkeypatch.setattr(fixpipe, "_nz_runs_view", lambda *a: None)
        mach = Machine("Ascend310")                                  # 256 KiB L0C: two conversion blocks
        src, ss = load_acc(mach, x)
        out = mach.gm_alloc((extent + 16,), "f16", name="out")
        clauses = {} if sat is None else {"sat": sat}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pto.mte_l0c_gm(src, out, m, n, ss, dst_stride, 0, 0, pre_quant=(0.0, {"mode": "f32_f16"}), **clauses)
        monkeypatch.undo()
        buf, off = mach.resolve(out, 2 * (extent + 16))
        return buf.data[off:off + 2 * (extent + 16)].copy(), np.array(buf.written[off:off + 2 * (extent + 16)])

    (fast_bytes, fast_w), (slow_bytes, slow_w) = run(True), run(False)
    assert np.array_equal(fast_bytes, slow_bytes)
    assert np.array_equal(fast_w, slow_w)
    assert not fast_w.all()                                           # the gaps and the tail stay unwritten
    if not specials:                                                  # the reference: numpy's RNE cast, NZ runs
        vals = fast_bytes.view(np.float16)
        for j1 in range(n1):
            run = vals[j1 * dst_stride:j1 * dst_stride + m * 16].reshape(m, 16)
            assert np.array_equal(run.view(np.uint16), x[:, j1 * 16:(j1 + 1) * 16].astype(np.float16).view(np.uint16))


# ============================================================================ finiteness checks by a BLAS dot


def _special_arrays(dt):
    """Float arrays with every kind of value a finiteness check meets: normal, subnormal, -0, huge finite
    (squares overflow), inf, -inf, NaN; small and large, one special or none."""
    big = float(np.finfo(dt).max)
    tiny = float(np.finfo(dt).smallest_subnormal)
    for size in (3, 255, 256, 4096, 70000):
        base = RNG.standard_normal(size).astype(dt)
        base[0] = -0.0
        base[-1] = tiny
        for special in (None, np.inf, -np.inf, np.nan, big, -big, 1e19):
            x = base.copy()
            if special is not None:
                x[RNG.integers(size)] = special
            yield x


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_all_finite_by_dot_equals_isfinite(monkeypatch, dt):
    from pto_core.numerics import floats
    for x in _special_arrays(dt):
        want = bool(np.isfinite(x).all())
        for on in (True, False):
            monkeypatch.setattr(floats, "CHECK_BY_DOT", on)
            assert floats.all_finite(x) == want
            assert floats.all_finite(x.reshape(1, -1)[:, ::-1]) == want      # a strided view: the scan
    assert floats.all_finite(np.full(300, np.float16(np.inf))) is False       # float16: no BLAS dot


def test_all_finite_by_dot_raises_no_overflow_warning():
    from pto_core.numerics import floats
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert floats.all_finite(np.full(1000, 3e38, np.float32))


@pytest.mark.parametrize("shape", [(256,), (4096,), (784, 32), (3, 70000)])
def test_f16_decode_special_test_by_dot_equals_the_scan(monkeypatch, shape):
    """The dot only skips the max/min scan when it proves no inf/NaN code: the same bits and report with it
    on or off, also for tiles of large finite values (sums of squares past the bound: the scan decides)."""
    from pto_core.numerics import floats
    finite_codes = ALL_F16[(ALL_F16 & 0x7C00) != 0x7C00]
    special_codes = ALL_F16[(ALL_F16 & 0x7C00) == 0x7C00]
    big = np.array([0x7BFF, 0xFBFF, 0x7BFE, 0x0001, 0x8000], np.uint16)     # +-65504, 65472, subnormal, -0
    for fill in ("random", "big", "small"):
        for n_special in (0, 1):
            if fill == "random":
                codes = RNG.choice(finite_codes, size=shape)
            elif fill == "big":
                codes = RNG.choice(big, size=shape)
            else:
                codes = (RNG.standard_normal(shape) * 1e-3).astype(np.float16).view(np.uint16)
            if n_special:
                codes.reshape(-1)[RNG.integers(codes.size)] = RNG.choice(special_codes)
            want = codes.view(np.float16).astype(np.float32).view(np.uint32)
            for on in (True, False):
                monkeypatch.setattr(floats, "CHECK_BY_DOT", on)
                got, finite = floats.f16_to_f32_finite(codes)
                assert finite == (n_special == 0)
                assert np.array_equal(got.view(np.uint32), want)


@pytest.mark.parametrize("old_special", [None, np.inf, -np.inf, np.nan, 3e38, 1e30])
@pytest.mark.parametrize("sat", [True, False])
def test_mad_acc_saturation_check_by_dot_equals_the_scan(monkeypatch, old_special, sat):
    """sat mad_acc / mad find non-finite L0C values by the dot or the scan alike: the same L0C bits."""
    from pto_core.numerics import floats
    mm, n, k = 64, 32, 64
    results = []
    for on in (True, False):
        monkeypatch.setattr(floats, "CHECK_BY_DOT", on)
        rng = np.random.default_rng(7)
        m = Machine("A5")
        lhs, rhs, dst = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
        a = (rng.standard_normal((mm, k)) * 4).astype(np.float16)
        bt = (rng.standard_normal((n, k)) * 4).astype(np.float16)
        a[3, 5] = np.float16(65504)
        bt[7, 5] = np.float16(65504)                       # one product near 2**32: overflow only with 3e38
        old = rng.standard_normal((mm, n)).astype(np.float32)
        if old_special is not None:
            old[3, 7] = old_special
        m.write(dst, layout.pack(old, "Nz", "f32", fractal=1024))
        _stage_nz(m, lhs, a)
        _stage_nz(m, rhs, bt)
        pto.set_flag("MTE1", "M", 0)
        pto.wait_flag("MTE1", "M", 0)
        pto.mad_acc(lhs, rhs, dst, mm, n, k, sat=sat)
        pto.set_flag("M", "MTE1", 0)
        pto.wait_flag("M", "MTE1", 0)
        results.append(_nz_acc(m, dst, mm, n).view(np.uint32).copy())
    assert np.array_equal(results[0], results[1])
    if sat:
        assert np.isfinite(results[0].view(np.float32)).all()


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")     # np.matrix's own notice
def test_all_finite_by_dot_accepts_array_subclasses():
    """The dot sees a plain 1-D view: an np.matrix (reshape keeps it 2-D) answers like the scan, not ValueError."""
    from pto_core.numerics import floats
    for special, want in ((1.0, True), (np.inf, False), (np.nan, False)):
        row = np.ones((1, 300), np.float32)
        row[0, 7] = special
        assert floats.all_finite(np.asmatrix(row)) is want


# ============================================================================ vnchwconv contiguous rows


def _vnchwconv_case(monkeypatch, fast, dt, repeat, drs, srs, in_place, seed):
    from pto_core.ops import vector_layout as vl
    if not fast:
        monkeypatch.setattr(vl, "_rows_view", lambda ctx, p, n, width, stride, size, offset, d, write, operand:
                            ctx.strided_view(p, (n, width), (stride, size), offset=offset, dtype=d, write=write,
                                             operand=operand))
    m = Machine("Ascend910B1", options=MachineOptions(uninitialized="record"))
    ub = m.context(0).core.buffer("ub")
    rng = np.random.default_rng(seed)
    ub.data[:] = rng.integers(0, 256, ub.size, dtype=np.uint8)
    ub.written[:65536] = rng.random(65536) < 0.97         # a few unwritten bytes: uninitialised-read reports
    d = dtype(dt)
    slots = rng.permutation(64)[:32] * 32 + 4096
    src = tuple(m.ptr("ub", d, int(a)) for a in slots[:16])
    dst = src if in_place else tuple(m.ptr("ub", d, int(a)) for a in slots[16:])
    pto.ub.vnchwconv(dst, src, repeat, rep_stride=(drs, srs))
    return ub.data.copy(), ub.written.copy(), list(m.reports), m.reports_dropped


@pytest.mark.parametrize("dt", ["f16", "f32", "u8"])
@pytest.mark.parametrize("repeat, drs, srs, in_place", [(1, 3, 5, False), (4, 1, 1, False), (4, 64, 64, True),
                                                        (3, 0, 1, False), (5, 1, 1, True), (2, 70, 0, False)])
def test_vnchwconv_dense_rows_match_strided_views(monkeypatch, dt, repeat, drs, srs, in_place):
    """vnchwconv reads/writes contiguous rows (one repeat at a time, or rows one block apart) through
    `ExecContext.dense_view`: the same bytes, written flags and uninitialised-read reports as the strided views."""
    fast = _vnchwconv_case(monkeypatch, True, dt, repeat, drs, srs, in_place, 7)
    slow = _vnchwconv_case(monkeypatch, False, dt, repeat, drs, srs, in_place, 7)
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
    assert fast[2:] == slow[2:]
    assert fast[2]                                        # the case does read unwritten bytes


# ============================================================================ clause values (record, codegen)


def _clause_exprs_ref(v):
    """`program.clause_exprs` as first written: one list per nested value."""
    from pto_core.program import Expr
    if isinstance(v, Expr):
        return [v]
    if isinstance(v, (tuple, list)):
        return [x for item in v for x in _clause_exprs_ref(item)]
    if isinstance(v, dict):
        return [x for item in v.values() for x in _clause_exprs_ref(item)]
    return []


def _coerce_clause_ref(v):
    from pto_core.memory import Ptr
    from pto_core.program import ptr_const
    if isinstance(v, Ptr):
        return ptr_const(v)
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return tuple(_coerce_clause_ref(x) for x in v)
    if isinstance(v, list):
        return [_coerce_clause_ref(x) for x in v]
    if isinstance(v, dict):
        return {k: _coerce_clause_ref(x) for k, x in v.items()}
    return v


def test_clause_walkers_skip_plain_items_and_keep_order_and_types():
    """`clause_exprs` and `_coerce_clause` skip ints/strs/None without a call: same expressions in the same
    order, same coerced values (numpy scalars to Python numbers, bools stay bools, tuples stay tuples)."""
    from pto_core import program as P
    rng = np.random.default_rng(7)
    leaves = [0, 1, -3, 2.5, float("nan"), True, False, None, "mode", np.int32(4), np.float16(1.5), np.bool_(True),
              P.Const(3, P.I64), cast(P.Const(2, P.I64), P.INDEX), P.LoopVar(P.I64, "i")]

    def value(depth):
        r = rng.random()
        if depth > 3 or r < 0.4:
            return leaves[rng.integers(len(leaves))]
        items = [value(depth + 1) for _ in range(rng.integers(0, 5))]
        if r < 0.6:
            return tuple(items)
        if r < 0.8:
            return items
        return {f"k{i}": x for i, x in enumerate(items)}

    for _ in range(500):
        v = value(0)
        got, want = P.clause_exprs(v), _clause_exprs_ref(v)
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want))
        c, w = P._coerce_clause(v), _coerce_clause_ref(v)
        assert repr(c) == repr(w) and type(c) is type(w)


# ============================================================================ trace / codegen shortcuts (exact types)


def test_constant_operand_shortcuts_keep_exact_types():
    """`program._constants` (the verified-sync cache key test) and `_Codegen.static_operands`'s all-plain
    shortcut decide by exact type, as the loops they replace: a bool or numpy int is no cache-key constant,
    a float (NaN canonicalisation) or pointer goes the general way."""
    from pto_core.interpreter import _Codegen, _PLAIN
    from pto_core.program import _constants

    def old_constants(values):
        return all(type(v) is int or type(v) is str for v in values)

    for values in [(), (1, "a"), ("V", "MTE3", 0), (True,), (np.int64(1),), (1, 2.0), (1, None), ("x", b"y")]:
        assert _constants(values) == old_constants(values), values
    static = _Codegen.static_operands
    for ops in [(1, "a", None, True), ("M", "FIX", 0), ()]:
        assert all(type(v) in _PLAIN for v in ops)
        assert static(None, ops) == tuple(ops)
    nan = static(None, (1, float("nan")))          # a float: the general path (canonical NaN)
    assert nan[0] == 1 and nan[1] != nan[1]


# ============================================================================ bound L1 -> L0 loads (OpSpec.bind)


def _run_l1_l0_bound(monkeypatch, bound, case, target, machine, uninit):
    """A compiled program: a 64 x 32 f16 tile into L1, then twice (a loop) a full-control L0A load and a
    shape-form L0B load of it; ``case`` "unwritten": the first source fractal marked unwritten after the first
    trip; "hazard": the source rewritten after the first trip with no MTE2 -> MTE1 flag before the second;
    "misaligned": an L0A pointer off its 32-byte alignment. With the loads' bind hook on or off: (error class,
    text, where), reports, L0A / L0B bytes and flags; and how often the control fields were checked."""
    from pto_core.ops import mte
    from pto_core.program import program
    monkeypatch.setattr(mte, "MTE_L1_L0_BIND", bound)
    calls = []
    full, shape = mte._full_control, mte._shape_form_control
    monkeypatch.setattr(mte, "_full_control", lambda *a: calls.append(1) or full(*a))
    monkeypatch.setattr(mte, "_shape_form_control", lambda *a: calls.append(1) or shape(*a))
    with program("l1l0", target=target) as k:
        g = k.gm_arg("x", "f16", (64 * 32,), io="in")
        src = k.ptr("l1", "f16", 0)
        pto.mte_gm_l1(g, src, 64 * 32 * 2, nburst=(1, 0, 0))
        a, b = k.ptr("l0a", "f16", 16 if case == "misaligned" else 0), k.ptr("l0b", "f16", 0)
        _sync("MTE2", "MTE1")
        with k.for_(0, 2, dtype="s32"):
            pto.mte_l1_l0a(src, a, 0, 0, 2, 2, 4, 2)
            pto.mte_l1_l0b(src, b, 32, 32)
            _sync("MTE1", "MTE2")
            if case == "unwritten":
                pto.mark_unwritten(src, 64)
            elif case == "hazard":
                pto.mte_gm_l1(g, src, 512, nburst=(1, 0, 0))
            else:
                _sync("MTE2", "MTE1")
    exe = k.program.compile()
    data = {"x": (np.arange(64 * 32) % 29 - 14).astype(np.float16)}
    m = machine(MachineOptions(fill="random", seed=3, uninitialized=uninit))
    try:
        if target != m.target.name:
            exe.run(dict(data))               # first on the program's own target
        exe.run(dict(data), machine=m)
        err = None
    except Exception as e:                            # noqa: BLE001 - compared between the two paths
        err = (type(e).__name__, str(e), e.where)
    monkeypatch.undo()
    l0a, l0b = m.cores[0].buffer("l0a"), m.cores[0].buffer("l0b")
    return (err, [r for r in m.reports], l0a.data.tobytes(), np.asarray(l0a.written).tobytes(),
            l0b.data.tobytes(), np.asarray(l0b.written).tobytes()), len(calls)


@pytest.mark.parametrize("case,uninit,machine", [
    ("clean", "record", "Ascend310"),
    ("unwritten", "record", "Ascend310"),          # a source byte unwritten on the second trip: flags moved
    ("unwritten", "raise", "Ascend310"),           # (moves carry the flags; the reader of L0A reports)
    ("hazard", "record", "Ascend310"),             # a RAW race on the second trip: raised at the load
    ("misaligned", "record", "Ascend310"),         # refused on every run
    ("clean", "record", "A5"),                     # compiled for 310 (L0A Zz), run on A5 (L0A Nz)
    ("unwritten", "record", "A5"),
])
def test_bound_l1_l0_load_equals_the_general_path(monkeypatch, case, uninit, machine):
    """L1 -> L0A/L0B loads with compile-time operands (checks and control once per target: `MTE_L1_L0_BIND`)
    give the same L0 bytes and flags, reports and first error (class, text, provenance) as the general
    path on every run, also on a second loop trip whose source is no longer written or races, and when the
    compiled program then runs on a machine of another target."""
    mk = (lambda opts: Machine(machine, options=opts))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast, nfast = _run_l1_l0_bound(monkeypatch, True, case, "Ascend310", mk, uninit)
        slow, nslow = _run_l1_l0_bound(monkeypatch, False, case, "Ascend310", mk, uninit)
    assert fast == slow
    if case == "clean":                                  # checked once per target and site, not once per run
        assert nfast == (2 if machine == "Ascend310" else 4) and nslow == 2 * nfast
        assert fast[0] is None and any(fast[2]) and any(fast[4])
    elif case == "unwritten":                           # the second trip's L0A copy is no longer all written
        a_flags = np.frombuffer(fast[3], np.bool_)[:4 * 512]
        assert fast[0] is None and not a_flags[:64].any() and a_flags[64:].all()
    elif case == "hazard":
        assert fast[0] is not None and fast[0][0] == "HazardError" and "RAW" in fast[0][1]
    else:
        assert fast[0] is not None and fast[0][0] == "Misaligned"


def _run_mad_bound(monkeypatch, bound, case, uninit):
    """A compiled program: a 32 x 32 f16 tile into L1 and L0A / L0B, then twice (a loop) a mad into L0C and the
    L0A / L0B loads again; ``case`` "unwritten": the first source fractal marked unwritten before the first
    trip's loads (the second trip's mad reads unwritten L0A bytes); "hazard": no MTE1 -> M flag after them; "misaligned": an L0C pointer off its 32-byte alignment. With the mad's bind hook
    on or off: (error class, text, where), reports, L0C bytes and flags; and how many size checks ran."""
    from pto_core.ops import cube
    from pto_core.program import program
    monkeypatch.setattr(cube, "MAD_BIND", bound)
    with program("madb", target="Ascend310") as k:
        g = k.gm_arg("x", "f16", (32 * 32,), io="in")
        src = k.ptr("l1", "f16", 0)
        pto.mte_gm_l1(g, src, 32 * 32 * 2, nburst=(1, 0, 0))
        a, b = k.ptr("l0a", "f16", 0), k.ptr("l0b", "f16", 0)
        c = k.ptr("l0c", "f32", 16 if case == "misaligned" else 0)
        _sync("MTE2", "MTE1")
        pto.mte_l1_l0a(src, a, 0, 0, 2, 2, 2, 2)
        pto.mte_l1_l0b(src, b, 32, 32)
        _sync("MTE1", "M")
        with k.for_(0, 2, dtype="s32"):
            pto.mad(a, b, c, 32, 32, 32, disable_gemv=True)
            _sync("M", "MTE1")
            if case == "unwritten":
                _sync("MTE1", "MTE2")
                pto.mark_unwritten(src, 64)
                _sync("MTE2", "MTE1")
            pto.mte_l1_l0a(src, a, 0, 0, 2, 2, 2, 2)
            pto.mte_l1_l0b(src, b, 32, 32)
            if case != "hazard":
                _sync("MTE1", "M")
    exe = k.program.compile()
    calls = []
    check = cube.check_int
    monkeypatch.setattr(cube, "check_int", lambda *a, **kw: calls.append(1) or check(*a, **kw))
    data = {"x": (np.arange(32 * 32) % 13 - 6).astype(np.float16)}
    m = Machine("Ascend310", options=MachineOptions(fill="random", seed=4, uninitialized=uninit))
    try:
        exe.run(dict(data), machine=m)
        exe.run(dict(data), machine=m)
        err = None
    except Exception as e:                            # noqa: BLE001 - compared between the two paths
        err = (type(e).__name__, str(e), e.where)
    monkeypatch.undo()
    l0c = m.cores[0].buffer("l0c")
    return (err, [r for r in m.reports], l0c.data.tobytes(), np.asarray(l0c.written).tobytes()), len(calls)


@pytest.mark.parametrize("case,uninit", [("clean", "record"), ("unwritten", "record"), ("unwritten", "raise"),
                                         ("hazard", "record"), ("misaligned", "record")])
def test_bound_mad_equals_the_general_path(monkeypatch, case, uninit):
    """A mad with compile-time operands (size, K-parity and alignment checks once per op site: `MAD_BIND`)
    gives the same L0C bytes and flags, reports and first error (class, text, provenance) as the general
    path, also on a second loop trip whose L0A bytes are unwritten or race, and on a second run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast, nfast = _run_mad_bound(monkeypatch, True, case, uninit)
        slow, nslow = _run_mad_bound(monkeypatch, False, case, uninit)
    assert fast == slow
    if case == "clean":                              # 3 size checks per site, not per execution (2 runs x 2 trips)
        assert fast[0] is None and any(fast[2]) and nfast == 3 and nslow == 12
    elif case == "unwritten":
        if uninit == "record":
            assert fast[0] is None and any(r[0] == "uninitialized" for r in fast[1])
        else:
            assert fast[0][0] == "UninitializedRead" and fast[0][2] is not None
    elif case == "hazard":
        assert fast[0] is not None and fast[0][0] == "HazardError"
    else:
        assert fast[0] is not None and fast[0][0] == "Misaligned" and nfast == nslow


def _alternating_targets_run(monkeypatch, bound, dt, shape, full):
    """One executable (compiled for A5) run on machines of targets in turn; its L1 -> L0A load is a transposing
    shape-form load (``shape``) or a full-control one (``full``). Per run: the error (class, text, where) and the
    L0A bytes and flags."""
    from pto_core.ops import mte
    from pto_core.program import program
    monkeypatch.setattr(mte, "MTE_L1_L0_BIND", bound)
    nbytes = 64 * 64 * dtype(dt).bits // 8
    with program("alt", target="A5") as k:
        g = k.gm_arg("x", dt, (64 * 64,), io="in")
        src, a = k.ptr("l1", dt, 0), k.ptr("l0a", dt, 0)
        pto.mte_gm_l1(g, src, nbytes, nburst=(1, 0, 0))
        _sync("MTE2", "MTE1")
        with k.for_(0, 2, dtype="s32"):
            if full:
                pto.mte_l1_l0a(src, a, *full)
            else:
                pto.mte_l1_l0a(src, a, *shape, transpose=True)
            _sync("MTE1", "MTE2")
            _sync("MTE2", "MTE1")
    exe = k.program.compile()
    x = (np.arange(64 * 64) % 29 - 14).astype(np.float32 if dt == "f32" else np.float16)
    out = []
    for target in ("A5", "Ascend310", "A5", "Kirin9030", "A5"):
        m = Machine(target, options=MachineOptions(fill="random", seed=5))
        try:
            exe.run({"x": x}, machine=m)
            err = None
        except Exception as e:                            # noqa: BLE001 - compared between the two paths
            err = (type(e).__name__, str(e), e.where)
        l0a = m.cores[0].buffer("l0a")
        out.append((target, err, l0a.data.tobytes(), np.asarray(l0a.written).tobytes()))
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("dt,shape,full,refused", [
    ("f32", (32, 8), None, ("Ascend310",)),                 # TRANSPOSE_SHAPE_FITS: k % 16 in 1..8 refused on Zz only
    ("f16", None, (0, 0, 8, 12, 8, 8), ("Kirin9030",)),     # 48 KiB into L0A: past the 32 KiB L0A of Kirin9030
])
def test_bound_l1_l0_load_rechecks_on_each_target_in_turn(monkeypatch, dt, shape, full, refused):
    """A bound L1 -> L0A load of one executable run on targets in turn (h_review333): a check that passed on one
    target is made again on the next (refused there with the general path's error), and passes again on the
    first target afterwards; bytes, flags and errors equal the general path's on every run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = _alternating_targets_run(monkeypatch, True, dt, shape, full)
        slow = _alternating_targets_run(monkeypatch, False, dt, shape, full)
    assert fast == slow
    assert [t for t, err, _, _ in fast if err is not None] == list(refused)


def _run_mad_f16(monkeypatch, plan, case, target, uninit, sat):
    """A compiled program: a 32 x 32 f16 tile into L1 and L0A / L0B, a mad into L0C, then twice (a loop) a
    mad_acc and the loads again. ``case``: "clean"; "ragged" (m, n, k = 20, 24, 30 of the same tiles);
    "unwritten_a" / "unwritten_b" / "unwritten_c" (the first fractal of L0A / L0B / L0C marked unwritten before
    the second trip's mad_acc); "hazard" (no MTE1 -> M flag after the reloads); "bounds" (the second trip's
    L0A pointer 64 KiB on: past L0A); "specials" (inf / NaN / 65504 inputs). With `MAD_F16_PLAN` on or off:
    (error class, text, where), reports, L0C bytes and flags."""
    from pto_core.ops import cube
    from pto_core.program import program
    monkeypatch.setattr(cube, "MAD_F16_PLAN", plan)
    mm, nn, kk = (20, 24, 30) if case == "ragged" else (32, 32, 32)
    with program("madf16", target="Ascend310") as k:
        g = k.gm_arg("x", "f16", (32 * 32,), io="in")
        src = k.ptr("l1", "f16", 0)
        pto.mte_gm_l1(g, src, 32 * 32 * 2, nburst=(1, 0, 0))
        a, b, c = k.ptr("l0a", "f16", 0), k.ptr("l0b", "f16", 0), k.ptr("l0c", "f32", 0)
        _sync("MTE2", "MTE1")
        pto.mte_l1_l0a(src, a, 0, 0, 2, 2, 2, 2)
        pto.mte_l1_l0b(src, b, 32, 32)
        _sync("MTE1", "M")
        pto.mad(a, b, c, mm, nn, kk, disable_gemv=True, sat=sat)
        with k.for_(0, 2, dtype="s32") as i:
            if case.startswith("unwritten"):
                pto.mark_unwritten({"unwritten_a": a, "unwritten_b": b, "unwritten_c": c}[case] + i * 0, 64 * i)
            pto.mad_acc(a + i * 32768 if case == "bounds" else a, b, c, mm, nn, kk, disable_gemv=True, sat=sat)
            _sync("M", "MTE1")
            pto.mte_l1_l0a(src, a, 0, 0, 2, 2, 2, 2)
            pto.mte_l1_l0b(src, b, 32, 32)
            if case != "hazard":
                _sync("MTE1", "M")
    exe = k.program.compile()
    x = (np.arange(32 * 32) % 13 - 6).astype(np.float16)
    if case == "specials":
        x[[3, 40, 77, 500]] = [np.inf, -np.inf, np.nan, 65504.0]
    m = Machine(target, options=MachineOptions(fill="random", seed=4, uninitialized=uninit))
    try:
        if target != "Ascend310":
            exe.run({"x": x.copy()})               # first on the program's own target
        exe.run({"x": x.copy()}, machine=m)
        exe.run({"x": x.copy()}, machine=m)
        err = None
    except Exception as e:                            # noqa: BLE001 - compared between the two paths
        err = (type(e).__name__, str(e), e.where)
    monkeypatch.undo()
    l0c = m.cores[0].buffer("l0c")
    return err, [r for r in m.reports], l0c.data.tobytes(), np.asarray(l0c.written).tobytes()


@pytest.mark.parametrize("case,target,uninit,sat", [
    ("clean", "Ascend310", "record", None),
    ("ragged", "Ascend310", "record", None),
    ("ragged", "A5", "record", None),                  # compiled for 310 (L0A Zz), run on A5 (L0A Nz)
    ("unwritten_a", "Ascend310", "record", None),
    ("unwritten_b", "Ascend310", "record", None),
    ("unwritten_c", "Ascend310", "record", None),
    ("unwritten_a", "Ascend310", "raise", None),
    ("hazard", "Ascend310", "record", None),
    ("bounds", "Ascend310", "record", None),
    ("specials", "Ascend310", "record", True),         # sat: inf -> 65504, NaN -> 0 before the GEMM
    ("specials", "Ascend310", "record", False),        # nosat: IEEE
    ("specials", "Ascend310", "off", None),
])
def test_mad_f16_plan_equals_the_general_path(monkeypatch, case, target, uninit, sat):
    """f16 x f16 -> f32 mads with their tile geometry from a table (`MAD_F16_PLAN`) give the same L0C bytes and
    written flags, reports and first error (class, text, provenance) as the general path, also when a later loop
    trip reads unwritten bytes, races, or runs out of L0A, with inf / NaN inputs, and on a machine of another
    target (another L0A layout)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = _run_mad_f16(monkeypatch, True, case, target, uninit, sat)
        slow = _run_mad_f16(monkeypatch, False, case, target, uninit, sat)
    assert fast == slow
    err, reports = fast[0], fast[1]
    if case in ("clean", "ragged", "specials"):
        assert err is None and not reports and any(fast[2])
    elif case == "hazard":
        assert err is not None and err[0] == "HazardError" and "RAW" in err[1]
    elif case == "bounds":
        assert err is not None and err[0] == "OutOfBounds" and "l0a" in err[1]
    elif uninit == "raise":
        assert err is not None and err[0] == "UninitializedRead"
    else:
        assert err is None and reports


def test_mad_f16_plan_is_taken(monkeypatch):
    """The cube kernels' form (f16 x f16 -> f32 mad / mad_acc, not GEMV) runs `_mad_f16` when `MAD_F16_PLAN` is on."""
    from pto_core.ops import cube
    calls = []
    run = cube._mad_f16
    monkeypatch.setattr(cube, "_mad_f16", lambda *a, **kw: calls.append(1) or run(*a, **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run_mad_f16(monkeypatch, True, "clean", "Ascend310", "record", None)
    assert len(calls) == 6


def _rmw_program(seed):
    """A compiled cube loop on one L0C tile: a mad, then trips of [a FIXPIPE store of L0C to GM (its M -> FIX and
    FIX -> M flags now and then missing: a RAW, or a WAR on the next mad_acc's L0C write), part of L0C marked
    unwritten now and then, a mad_acc into L0C (now and then 128 KiB further on per trip: past L0C on a later one)]
    (`memory.RMW_SPANS`: the mad_acc's L0C read and write)."""
    import random
    from pto_core.program import program
    r = random.Random(seed)
    mm, nn, kk = r.choice(((32, 32, 32), (20, 24, 30), (16, 32, 16)))
    with program(f"rmw{seed}", target="Ascend310") as k:
        g = k.gm_arg("x", "f16", (32 * 32,), io="in")
        out = k.gm_arg("y", "f32", (32 * 32,), io="out", init=3)
        src = k.ptr("l1", "f16", 0)
        pto.mte_gm_l1(g, src, 32 * 32 * 2, nburst=(1, 0, 0))
        a, b, c = k.ptr("l0a", "f16", 0), k.ptr("l0b", "f16", 0), k.ptr("l0c", "f32", 0)
        _sync("MTE2", "MTE1")
        pto.mte_l1_l0a(src, a, 0, 0, 2, 2, 2, 2)
        pto.mte_l1_l0b(src, b, 32, 32)
        _sync("MTE1", "M")
        if r.random() < 0.8:
            pto.mad(a, b, c, mm, nn, kk, disable_gemv=True)
        with k.for_(0, r.randint(1, 3), dtype="s32") as i:
            if r.random() < 0.6:
                if r.random() < 0.9:
                    _sync("M", "FIX")
                pto.mte_l0c_gm(c, out, 32, 32, 32, 32, 0, 0, nz2nd=True)
                if r.random() < 0.85:
                    _sync("FIX", "M")
            if r.random() < 0.2:
                pto.mark_unwritten(c + i * 0, r.choice((64, 256, 4096)))
            far = r.random() < 0.15           # the tile 128 KiB on per trip: past L0C on a later trip
            pto.mad_acc(a, b, c + i * 0x8000 if far else c, mm, nn, kk, disable_gemv=True)
        if r.random() < 0.7:
            _sync("M", "FIX")
            pto.mte_l0c_gm(c, out, 32, 32, 32, 32, 0, 0, nz2nd=True)
    options = MachineOptions(fill="random", seed=4, uninitialized=r.choice(("record", "record", "raise", "off")))
    return k.program, options


def _rmw_outcome(monkeypatch, on, seed):
    from pto_core import memory
    from pto_core.interpreter import compile_program
    monkeypatch.setattr(memory, "RMW_SPANS", on)
    prog, options = _rmw_program(seed)
    exe = compile_program(prog, ())
    m = Machine("Ascend310", options=options)
    x = (np.arange(32 * 32) % 13 - 6).astype(np.float16)
    try:
        y = exe.run({"x": x}, machine=m)["y"].tobytes()
        exe.run({"x": x}, machine=m)              # a second run on the same machine (its history reset)
        err = None
    except Exception as e:                            # noqa: BLE001 - compared between the two paths
        y, err = None, (type(e).__name__, str(e), e.where)
    monkeypatch.undo()
    l0c = m.cores[0].buffer("l0c")
    return err, list(m.reports), y, l0c.data.tobytes(), np.asarray(l0c.written).tobytes()


def test_rmw_spans_keep_verdicts_reports_and_bytes_of_mad_acc_loops(monkeypatch):
    """`memory.RMW_SPANS` on and off: random cube loops of mad_acc into an L0C tile that FIXPIPE also reads (flags
    right or missing, L0C partly unwritten, uninitialised reads recorded / raised / not tracked) give the same first
    error (class, text, provenance), reports, output and L0C bytes and written flags; the one-call path is taken and
    the programs pass, race and read unwritten bytes."""
    from pto_core.checks import hazards
    calls = []
    real = hazards.HazardTracker.on_access_rmw

    def counted(*args):
        ok = real(*args)
        calls.append(ok)
        return ok

    monkeypatch.setattr(hazards.HazardTracker, "on_access_rmw", counted)
    kinds = {}
    for seed in range(60):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            on = _rmw_outcome(monkeypatch, True, seed)
            monkeypatch.setattr(hazards.HazardTracker, "on_access_rmw", counted)
            off = _rmw_outcome(monkeypatch, False, seed)
            monkeypatch.setattr(hazards.HazardTracker, "on_access_rmw", counted)
        assert on == off, seed
        kind = on[0][0] if on[0] else ("reported" if on[1] else "ok")
        kinds[kind] = kinds.get(kind, 0) + 1
    assert calls.count(True) >= 30 and calls.count(False) >= 3, (calls.count(True), calls.count(False))
    assert min(kinds.get(x, 0) for x in ("ok", "reported", "HazardError", "UninitializedRead", "OutOfBounds")) >= 2, \
        kinds


@pytest.mark.parametrize("case,uninit", [("clean", "record"), ("unwritten_c", "record"), ("unwritten_c", "raise"),
                                         ("hazard", "record"), ("bounds", "record")])
def test_rmw_spans_equal_the_two_calls_on_the_mad_f16_cases(monkeypatch, case, uninit):
    """`memory.RMW_SPANS` on and off on the `MAD_F16_PLAN` cases (eager-free compiled loops; L0C partly unwritten
    before a mad_acc, a RAW, an out-of-L0A pointer): the same outcome, reports, L0C bytes and flags."""
    from pto_core import memory
    got = []
    for on in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            monkeypatch.setattr(memory, "RMW_SPANS", on)
            got.append(_run_mad_f16(monkeypatch, True, case, "Ascend310", uninit, None))
    assert got[0] == got[1]
