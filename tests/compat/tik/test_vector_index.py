"""vci, vgather, vgatherb, vscatter and vreducev2 through TIK kernels, against independent references; error paths."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnsupportedOp

from .helpers import raises_tik
from .vec_helpers import elem, lanes_of, vec_kernel

RNG = np.random.default_rng(11)


# ----------------------------------------------------------------------------- vci


@pytest.mark.parametrize("dtype,chip,start", [("float16", "Ascend310P3", 1.5), ("int32", "Ascend310P3", -7),
                                              ("int8", "Ascend310B1", 100), ("float32", "Ascend310B1", 0.25)])
def test_vci_fills_indexes_per_lane(dtype, chip, start):
    dt = np.dtype(dtype)
    par = 256 // dt.itemsize
    mask = [0, 0xF0F0_0000_FFFF_000F] if dt.itemsize == 2 else (par - 3 if dt.itemsize == 4 else
                                                                 [0, 0, 2 ** 64 - 1, 7])
    blk, rep = 2, 20
    n = elem(1, par - 1, blk, rep, 32 // dt.itemsize) + 32
    dst = np.full(-(-n // (32 // dt.itemsize)) * (32 // dt.itemsize), 99, dt)
    out = vec_kernel({"d": dst}, lambda ti, ub: ti.vci(mask, ub["d"], start, 2, blk, rep), chip=chip)["d"]
    want = dst.copy()
    for r in range(2):
        for e in lanes_of(mask, par):
            v = start + r * par + int(e)
            if dt.kind == "i":
                v = (v + 128) % 256 - 128 if dt.itemsize == 1 else v
            want[elem(r, int(e), blk, rep, 32 // dt.itemsize)] = v
    np.testing.assert_array_equal(out, want)


def test_vci_counter_mode_and_scalar_start():
    def body(ti, ub):
        s = ti.Scalar("int16", init_value=-5)
        ti.vci(200, ub["d"], s, 1, 1, 8, mask_mode="counter")
    out = vec_kernel({"d": np.full(256, 3, np.int16)}, body, chip="Ascend310P3")["d"]
    want = np.full(256, 3, np.int16)
    want[:200] = np.arange(200) - 5
    np.testing.assert_array_equal(out, want)


def test_vci_errors():
    d = {"d": np.zeros(128, np.float16)}
    with raises_tik(UnsupportedOp, match="tik.vci with float16 is not supported on Ascend910B1"):
        vec_kernel(d, lambda ti, ub: ti.vci(128, ub["d"], 0.0, 1, 1, 8), chip="Ascend910B1", build_only=True)
    with raises_tik(UnsupportedOp, match="tik.vci with uint16 is not supported"):
        vec_kernel({"d": np.zeros(128, np.uint16)}, lambda ti, ub: ti.vci(128, ub["d"], 0, 1, 1, 8),
                   chip="Ascend310P3", build_only=True)
    with raises_tik(OutOfBounds, match="tensor overflow"):
        vec_kernel(d, lambda ti, ub: ti.vci(128, ub["d"], 0.0, 2, 1, 8), chip="Ascend310P3", build_only=True)
    with raises_tik(IllegalOperand, match="mask = 129 is outside"):
        vec_kernel(d, lambda ti, ub: ti.vci(129, ub["d"], 0.0, 1, 1, 8), chip="Ascend310P3", build_only=True)
    with raises_tik(IllegalOperand, match="dst_rep_stride = 256 is outside"):
        vec_kernel(d, lambda ti, ub: ti.vci(128, ub["d"], 0.0, 1, 1, 256), chip="Ascend310P3", build_only=True)


# ----------------------------------------------------------------------------- vgather / vscatter


@pytest.mark.parametrize("chip", ["Ascend310P3", "Ascend910B1"])
def test_vgather_by_byte_offsets(chip):
    src = (np.arange(256) * 3).astype(np.float32)
    idx = RNG.integers(0, 200, 128)
    base = 32
    offs = (idx * 4).astype(np.int32)
    dst = np.full(64 * 3, -1, np.float32)
    mask = [0, 0x0FFF_FFFF_FFFF_FFF0]

    def body(ti, ub):
        ti.vgather(mask, ub["d"], ub["s"], ub["o"], 2, 12, base_addr=base)
    out = vec_kernel({"d": dst, "s": src, "o": offs}, body, chip=chip)["d"]
    want = dst.copy()
    for r in range(2):
        for e in lanes_of(mask, 64):
            want[r * 96 + e] = src[base // 4 + idx[r * 64 + e]]
    np.testing.assert_array_equal(out, want)


def test_vgather_partial_mask_reads_only_active_offsets():
    """An offset tensor may end at the last active lane (the mask counts for the overflow check, as for every
    vector operand): IndexSDK's lookup_table_in_ub gathers `num` < 64 f32 table entries with a `num`-element
    offset tensor. Two repeats of 16 lanes need 64 + 16 offsets; one fewer is a tensor overflow."""
    table = (np.arange(96) * 0.5 - 7).astype(np.float32)
    idx = RNG.integers(0, 96, 80)
    dst = np.full(128, -1, np.float32)

    def body(ti, ub):
        ti.vgather(16, ub["d"], ub["s"], ub["o"], 2, 8)
    out = vec_kernel({"d": dst, "s": table, "o": (idx * 4).astype(np.int32)}, body, chip="Ascend310P3")["d"]
    want = dst.copy()
    for r in range(2):
        want[r * 64:r * 64 + 16] = table[idx[r * 64:r * 64 + 16]]
    np.testing.assert_array_equal(out, want)
    one = vec_kernel({"d": dst[:64], "s": table, "o": (idx[:16] * 4).astype(np.int32)},
                     lambda ti, ub: ti.vgather(16, ub["d"], ub["s"], ub["o"], 1, 8), chip="Ascend310P3")["d"]
    np.testing.assert_array_equal(one[:16], table[idx[:16]])
    with raises_tik(OutOfBounds, match="src_offset tensor overflow, expected elements nums: 80, actual elements "
                                       "nums: 72"):
        vec_kernel({"d": dst, "s": table, "o": (idx[:72] * 4).astype(np.int32)}, body, chip="Ascend310P3",
                   build_only=True)


@pytest.mark.parametrize("unit, rep, starts", [(0, 8, (0, 128)), (1, 0, (0, 128)), (3, 0, (0, 128)),
                                                (3, 16, (0, 144)), (2, 136, (0, 136))])
def test_vgather_writes_each_repeat_contiguously_for_every_stride_unit(unit, rep, starts):
    """CCE vgather (cceapi_0057) writes its N gathered elements contiguously; stride_unit only changes how the
    repeat step counts (units 2/3: in elements, unit 3 a gap after the repeat). Vision SDK's warp_affine_uint8
    gathers with dst_rep_stride=0, stride_unit=3: one contiguous run (was: a 1-element gap every 16 lanes)."""
    src = (np.arange(512) % 2048).astype(np.float16)
    offs = (np.arange(256) * 2).astype(np.int32)
    dst = np.full(512, -1, np.float16)

    def body(ti, ub):
        ti.vgather(128, ub["d"], ub["s"], ub["o"], 2, rep, 0, unit)
    out = vec_kernel({"d": dst, "s": src, "o": offs}, body, chip="Ascend310P3")["d"]
    want = dst.copy()
    for r, at in enumerate(starts):
        want[at:at + 128] = src[r * 128:(r + 1) * 128]
    np.testing.assert_array_equal(out, want)


def test_vscatter_counter_mode_last_writer_wins():
    src = np.arange(128, dtype=np.int16) + 500
    slots = RNG.integers(0, 64, 128)
    offs = (slots * 2).astype(np.int32)
    dst = np.full(128, 7, np.int16)

    def body(ti, ub):
        ti.vscatter(100, ub["d"], ub["s"], ub["o"], 1, 8, base_addr=64, mask_mode="counter")
    out = vec_kernel({"d": dst, "s": src, "o": offs}, body, chip="Ascend310P3")["d"]
    want = dst.copy()
    for e in range(100):
        want[32 + slots[e]] = src[e]
    np.testing.assert_array_equal(out, want)


def test_vgather_vscatter_errors():
    bufs = {"d": np.zeros(128, np.float16), "s": np.zeros(128, np.float16), "o": np.zeros(128, np.int32)}
    with raises_tik(UnsupportedOp, match="vscatter does not support float16 on Ascend910B1"):
        vec_kernel(bufs, lambda ti, ub: ti.vscatter(128, ub["d"], ub["s"], ub["o"], 1, 8), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(UnsupportedOp, match="vgather does not support float16 on Ascend910A"):
        vec_kernel(bufs, lambda ti, ub: ti.vgather(128, ub["d"], ub["s"], ub["o"], 1, 8), chip="Ascend910A",
                   build_only=True)
    bad = dict(bufs, o=np.zeros(256, np.int16))
    with raises_tik(IllegalOperand, match="dtype of src_offset should be 'int32'"):
        vec_kernel(bad, lambda ti, ub: ti.vgather(128, ub["d"], ub["s"], ub["o"], 1, 8), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(IllegalOperand, match="base_addr should be less equal than src tensor's buffer size: 256"):
        vec_kernel(bufs, lambda ti, ub: ti.vgather(128, ub["d"], ub["s"], ub["o"], 1, 8, base_addr=288),
                   chip="Ascend310P3", build_only=True)
    with raises_tik(OutOfBounds, match="src_offset tensor overflow"):
        vec_kernel(bufs, lambda ti, ub: ti.vgather(128, ub["d"], ub["s"], ub["o"][64], 1, 8), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(OutOfBounds, match="dst tensor overflow"):
        vec_kernel(bufs, lambda ti, ub: ti.vgather(64, ub["d"][96], ub["s"], ub["o"], 1, 8), chip="Ascend310P3",
                   build_only=True)
    odd = dict(bufs, o=np.full(128, 3, np.int32))
    with raises_tik(Exception, match="not a multiple of the 2-byte element size"):
        vec_kernel(odd, lambda ti, ub: ti.vgather(128, ub["d"], ub["s"], ub["o"], 1, 8), chip="Ascend310P3")


# ----------------------------------------------------------------------------- vgatherb


def gatherb_ref(dst, src, offs, repeat, blk, rep):
    """Block j of repeat r of dst = the 32 bytes at byte offs[8r + j] of src (no overlap between them)."""
    out = dst.copy().view(np.uint8)
    raw = src.view(np.uint8)
    for r in range(repeat):
        for j in range(8):
            at = (r * rep + j * blk) * 32
            out[at:at + 32] = raw[int(offs[8 * r + j]):int(offs[8 * r + j]) + 32]
    return out.view(dst.dtype)


@pytest.mark.parametrize("dtype,off_dtype,chip,blk,rep", [
    ("float16", "int32", "Ascend910B1", 1, 8),          # the contiguous form public kernels use
    ("uint32", "uint32", "Ascend910B1", 2, 20),
    ("int16", "int32", "Ascend310B1", 0, 3),            # block stride 0: the last block of a repeat wins
    ("float32", "uint32", "Ascend310B1", 1, 0)])         # repeat stride 0: the last repeat wins
def test_vgatherb_gathers_32_byte_blocks(dtype, off_dtype, chip, blk, rep):
    dt = np.dtype(dtype)
    src = (np.arange(1024 // dt.itemsize) * 3 + 1).astype(dt)
    offs = (RNG.integers(0, 32, 24) * 32).astype(off_dtype)
    n = (2 * rep + 7 * blk + 1) * 32 // dt.itemsize
    dst = np.full(max(n, 32 // dt.itemsize), 9, dt)

    def body(ti, ub):
        ti.vgatherb(ub["d"], ub["s"], ub["o"], 3 if rep else 2, blk, rep)
    out = vec_kernel({"d": dst, "s": src, "o": offs}, body, chip=chip)["d"]
    np.testing.assert_array_equal(out, gatherb_ref(dst, src, offs, 3 if rep else 2, blk, rep))
    assert not np.array_equal(out, dst)


def test_vgatherb_with_run_time_repeats():
    src = np.arange(256, dtype=np.float16)
    offs = (np.arange(16)[::-1] * 32).astype(np.int32)
    dst = np.zeros(256, np.float16)

    def body(ti, ub):
        ti.vgatherb(ub["d"], ub["s"], ub["o"], ub["n"], 1, 8)
    out = vec_kernel({"d": dst, "s": src, "o": offs}, body, chip="Ascend910B1", scalars={"n": ("int32", 2)})["d"]
    np.testing.assert_array_equal(out, src.reshape(16, 16)[::-1].ravel())


def test_vgatherb_errors():
    b = {"d": np.zeros(128, np.float16), "s": np.zeros(128, np.float16), "o": np.zeros(8, np.int32)}
    with raises_tik(UnsupportedOp, match="vgatherb does not support float16 on Ascend310P3"):
        vec_kernel(b, lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 1, 1, 8), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(IllegalOperand, match="dtype of offset should be 'int32' or 'uint32'"):
        vec_kernel(dict(b, o=np.zeros(16, np.int16)), lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 1, 1, 8),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="src's dtype int16 should be equal to dst's dtype float16"):
        vec_kernel(dict(b, s=np.zeros(128, np.int16)), lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 1, 1, 8),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(OutOfBounds, match="dst tensor overflow"):
        vec_kernel(b, lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 1, 2, 8), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(OutOfBounds, match="offset tensor overflow"):
        vec_kernel(dict(b, d=np.zeros(256, np.float16)),
                   lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 2, 1, 8), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(IllegalOperand, match="dst_blk_stride = 256 is outside"):
        vec_kernel(b, lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 1, 256, 8), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(IllegalOperand, match="dst_rep_stride = 4096 is outside"):
        vec_kernel(b, lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 1, 1, 4096), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(IllegalOperand, match="repeat_times = 0 is outside"):
        vec_kernel(b, lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 0, 1, 8), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(Misaligned, match="32"):
        vec_kernel(b, lambda ti, ub: ti.vgatherb(ub["d"][8], ub["s"], ub["o"], 1, 1, 0), chip="Ascend910B1",
                   build_only=True)
    odd = dict(b, o=np.r_[np.zeros(7, np.int32), 48].astype(np.int32))
    with raises_tik(Misaligned, match="block 7 of repeat 0 gathers from byte offset 48, which is not a multiple of 32"):
        vec_kernel(odd, lambda ti, ub: ti.vgatherb(ub["d"], ub["s"], ub["o"], 1, 1, 8), chip="Ascend910B1")


# ----------------------------------------------------------------------------- left out on purpose


@pytest.mark.parametrize("name,args,why", [
    ("vpadding", lambda ub: (128, 0, False, ub["d"], ub["s"], 1, 1, 1, 8, 8), "how many elements of a 32-byte block"),
    ("vcbd", lambda ub: (64, ub["h"], ub["w"], 1, 1, 1, 4, 8), "saturate or wrap"),
    ("vbi", lambda ub: (128, ub["d"], ub["s"], ub["s"], ub["s"], 1, 1, 1), "rounding order")])
def test_unmodelled_vector_instructions_say_why(name, args, why):
    b = {"d": np.zeros(128, np.float16), "s": np.zeros(128, np.float16), "h": np.zeros(64, np.int16),
         "w": np.zeros(64, np.int32)}
    with raises_tik(UnsupportedOp, match=rf"test_vector_index.py:\d+ in `tik.{name}`: .*{name} is not modelled: "
                                         rf".*{why}.*Fix: "):
        vec_kernel(b, lambda ti, ub: getattr(ti, name)(*args(ub)), chip="Ascend310P3", build_only=True)


# ----------------------------------------------------------------------------- vreducev2


@pytest.mark.parametrize("pattern", [1, 2, 5, 7])
def test_vreducev2_builtin_patterns_ignore_the_normal_mask(pattern):
    x = RNG.standard_normal(256).astype(np.float32)
    dst = np.full(256, 9, np.float32)
    out = vec_kernel({"d": dst, "x": x},
                     lambda ti, ub: ti.vreducev2(10, ub["d"], ub["x"], pattern, 4, 1, 8, 0),
                     chip="Ascend910B1")["d"]
    lane = np.arange(64)
    sel = {1: lane % 2 == 0, 2: lane % 2 == 1, 7: np.ones(64, bool)}.get(pattern, lane % 4 == pattern - 3)
    kept = x.reshape(4, 64)[:, sel].reshape(-1)
    want = dst.copy()
    want[:kept.size] = kept
    np.testing.assert_array_equal(out, want)


def test_vreducev2_normal_mode_accepts_mask_none():
    # CANN NMS ops: vreducev2(None, dst, src, 3, repeat, 1, 8, 0) gathers lane 0 of every 4
    x = np.arange(256).astype(np.float16)
    out = vec_kernel({"d": np.full(256, -1, np.float16), "x": x},
                     lambda ti, ub: ti.vreducev2(None, ub["d"], ub["x"], 3, 2, 1, 8, 0),
                     chip="Ascend910B1")["d"]
    np.testing.assert_array_equal(out[:64], x[::4])
    np.testing.assert_array_equal(out[64:], -1)


def test_vreducev2_counter_mode_needs_a_mask():
    b = {"d": np.zeros(128, np.float16), "x": np.zeros(128, np.float16)}
    with raises_tik(IllegalOperand, match="mask must be an int, Scalar or Expr, got NoneType"):
        vec_kernel(b, lambda ti, ub: ti.vreducev2(None, ub["d"], ub["x"], 1, 1, 1, 8, 0, None, "counter"),
                   chip="Ascend910B1", build_only=True)


@pytest.mark.parametrize("chip", ["Ascend910B1", "Ascend310P3"])
def test_vreduce_counter_mode_in_place_with_a_pattern_tensor(chip):
    x = np.arange(256, dtype=np.float16)
    bits = RNG.integers(0, 2, 256).astype(np.uint8)
    pat = np.packbits(bits, bitorder="little").view(np.uint16)
    if chip == "Ascend910B1":
        call = lambda ti, ub: ti.vreducev2(200, ub["x"], ub["x"], ub["p"], 1, 1, 8, 0, None, "counter")  # noqa: E731
        keep = bits[:200].astype(bool)                  # one repeat of 200 elements: 200 consecutive bits
    else:
        call = lambda ti, ub: ti.vreduce(200, ub["x"], ub["x"], ub["p"], 1, 1, 8, 0, 0, None, "counter")  # noqa: E731
        keep = np.r_[bits[:128], bits[:128]][:200].astype(bool)  # 200 in total, stride 0: the same 128 bits twice
    out = vec_kernel({"x": x, "p": pat}, call, chip=chip)["x"]
    kept = x[:200][keep]
    want = x.copy()
    want[:kept.size] = kept
    np.testing.assert_array_equal(out, want)


def _kept_count_kernel(x, pat, call, chip="Ascend910B1"):
    """Run ``call(ti, ub, n)`` (a vreduce* with ``rsvd_scalar=n``), then store ``n`` in ``c[0]``."""
    bufs = {"x": x, "p": pat, "d": np.zeros_like(x), "c": np.full(8, -7, np.int32)}

    def body(ti, ub):
        n = ti.Scalar("uint32", name="n", init_value=12345)
        call(ti, ub, n)
        ub["c"][0].set_as(n)
    out = vec_kernel(bufs, body, chip=chip)
    return out["d"], int(out["c"][0])


@settings(max_examples=25, deadline=None)
@given(count=st.integers(1, 512), seed=st.integers(0, 2 ** 16))
def test_vreducev2_counter_mode_takes_consecutive_pattern_bits_and_reports_the_kept_count(count, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(512).astype(np.float16)
    bits = rng.integers(0, 2, 512).astype(np.uint8)
    pat = np.packbits(bits, bitorder="little").view(np.uint16)
    d, n = _kept_count_kernel(x, pat, lambda ti, ub, n: ti.vreducev2(count, ub["d"], ub["x"], ub["p"], 1, 1, 8, 1,
                                                                    rsvd_scalar=n, mask_mode="counter"))
    keep = bits[:count].astype(bool)                   # CANN NMS: the vcmpv bit mask, read straight through
    assert n == int(keep.sum())
    np.testing.assert_array_equal(d[:n], x[:count][keep])


@pytest.mark.parametrize("pattern,want", [(1, 64), (2, 64), (3, 32), (7, 128)])
def test_vreducev2_rsvd_scalar_counts_the_fixed_pattern_lanes(pattern, want):
    x = np.arange(128, dtype=np.float16)
    _, n = _kept_count_kernel(x, np.zeros(16, np.uint16),
                              lambda ti, ub, n: ti.vreducev2(128, ub["d"], ub["x"], pattern, 1, 1, 8, 0,
                                                             rsvd_scalar=n))
    assert n == want


def test_vreducev2_pattern_tensor_is_checked_as_tik_sizes_it():
    x = np.zeros(512, np.float16)
    small = np.zeros(16, np.uint16)                    # 256 bits: two f16 repeats' worth
    ok = {"d": x, "x": x, "p": small}
    vec_kernel(ok, lambda ti, ub: ti.vreducev2(None, ub["d"], ub["x"], ub["p"], 2, 1, 8, 1), chip="Ascend910B1",
               build_only=True)
    vec_kernel(ok, lambda ti, ub: ti.vreducev2(None, ub["d"], ub["x"], ub["p"], 4, 1, 8, 0), chip="Ascend910B1",
               build_only=True)                         # stride 0: one repeat's bits, reused
    vec_kernel(ok, lambda ti, ub: ti.vreducev2(256, ub["d"], ub["x"], ub["p"], 1, 1, 8, 1, mask_mode="counter"),
               chip="Ascend910B1", build_only=True)
    with raises_tik(OutOfBounds, match="src1_pattern tensor overflow"):
        vec_kernel(ok, lambda ti, ub: ti.vreducev2(None, ub["d"], ub["x"], ub["p"], 3, 1, 8, 1), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(OutOfBounds, match="src1_pattern tensor overflow"):
        vec_kernel(ok, lambda ti, ub: ti.vreducev2(300, ub["d"], ub["x"], ub["p"], 1, 1, 8, 1, mask_mode="counter"),
                   chip="Ascend910B1", build_only=True)


def test_vreducev2_errors():
    b = {"d": np.zeros(128, np.float16), "x": np.zeros(128, np.float16), "p": np.zeros(16, np.int16)}
    with raises_tik(UnsupportedOp, match="vreducev2 does not support float16 on Ascend310P3"):
        vec_kernel(b, lambda ti, ub: ti.vreducev2(128, ub["d"], ub["x"], 1, 1, 1, 8, 0), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(IllegalOperand, match="src1_pattern should be uint16"):
        vec_kernel(b, lambda ti, ub: ti.vreducev2(128, ub["d"], ub["x"], ub["p"], 1, 1, 8, 0), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(IllegalOperand, match="src1_pattern = 8 is outside"):
        vec_kernel(b, lambda ti, ub: ti.vreducev2(128, ub["d"], ub["x"], 8, 1, 1, 8, 0), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(OutOfBounds, match="src0 tensor overflow"):
        vec_kernel(b, lambda ti, ub: ti.vreducev2(1, ub["d"], ub["x"], 1, 2, 1, 8, 0), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(IllegalOperand, match="rsvd_scalar dtype should be uint32, input dtype is int32"):
        vec_kernel(b, lambda ti, ub: ti.vreducev2(128, ub["d"], ub["x"], 1, 1, 1, 8, 0, ti.Scalar("int32")),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="rsvd_scalar should be a Scalar, got int"):
        vec_kernel(b, lambda ti, ub: ti.vreducev2(128, ub["d"], ub["x"], 1, 1, 1, 8, 0, 5),
                   chip="Ascend910B1", build_only=True)


# ----------------------------------------------------------------------------- vbcb


@pytest.mark.parametrize("dtype,blk,rep", [("float16", 1, 8), ("int32", 2, 17), ("uint16", 0, 9)])
def test_vbcb_broadcasts_each_element_over_a_block(dtype, blk, rep):
    dt = np.dtype(dtype)
    e = 32 // dt.itemsize
    src = (np.arange(24) * 3 + 1).astype(dt)
    n = (2 * rep + 7 * max(blk, 1) + 1) * e
    dst = np.full(n, 5, dt)
    out = vec_kernel({"d": dst, "s": np.r_[src, np.zeros((-24) % e, dt)]},
                     lambda ti, ub: ti.vbcb(ub["d"], ub["s"], 3, blk, rep), chip="Ascend910B1")["d"]
    want = dst.copy()
    for r in range(3):
        for j in range(8):
            at = (r * rep + j * max(blk, 1)) * e
            want[at:at + e] = src[8 * r + j]
    np.testing.assert_array_equal(out, want)


def test_vbcb_errors():
    b = {"d": np.zeros(128, np.float16), "s": np.zeros(32, np.float16)}
    with raises_tik(UnsupportedOp, match="vbcb does not support float16 on Ascend310P3"):
        vec_kernel(b, lambda ti, ub: ti.vbcb(ub["d"], ub["s"], 1, 1, 8), chip="Ascend310P3", build_only=True)
    with raises_tik(IllegalOperand, match="vbcb src and dst address overlapping error"):
        vec_kernel(dict(b, d=np.zeros(512, np.float16)), lambda ti, ub: ti.vbcb(ub["d"][16], ub["d"], 2, 1, 8),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="vbcb src and dst address overlapping error"):
        vec_kernel(dict(b, d=np.zeros(512, np.float16)), lambda ti, ub: ti.vbcb(ub["d"], ub["d"][112], 2, 1, 8),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(OutOfBounds, match="src tensor overflow"):
        vec_kernel(b, lambda ti, ub: ti.vbcb(ub["d"], ub["s"][16], 3, 1, 0), chip="Ascend910B1", build_only=True)
    with raises_tik(OutOfBounds, match="dst tensor overflow"):
        vec_kernel(b, lambda ti, ub: ti.vbcb(ub["d"], ub["s"], 1, 2, 8), chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="dst_blk_stride = 65536 is outside"):
        vec_kernel(b, lambda ti, ub: ti.vbcb(ub["d"], ub["s"], 1, 65536, 8), chip="Ascend910B1", build_only=True)


def test_vbcb_source_and_destination_in_one_tensor_without_overlap():
    buf = np.zeros(256, np.float16)
    buf[224:232] = np.arange(8) + 1
    out = vec_kernel({"b": buf}, lambda ti, ub: ti.vbcb(ub["b"], ub["b"][224], 1, 1, 8), chip="Ascend910B1")["b"]
    want = buf.copy()
    want[:128] = np.repeat(np.arange(8) + 1, 16)
    np.testing.assert_array_equal(out, want)


# ----------------------------------------------------------------------------- v4dtrans


@pytest.mark.parametrize("dtype,chw2hwc,m,c", [("float32", False, 256, 4), ("float16", True, 48, 3),
                                               ("int8", False, 32, 5), ("uint32", True, 7, 9)])
def test_v4dtrans_transposes_chw_and_hwc(dtype, chw2hwc, m, c):
    dt = np.dtype(dtype)
    e = 32 // dt.itemsize
    n = -(-m * c // e) * e
    src = (np.arange(n) % 97 + 1).astype(dt)
    dst = np.zeros(n, dt)
    out = vec_kernel({"d": dst, "s": src}, lambda ti, ub: ti.v4dtrans(chw2hwc, ub["d"], ub["s"], m, c),
                     chip="Ascend310P3")["d"]
    x = src[:m * c]
    want = dst.copy()
    want[:m * c] = (x.reshape(c, m).T if chw2hwc else x.reshape(m, c).T).reshape(-1)
    np.testing.assert_array_equal(out, want)


def test_v4dtrans_errors():
    b = {"d": np.zeros(64, np.float16), "s": np.zeros(64, np.float16)}
    with raises_tik(UnsupportedOp, match="v4dtrans does not support float16 on Ascend910B1"):
        vec_kernel(b, lambda ti, ub: ti.v4dtrans(True, ub["d"], ub["s"], 16, 4), chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="m_len = 4096 is outside"):
        vec_kernel(b, lambda ti, ub: ti.v4dtrans(True, ub["d"], ub["s"], 4096, 1), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(IllegalOperand, match="chw2hwc must be a bool"):
        vec_kernel(b, lambda ti, ub: ti.v4dtrans(1, ub["d"], ub["s"], 16, 4), chip="Ascend310P3", build_only=True)
    with raises_tik(OutOfBounds, match="dst tensor overflow"):
        vec_kernel(b, lambda ti, ub: ti.v4dtrans(False, ub["d"][32], ub["s"], 16, 3), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(OutOfBounds, match="src tensor overflow"):
        vec_kernel(b, lambda ti, ub: ti.v4dtrans(False, ub["d"], ub["s"][32], 16, 3), chip="Ascend310P3",
                   build_only=True)


# ----------------------------------------------------------------------------- counter mode: per repeat or in total

def _gather_reference(x, count, repeat, rep, blk, par, bits=None, s1=0, pattern=None):
    """Counter-mode gather on a per-repeat chip (tik_vector.md §5c): repeat ``rr`` takes ``count`` elements,
    element ``i`` in block ``i // epb`` (``blk`` blocks apart) from ``rr * rep`` blocks, with pattern bit
    ``rr * s1 * par + i`` (or the fixed pattern's lane ``i % par``)."""
    epb = 32 // x.itemsize
    out = []
    for rr in range(repeat):
        for i in range(count):
            if bits is not None:
                take = bits[rr * s1 * par + i]
            else:
                lane = i % par
                take = {1: lane % 2 == 0, 2: lane % 2 == 1, 7: True}.get(pattern, lane % 4 == pattern - 3)
            if take:
                out.append(x[rr * rep * epb + (i // epb) * blk * epb + i % epb])
    return np.array(out, x.dtype)


@settings(max_examples=30, deadline=None)
@given(dt=st.sampled_from([np.float16, np.float32]), count=st.integers(1, 300), repeat=st.integers(1, 4),
       rep=st.integers(0, 12), blk=st.integers(1, 2), s1=st.integers(0, 2), fixed=st.sampled_from([None, 1, 3, 7]),
       seed=st.integers(0, 2 ** 16))
def test_vreducev2_counter_mode_runs_count_elements_per_repeat_on_910b(dt, count, repeat, rep, blk, s1, fixed, seed):
    """Ascend C GatherMask, Atlas A2/A3: counter mode runs ``repeat_times`` repeats of ``mask`` elements each."""
    rng = np.random.default_rng(seed)
    par = 256 // np.dtype(dt).itemsize
    n_src = 4096 // np.dtype(dt).itemsize
    x = (rng.permutation(n_src) % 2000).astype(dt)
    bits = rng.integers(0, 2, 2048).astype(np.uint8)
    pat = np.packbits(bits, bitorder="little").view(np.uint16 if dt == np.float16 else np.uint32)
    d0 = np.full(2 * n_src, -3, dt)          # room for every kept element (up to 300 x 4 with pattern 7)
    bufs = {"d": d0, "x": x, "p": pat, "c": np.full(8, -7, np.int32)}

    def body(ti, ub):
        n = ti.Scalar("uint32", name="n", init_value=12345)
        src1 = fixed if fixed is not None else ub["p"]
        ti.vreducev2(count, ub["d"], ub["x"], src1, repeat, blk, rep, 0 if fixed is not None else s1,
                     rsvd_scalar=n, mask_mode="counter")
        ub["c"][0].set_as(n)
    out = vec_kernel(bufs, body, chip="Ascend910B1")
    want = _gather_reference(x, count, repeat, rep, blk, par, None if fixed is not None else bits, s1, fixed)
    assert int(out["c"][0]) == want.size
    np.testing.assert_array_equal(out["d"][:want.size], want)
    np.testing.assert_array_equal(out["d"][want.size:], d0[want.size:])


def test_vreduce_counter_mode_ignores_the_repeat_count_on_310p():
    """Ascend C GatherMask "configuration 2" (v200): ``mask`` elements in total, repeat_times ignored; CANN's YOLO
    detection-output op passes the repeats covering the chunk and reads RSVD_CNT elements."""
    x = np.arange(256, dtype=np.float16)
    bufs = {"d": np.full(256, -3, np.float16), "x": x, "c": np.full(8, -7, np.int32)}

    def body(ti, ub):
        n = ti.Scalar("uint32", name="n", init_value=12345)
        ti.vreduce(100, ub["d"], ub["x"], 2, 2, 1, 8, 0, 0, n, "counter")     # odd lanes of 100 elements
        ub["c"][0].set_as(n)
    out = vec_kernel(bufs, body, chip="Ascend310P3")
    assert int(out["c"][0]) == 50
    np.testing.assert_array_equal(out["d"][:50], x[1:100:2])
    np.testing.assert_array_equal(out["d"][50:], -3)


def test_vreducev2_counter_mode_per_repeat_source_extent_is_checked_at_trace_time():
    b = {"d": np.zeros(512, np.float16), "x": np.zeros(256, np.float16)}
    # 3 repeats of 128 elements 8 blocks apart read 384 elements of a 256-element tensor
    with raises_tik(OutOfBounds, match="src0 tensor overflow, expected elements nums: 384, actual elements nums: 256"):
        vec_kernel(b, lambda ti, ub: ti.vreducev2(128, ub["d"], ub["x"], 7, 3, 1, 8, 0, mask_mode="counter"),
                   chip="Ascend910B1", build_only=True)
    # the same call with count in total (v200 vreduce) reads 128 elements: fine
    vec_kernel(b, lambda ti, ub: ti.vreduce(128, ub["d"], ub["x"], 1, 3, 1, 8, 0, 0, None, "counter"),
               chip="Ascend310P3", build_only=True)


def test_vreduce_counter_mode_with_stride_unit_is_refused_where_it_runs_per_repeat():
    b = {"d": np.zeros(256, np.float16), "x": np.zeros(256, np.float16)}
    with raises_tik(UnsupportedOp, match="stride_unit 1 with mask_mode='counter' is not modelled on Ascend910B1"):
        vec_kernel(b, lambda ti, ub: ti.vreduce(128, ub["d"], ub["x"], 1, 1, 1, 8, 0, 1, None, "counter"),
                   chip="Ascend910B1", build_only=True)


def _tiling_key_kernel(key: int, chip: str = "Ascend310P3"):
    """A dynamic kernel whose tiling key 1 would use vbi (not modelled) and key 0 a modelled vadds,
    as CANN resize_bilinear_v2 does (its vbi path is one of three tiling keys)."""
    b = {"d": np.full(128, 7, np.float16), "s": np.arange(128).astype(np.float16)}

    def body(ti, ub):
        with ti.if_scope(ub["key"] == 1):
            ti.vbi(128, ub["d"], ub["s"], ub["s"], ub["s"], 1, 1, 1)
        with ti.else_scope():
            ti.vadds(128, ub["d"], ub["s"], 2.0, 1, 1, 1, 8, 8)
    return vec_kernel(b, body, chip=chip, scalars={"key": ("int32", key)})


def test_unmodelled_instruction_in_an_untaken_branch_does_not_stop_the_kernel():
    # before: tracing the vbi branch raised, so no tiling key of the kernel could run
    out = _tiling_key_kernel(0)
    np.testing.assert_array_equal(out["d"], np.arange(128).astype(np.float16) + np.float16(2))


def test_unmodelled_instruction_raises_when_its_branch_runs():
    with raises_tik(UnsupportedOp, match=r"test_vector_index.py:\d+ in `tik.vbi`: .*tik.vbi is not modelled: "
                                         r".*rounding order.*Fix: express the interpolation"):
        _tiling_key_kernel(1)


def test_unmodelled_op_round_trips_through_pto_as():
    from pto_core import asm
    ti = _tiling_key_kernel_build()
    text = asm.print_program(ti.program)
    assert "pto.unmodelled" in text
    assert asm.print_program(asm.parse(text, source_name="k.pto")) == text


def _tiling_key_kernel_build():
    b = {"d": np.zeros(128, np.float16), "s": np.zeros(128, np.float16)}

    def body(ti, ub):
        with ti.if_scope(ub["key"] == 1):
            ti.vpadding(128, 0, False, ub["d"], ub["s"], 1, 1, 1, 8, 8)
    return vec_kernel(b, body, chip="Ascend310P3", scalars={"key": ("int32", 0)}, build_only=True)


@pytest.mark.parametrize("instr", ["vgather", "vscatter"])
@pytest.mark.parametrize("unit, rep", [(2, 128), (3, 0)])
def test_gather_scatter_stride_unit_2_3_fit_an_exact_strided_tensor(instr, unit, rep):
    """GS_CONTIGUOUS_BLK also sizes the trace-time overflow check: 128 f16 lanes under stride_unit 2/3 touch
    128 elements (was: counted with a 1-element block gap, 'expected elements nums: 135', a legal kernel refused)."""
    vals = np.arange(128).astype(np.float16)
    offs = (np.arange(128)[::-1] * 2).astype(np.int32)
    other = np.full(128, -1, np.float16)
    if instr == "vgather":
        bufs = {"d": other, "s": vals, "o": offs}
        body = lambda ti, ub: ti.vgather(128, ub["d"], ub["s"], ub["o"], 1, rep, 0, unit)    # noqa: E731
    else:
        bufs = {"d": other, "s": vals, "o": offs}
        body = lambda ti, ub: ti.vscatter(128, ub["d"], ub["s"], ub["o"], 1, rep, 0, unit)   # noqa: E731
    out = vec_kernel(bufs, body, chip="Ascend310P3")["d"]
    np.testing.assert_array_equal(out, vals[::-1])


@pytest.mark.parametrize("chip", ["Ascend310P3", "Ascend910B1"])
def test_counter_mode_run_time_zero_gathers_and_keeps_nothing(chip):
    """COUNTER_ZERO_AT_RUN_TIME_IS_NOOP: vgather / vreduce (and vscatter / vci / vreducev2 where the chip has
    them) with a Scalar counter of 0 read and write nothing; the reduction's kept count (rsvd_scalar) is 0."""
    x = (np.arange(256) % 37 - 11).astype(np.float16)
    d = np.full(256, 7, np.float16)
    off = (np.arange(128) * 2).astype(np.int32)
    pat = np.full(16, 0x5555, np.uint16)
    kept = np.full(8, 99, np.int32)
    p3 = chip == "Ascend310P3"

    def body(ti, ub):
        n = ub["n"]
        ti.vgather(n, ub["d"], ub["x"], ub["o"], 1, 8, mask_mode="counter")
        r = ti.Scalar("uint32", init_value=99)
        ti.vreduce(n, ub["d"][128:], ub["x"], ub["p"], 1, 1, 8, 1, rsvd_scalar=r, mask_mode="counter")
        ub["k"][0].set_as(r)
        if p3:
            ti.vscatter(n, ub["d"], ub["x"], ub["o"], 1, 8, mask_mode="counter")
            ti.vci(n, ub["d"], 1.0, 1, 1, 8, mask_mode="counter")
        else:
            r2 = ti.Scalar("uint32", init_value=99)
            ti.vreducev2(n, ub["d"][128:], ub["x"], ub["p"], 1, 1, 8, 1, rsvd_scalar=r2, mask_mode="counter")
            ub["k"][1].set_as(r2)

    bufs = {"d": d, "x": x, "o": off, "p": pat, "k": kept}
    out = vec_kernel(bufs, body, chip=chip, scalars={"n": ("int32", 0)})
    for k in ("d", "x", "o", "p"):
        np.testing.assert_array_equal(out[k], bufs[k])
    want_k = kept.copy()
    want_k[:1 if p3 else 2] = 0
    np.testing.assert_array_equal(out["k"], want_k)
    out = vec_kernel(bufs, body, chip=chip, scalars={"n": ("int32", 9)})       # the same kernel runs with 9
    assert out["k"][0] == 5 and not np.array_equal(out["d"], d)


@pytest.mark.parametrize("n, rep", [(0, 1), (5, 0)])
@pytest.mark.parametrize("instr", ["vreduce", "vreducev2"])
def test_counter_mode_reduce_no_op_does_not_check_the_dst_room(instr, n, rep):
    """A counter-mode vreduce / vreducev2 that runs 0 repeats on Ascend910B1 (counts per repeat: a Scalar
    counter of 0, or a Scalar repeat of 0) is a no-op like the normal-mode repeat 0: a run-time dst offset past
    its tensor is not refused ("keeps 0 elements but dst holds only -99744" before) and rsvd_scalar reads 0."""
    x = np.arange(256).astype(np.float16)
    d = np.full(256, 7, np.float16)

    def body(ti, ub):
        r = ti.Scalar("uint32", init_value=99)
        getattr(ti, instr)(ub["n"], ub["d"][ub["o"]:], ub["x"], ub["p"], ub["rep"], 1, 8, 1, rsvd_scalar=r,
                           mask_mode="counter")
        ub["k"][0].set_as(r)

    bufs = {"d": d, "x": x, "p": np.full(16, 0x5555, np.uint16), "k": np.full(8, 99, np.int32)}
    scalars = {"n": ("int32", n), "o": ("int32", 100000), "rep": ("int32", rep)}
    out = vec_kernel(bufs, body, chip="Ascend910B1", scalars=scalars)
    np.testing.assert_array_equal(out["d"], d)
    assert out["k"][0] == 0


@pytest.mark.parametrize("mode", ["counter", "normal"])
@pytest.mark.parametrize("instr, chip", [("vreduce", "Ascend910B1"), ("vreducev2", "Ascend910B1"),
                                         ("vreduce", "Ascend310P3")])
def test_reduce_with_dst_past_its_tensor_says_where_dst_starts(instr, chip, mode):
    """A vreduce / vreducev2 that keeps elements with a run-time dst offset past its tensor's end says how far
    past the end dst starts and names the tensor, at the user's line ("dst holds only -99744" before)."""
    x = np.arange(256).astype(np.float16)
    d = np.full(256, 7, np.float16)

    def body(ti, ub):
        r = ti.Scalar("uint32", init_value=99)
        if mode == "counter":
            getattr(ti, instr)(ub["n"], ub["d"][ub["o"]:], ub["x"], ub["p"], 1, 1, 8, 1, rsvd_scalar=r,
                               mask_mode="counter")
        else:
            getattr(ti, instr)(128, ub["d"][ub["o"]:], ub["x"], ub["p"], 1, 1, 8, 1, rsvd_scalar=r)

    bufs = {"d": d, "x": x, "p": np.full(16, 0x5555, np.uint16)}
    with raises_tik(OutOfBounds, match=r"dst starts 99744 elements past the end of tensor 'd_ub' of 256 "
                                       r"elements; the op keeps \d+ elements") as info:
        vec_kernel(bufs, body, chip=chip, scalars={"n": ("int32", 100), "o": ("int32", 100000)})
    assert "holds only" not in str(info.value) and f"{__file__}:" in str(info.value)
    assert "Fix: check the run-time dst offset" in str(info.value)
