"""load3dv2 against CANN TIK's own checks (h_cube409, found by the h_fuzz405 fuzzer):

* ``channel_size``: TIK takes ``channel_size mod C0`` in {0, 4, 8} (float16) / {0, 4, 8, 16} (8-bit); the counts
  that are neither a C0 multiple nor the float16 C04 map are refused as not modelled (`UnsupportedOp`, naming the
  value, TIK's rule and the sources), the others as illegal;
* blocks past the im2col matrix: ``round16(m_start_pt + m_extension) > Ho*Wo`` and
  ``round32B(k_start_pt + k_extension) > channel_size*filter_h*filter_w`` are refused (at the call for ints, when
  the instruction runs for TIK values), as TIK's ``check_load3dv2_m_extension`` / ``check_load3dv2_k_extension``
  do (`cube_moves.LOAD3DV2_BLOCK_INSIDE_MATRIX`). A refused call leaves the kernel usable and its tensors as they
  were."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, Misaligned, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik import cube_moves

from .helpers import raises_tik, run


def _kernel(chip, dtype, c, h, w):
    """GM map [c // C0 or 1, h, w, C0] -> L1; a UB destination prefilled from GM (checked unchanged)."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    n = max(c, 32 // np.dtype(np.int8 if dtype in ("int8", "uint8") else dtype).itemsize) * h * w
    g = ti.Tensor(dtype, (n,), name="g", scope=tik.scope_gm)
    fm = ti.Tensor(dtype, (n,), name="fm", scope=tik.scope_cbuf)
    gu = ti.Tensor(dtype, (4096,), name="gu", scope=tik.scope_gm)
    u = ti.Tensor(dtype, (4096,), name="u", scope=tik.scope_ubuf)
    out = ti.Tensor(dtype, (4096,), name="out", scope=tik.scope_gm)
    size = np.dtype(np.int8 if dtype in ("int8", "uint8") else dtype).itemsize
    ti.data_move(fm, g, 0, 1, n * size // 32, 0, 0)
    ti.data_move(u, gu, 0, 1, 4096 * size // 32, 0, 0)
    return ti, dict(g=g, fm=fm, gu=gu, u=u, out=out, n=n, size=size)


def _finish_and_check_unchanged(ti, T):
    """The kernel still builds and runs after a refused call, and UB holds what it was loaded with."""
    ti.data_move(T["out"], T["u"], 0, 1, 4096 * T["size"] // 32, 0, 0)
    ti.BuildCCE("after", [T["g"], T["gu"]], [T["out"]])
    npdt = {"float16": np.float16, "float32": np.float32, "int8": np.int8, "uint8": np.uint8}[T["u"].dtype]
    gu = (np.arange(4096) % 97 + 1).astype(npdt)
    got, = run(ti, {"g": np.ones(T["n"], npdt), "gu": gu})
    np.testing.assert_array_equal(got, gu)


# (chip, dtype, channel_size) TIK accepts but the simulator does not model
UNMODELLED = [("Ascend310P3", "float16", 8), ("Ascend310P3", "float16", 20), ("Ascend310P3", "float16", 24),
              ("Ascend610", "float16", 40), ("Ascend310P3", "int8", 4), ("Ascend310P3", "int8", 8),
              ("Ascend310P3", "uint8", 16), ("Ascend910B1", "int8", 36), ("Ascend910B1", "int8", 48),
              ("Ascend910B1", "float32", 4), ("Ascend910B1", "float32", 12)]


@pytest.mark.parametrize("chip, dtype, ch", UNMODELLED)
def test_channel_sizes_tik_accepts_but_not_modelled_are_unsupported(chip, dtype, ch):
    c0 = {"float16": 16, "float32": 8}.get(dtype, 32)
    ti, T = _kernel(chip, dtype, 64, 4, 4)
    whole = -(-ch // c0) * c0
    rems = {16: "0, 4, 8", 32: "0, 4, 8, 16", 8: "0, 4"}[c0]
    with raises_tik(UnsupportedOp, match=rf"test_tik_load3dv2_tik_checks.py:\d+ in `tik.load3dv2`: operand "
                                         rf"channel_size: channel_size {ch} \({dtype}, mod {c0} = {ch % c0}\) is a "
                                         rf"load3dv2 channel count CANN TIK accepts \(channel_size mod {c0} in "
                                         rf"\{{{rems}\}}: check_load3dv2_channel_size; Ascend C "
                                         rf"LoadData3DParamsV2.channelSize\), but the simulator does not model it.*"
                                         rf"Fix: pad the map's channels with zeros to {whole} .* "
                                         rf"channel_size={whole}"):
        ti.load3dv2(T["u"], T["fm"], [1, 1, 1, 1], 4, 4, ch, c0, 16, 0, 0, 1, 1, 3, 3, 1, 1)
    _finish_and_check_unchanged(ti, T)


@pytest.mark.parametrize("chip, dtype, ch", [("Ascend310P3", "float16", 12), ("Ascend310P3", "float16", 2),
                                             ("Ascend310P3", "int8", 12), ("Ascend310P3", "int8", 44),
                                             ("Ascend910B1", "float32", 6)])
def test_channel_sizes_tik_refuses_stay_illegal(chip, dtype, ch):
    c0 = {"float16": 16, "float32": 8}.get(dtype, 32)
    ti, T = _kernel(chip, dtype, 64, 4, 4)
    with raises_tik(IllegalOperand, match=rf"channel_size {ch} is not a load3dv2 channel count of {dtype} maps: "
                                          rf"CANN TIK takes channel_size mod {c0} in .*Fix: store the map as "
                                          rf"\[C1, H, W, {c0}\]"):
        ti.load3dv2(T["u"], T["fm"], [1, 1, 1, 1], 4, 4, ch, c0, 16, 0, 0, 1, 1, 3, 3, 1, 1)
    _finish_and_check_unchanged(ti, T)


def test_modelled_channel_sizes_still_load():
    """A C0 multiple and the float16 C04 map (channel_size 4) keep loading (values: test_tik_cube_conv.py)."""
    ti, T = _kernel("Ascend310P3", "float16", 32, 4, 4)
    ti.load3dv2(T["u"], T["fm"], [1, 1, 1, 1], 4, 4, 32, 48, 16, 0, 0, 1, 1, 3, 3, 1, 1)
    ti.load3dv2(T["u"][1024:], T["fm"], [1, 1, 1, 1], 4, 4, 4, 32, 16, 0, 0, 1, 1, 3, 3, 1, 1, False, True)
    ti.data_move(T["out"], T["u"], 0, 1, 256, 0, 0)
    ti.BuildCCE("ok", [T["g"], T["gu"]], [T["out"]])
    run(ti, {"g": np.ones(T["n"], np.float16), "gu": np.zeros(4096, np.float16)})


# ----------------------------------------------------------------------------- blocks inside the im2col matrix
# a 6 x 6 map, 3 x 3 filter, no padding: Ho*Wo = 16; with pad 1: 36 (not a multiple of 16)


@pytest.mark.parametrize("pad, ms, me, ok", [([0, 0, 0, 0], 0, 16, True), ([0, 0, 0, 0], 0, 32, False),
                                             ([0, 0, 0, 0], 16, 16, False), ([1, 1, 1, 1], 0, 32, True),
                                             ([1, 1, 1, 1], 16, 32, False), ([1, 1, 1, 1], 32, 16, False)])
def test_block_rows_past_ho_wo_are_refused_at_the_call(pad, ms, me, ok):
    ti, T = _kernel("Ascend310P3", "float16", 16, 6, 6)
    args = (T["u"], T["fm"], pad, 6, 6, 16, 16, me, 0, ms, 1, 1, 3, 3, 1, 1)
    if ok:
        ti.load3dv2(*args)
        return
    howo = 16 if pad[0] == 0 else 36
    with raises_tik(IllegalOperand, match=rf"operand m_extension: m_start_pt \+ m_extension = {ms} \+ {me} "
                                          rf"\(rounded up to 16: {ms + me}\) is past the .* = {howo} rows \(Ho\*Wo\).*"
                                          rf"Fix: end the block by row {howo // 16 * 16} .*pad_list\[3\]"):
        ti.load3dv2(*args)
    _finish_and_check_unchanged(ti, T)


@pytest.mark.parametrize("ch, kh, ks, ke, ok", [(16, 3, 128, 16, True), (16, 3, 128, 32, False),
                                                (16, 3, 144, 16, False), (4, 3, 0, 32, True),
                                                (4, 3, 0, 48, False), (4, 3, 32, 16, False), (4, 2, 0, 16, True)])
def test_block_columns_past_the_filter_are_refused_at_the_call(ch, kh, ks, ke, ok):
    """K = channel_size*filter_h*filter_w: 144 (16 channels, 3 x 3), 36 (C04, 3 x 3: its last 4 columns are out of
    load3dv2's reach, as TIK rounds the block to 32 bytes), 16 (C04, 2 x 2)."""
    ti, T = _kernel("Ascend310P3", "float16", 16, 6, 6)
    args = (T["u"], T["fm"], [1, 1, 1, 1], 6, 6, ch, ke, 16, ks, 0, 1, 1, kh, kh, 1, 1)
    if ok:
        ti.load3dv2(*args)
        return
    k = ch * kh * kh
    with raises_tik(IllegalOperand, match=rf"operand k_extension: k_start_pt \+ k_extension = {ks} \+ {ke} \(rounded "
                                          rf"up to 32 bytes: {ks + ke}\) is past the "
                                          rf"channel_size\*filter_h\*filter_w = {ch}\*{kh}\*{kh} = {k} columns.*"
                                          rf"Fix: end the block by column {k // 16 * 16}"):
        ti.load3dv2(*args)
    _finish_and_check_unchanged(ti, T)


def _map_kernel(name, load, out_elems=256):
    """A 6 x 6 float16 map (16 channels) GM -> L1; ``load(ti, u, fm)`` issues the load3dv2 into UB ``u``, whose first
    ``out_elems`` elements go to GM ``out``."""
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    g = ti.Tensor("float16", (36 * 16,), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (36 * 16,), name="fm", scope=tik.scope_cbuf)
    u = ti.Tensor("float16", (out_elems,), name="u", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (out_elems,), name="out", scope=tik.scope_gm)
    ti.data_move(fm, g, 0, 1, 36, 0, 0)
    load(ti, u, fm)
    ti.data_move(out, u, 0, 1, out_elems // 16, 0, 0)
    ti.BuildCCE(name, [g], [out])
    return ti


def _runtime_kernel(ms, ks):
    def load(ti, u, fm):
        m = ti.Scalar("int32", name="m", init_value=ms)
        k = ti.Scalar("int32", name="k", init_value=ks)
        ti.load3dv2(u, fm, [1, 1, 1, 1], 6, 6, 16, 16, 16, k, m, 1, 1, 3, 3, 1, 1)
    return _map_kernel("rt", load)


def test_run_time_blocks_are_checked_when_they_run():
    x = (np.arange(36 * 16) % 251).astype(np.float16)
    out, = run(_runtime_kernel(16, 128), {"g": x})             # rows 16..31 of 36, columns 128..143 of 144
    fm = x.reshape(6, 6, 16)
    p = np.pad(fm, ((1, 1), (1, 1), (0, 0)))
    want = np.stack([p[(16 + i) // 6 + 2, (16 + i) % 6 + 2, :] for i in range(16)])   # tap (2, 2): columns 128..143
    np.testing.assert_array_equal(out.reshape(16, 16), want)
    for ms, ks, what in ((32, 0, r"m_start_pt \+ m_extension rounded up to 16 \(at most Ho\*Wo\) of tik.load3dv2 = "
                                 r"48 is outside \[0, 36\]"),
                         (0, 144, r"k_start_pt \+ k_extension rounded up to 32 bytes \(at most channel_size\*"
                                  r"filter_h\*filter_w\) of tik.load3dv2 = 160 is outside \[0, 144\]")):
        with pytest.raises(IllegalOperand, match=what) as info:
            run(_runtime_kernel(ms, ks), {"g": x})
        assert "test_tik_load3dv2_tik_checks.py" in str(info.value)


def test_block_checks_are_the_named_choice(monkeypatch):
    """Off, the block past Ho*Wo loads as pto.img2col defines it (the raster goes on, pad values)."""
    monkeypatch.setattr(cube_moves, "LOAD3DV2_BLOCK_INSIDE_MATRIX", False)
    ti, T = _kernel("Ascend310P3", "float16", 16, 6, 6)
    ti.load3dv2(T["u"], T["fm"], [0, 0, 0, 0], 6, 6, 16, 16, 32, 0, 0, 1, 1, 3, 3, 1, 1)
    ti.load3dv2(T["u"], T["fm"], [0, 0, 0, 0], 6, 6, 16, 160, 16, 0, 0, 1, 1, 3, 3, 1, 1)


@pytest.mark.parametrize("ks,fix", [(8, "make k_start_pt a multiple of 16"),
                                    (144, "load fewer columns (k_extension) or start earlier")])
def test_run_time_block_refusals_say_what_to_change(ks, fix):
    """The run-time checks gave the generic Fix "check the value the kernel computed" for a k_start_pt that is
    not a whole fractal or a block past the matrix (review410); they now say what to change, also after a
    PTO-AS round trip (the hint is a clause of pto.assert_in_range)."""
    from pto_core import asm
    x = (np.arange(36 * 16) % 251).astype(np.float16)
    ti = _runtime_kernel(0, ks)
    with pytest.raises(IllegalOperand, match="k_start_pt") as info:
        run(ti, {"g": x})
    assert f"Fix: {fix}" in str(info.value)
    from tbe_compat.migrate import kernel_asm
    prog = asm.parse(kernel_asm(ti))
    with pytest.raises(IllegalOperand) as again:
        prog.run({"g": x})
    assert f"Fix: {fix}" in str(again.value)


def test_a_map_with_fewer_than_16_rows_gets_a_padding_fix_not_end_by_row_0():
    """Ho*Wo < 16 (6 x 6 map, 3 x 3 filter, stride 2: 2 x 2 = 4 rows): no block fits, so the Fix asks for bottom
    padding; it said 'end the block by row 0' (regress412: found by the h_fuzz405 fuzzer, seed 412)."""
    ti, T = _kernel("Ascend310P3", "float16", 16, 6, 6)
    args = (T["u"], T["fm"], [0, 0, 0, 0], 6, 6, 16, 16, 16, 0, 0, 2, 2, 3, 3, 1, 1)
    with raises_tik(IllegalOperand, match=r"operand m_extension: .* past the 2 x 2 = 4 rows \(Ho\*Wo\).*"
                                          r"Fix: Ho\*Wo = 4 is less than one 16-row fractal, so no block fits .*"
                                          r"add bottom padding \(pad_list\[3\]\) so that Ho\*Wo reaches 16"):
        ti.load3dv2(*args)
    _finish_and_check_unchanged(ti, T)


def test_a_filter_with_fewer_than_c0_columns_gets_a_channel_fix_not_end_by_column_0():
    """C04 map, 1 x 1 filter: channel_size*filter_h*filter_w = 4 < 16 columns, so no block fits; the Fix said
    'end the block by column 0' (regress412)."""
    ti, T = _kernel("Ascend310P3", "float16", 16, 6, 6)
    args = (T["u"], T["fm"], [0, 0, 0, 0], 6, 6, 4, 16, 16, 0, 0, 1, 1, 1, 1, 1, 1)
    with raises_tik(IllegalOperand, match=r"operand k_extension: .* = 4\*1\*1 = 4 columns.*"
                                          r"Fix: channel_size\*filter_h\*filter_w = 4 is less than one 32-byte "
                                          r"fractal column group \(16 columns\), so no block fits .*"
                                          r"pass channel_size = 16"):
        ti.load3dv2(*args)
    _finish_and_check_unchanged(ti, T)


def _window_kernel(h_scalar, ms_scalar, h=6):
    """A 6 x 6 float16 map under a 3 x 3 filter with dilation 4 (a 9 x 9 window): the window does not fit even the
    padded (8 x 8) map; l1_h and / or m_start_pt TIK Scalars."""
    def load(ti, u, fm):
        l1_h = ti.Scalar("int32", name="l1_h", init_value=h) if h_scalar else h
        m = ti.Scalar("int32", name="m", init_value=0) if ms_scalar else 0
        ti.load3dv2(u, fm, [1, 1, 1, 1], l1_h, 6, 16, 16, 16, 0, m, 1, 1, 3, 3, 4, 4)
    return _map_kernel("win", load)


@pytest.mark.parametrize("h_scalar, ms_scalar", [(False, True), (True, False), (True, True)])
def test_a_window_that_does_not_fit_is_reported_as_such_not_as_rows_past_ho_wo(h_scalar, ms_scalar):
    """TIK checks that the dilated filter fits the padded map (check_dilation_filter_size) before the block rows
    (check_load3dv2_m_extension). With a TIK value among l1_h / m_start_pt the row check used to run first, with a
    bound of Ho*Wo <= 0 ("m_start_pt + m_extension ... = 16 is outside [0, 0]"), blaming m_extension for a filter
    that does not fit the map (review413)."""
    x = np.ones(36 * 16, np.float16)
    with pytest.raises(IllegalOperand) as info:
        run(_window_kernel(h_scalar, ms_scalar), {"g": x})
    text = str(info.value)
    assert "m_start_pt + m_extension" not in text and "m_extension" not in text.split("Fix:")[0]
    assert "filter" in text and "test_tik_load3dv2_tik_checks.py" in text


def test_a_fitting_window_with_a_run_time_map_height_still_loads_and_checks_rows():
    """l1_h a TIK value: a window that fits loads, and rows past Ho*Wo are still refused when it runs."""
    x = (np.arange(36 * 16) % 251).astype(np.float16)
    set_current_compile_soc_info("Ascend310P3")
    for rows, ok in ((16, True), (48, False)):
        ti = tik.Tik()
        g = ti.Tensor("float16", (36 * 16,), name="g", scope=tik.scope_gm)
        fm = ti.Tensor("float16", (36 * 16,), name="fm", scope=tik.scope_cbuf)
        u = ti.Tensor("float16", (rows * 16,), name="u", scope=tik.scope_ubuf)
        out = ti.Tensor("float16", (rows * 16,), name="out", scope=tik.scope_gm)
        ti.data_move(fm, g, 0, 1, 36, 0, 0)
        l1_h = ti.Scalar("int32", name="l1_h", init_value=6)
        ti.load3dv2(u, fm, [1, 1, 1, 1], l1_h, 6, 16, 16, rows, 0, 0, 1, 1, 3, 3, 1, 1)
        ti.data_move(out, u, 0, 1, rows, 0, 0)
        ti.BuildCCE("h_rt", [g], [out])
        if ok:
            got, = run(ti, {"g": x})
            p = np.pad(x.reshape(6, 6, 16), ((1, 1), (1, 1), (0, 0)))
            np.testing.assert_array_equal(got.reshape(16, 16), np.stack([p[i // 6, i % 6, :] for i in range(16)]))
        else:
            with pytest.raises(IllegalOperand, match=r"m_start_pt \+ m_extension rounded up to 16 .* = 48 is outside "
                                                     r"\[0, 36\]"):
                run(ti, {"g": x})


def test_a_window_too_wide_for_a_map_of_run_time_height_is_reported_as_such():
    """l1_h a TIK value that fits, l1_w an int the dilated filter does not fit: the width error, not the rows
    (the row check ran with Ho*Wo = 0: "... = 16 is outside [0, 0]", review413). The width is all ints, so it is
    refused at the call, as TIK's check_dilation_filter_size does per dimension (k419: it was refused when the
    kernel ran)."""
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    g = ti.Tensor("float16", (36 * 16,), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (36 * 16,), name="fm", scope=tik.scope_cbuf)
    u = ti.Tensor("float16", (256,), name="u", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (256,), name="out", scope=tik.scope_gm)
    ti.data_move(fm, g, 0, 1, 36, 0, 0)
    l1_h = ti.Scalar("int32", name="l1_h", init_value=6)
    with raises_tik(IllegalOperand, match=r"operand l1_w: the dilated filter width \(filter_w - 1\)\*"
                                          r"dilation_filter_w \+ 1 = 10 is larger than the padded map width") as info:
        ti.load3dv2(u, fm, [0, 0, 1, 1], l1_h, 6, 16, 16, 16, 0, 0, 1, 1, 4, 3, 3, 1)  # 10-wide window, 6-wide map
    assert "m_extension" not in str(info.value)
    ti.data_move(out, u, 0, 1, 16, 0, 0)
    ti.BuildCCE("wide", [g], [out])
    run(ti, {"g": np.ones(36 * 16, np.float16)})            # the refused call left the kernel usable


def _extension_kernel(ke, me, scalars):
    def load(ti, u, fm):
        k, m = ke, me
        if scalars:
            k, m = ti.Scalar("int32", name="ke", init_value=ke), ti.Scalar("int32", name="me", init_value=me)
        ti.load3dv2(u, fm, [1, 1, 1, 1], 6, 6, 16, k, m, 0, 0, 1, 1, 3, 3, 1, 1)
    return _map_kernel("ext", load, 32 * 32)


@pytest.mark.parametrize("scalars", [False, True])
@pytest.mark.parametrize("ke,me", [(17, 32), (32, 20), (25, 17)])
def test_extensions_that_are_not_fractal_multiples_load_whole_fractals(ke, me, scalars):
    """TIK range-checks k_extension / m_extension only and rounds them up in its extent checks
    (LOAD3DV2_EXTENSIONS_ROUNDED_UP): 17 x 32, 32 x 20, 25 x 17 load the 32 x 32 block (they were refused as
    "must be a multiple of 16")."""
    x = (np.arange(36 * 16) % 251).astype(np.float16)
    want, = run(_extension_kernel(32, 32, False), {"g": x})
    got, = run(_extension_kernel(ke, me, scalars), {"g": x})
    np.testing.assert_array_equal(got, want)


def test_extension_rounding_is_the_named_choice(monkeypatch):
    monkeypatch.setattr(cube_moves, "LOAD3DV2_EXTENSIONS_ROUNDED_UP", False)
    with raises_tik(IllegalOperand, match="m_extension = 20 must be a multiple of 16"):
        _extension_kernel(32, 20, False)


@pytest.mark.parametrize("scalar", [False, True])
def test_m_start_pt_must_be_a_multiple_of_16(scalar):
    """CANN TIK's `_load3dv2_check` refuses an m_start_pt that is not a multiple of 16 ("should be multiple of
    16"); it was accepted, and with LOAD3DV2_EXTENSIONS_ROUNDED_UP its block could end past Ho*Wo although TIK's
    row check passed (review416). A TIK value is checked when the instruction runs."""
    x = (np.arange(36 * 16) % 251).astype(np.float16)
    if not scalar:
        set_current_compile_soc_info("Ascend310P3")
        ti = tik.Tik()
        fm = ti.Tensor("float16", (36 * 16,), name="fm", scope=tik.scope_cbuf)
        u = ti.Tensor("float16", (256,), name="u", scope=tik.scope_ubuf)
        with raises_tik(IllegalOperand, match="m_start_pt = 8 must be a multiple of 16"):
            ti.load3dv2(u, fm, [1, 1, 1, 1], 6, 6, 16, 16, 16, 0, 8, 1, 1, 3, 3, 1, 1)
        return
    with pytest.raises(IllegalOperand, match="m_start_pt of tik.load3dv2 = 8 is not a multiple of 16") as info:
        run(_runtime_kernel(8, 0), {"g": x})
    assert "Fix: make m_start_pt a multiple of 16" in str(info.value)


# ----------------------------------------------------------------------------- TIK values CANN TIK accepts (k419)


def _channel_kernel(ch, as_scalar, ke=16):
    """Rows 16..31, columns 128.. of a 6 x 6 map's im2col matrix (pad 1, 3 x 3 filter): channel_size an int or a
    TIK Scalar holding the same value."""
    def load(ti, u, fm):
        c = ti.Scalar("int32", name="c", init_value=ch) if as_scalar else ch
        ti.load3dv2(u, fm, [1, 1, 1, 1], 6, 6, c, ke, 16, 0 if ch != 16 else 128, 16, 1, 1, 3, 3, 1, 1)
    return _map_kernel(f"ch{ch}{as_scalar}", load, out_elems=16 * ke)


def test_a_scalar_channel_size_loads_like_the_int():
    """CANN TIK's _load3dv2_check takes channel_size as int, Scalar or Expr (its debugger checks the value with
    check_load3dv2_channel_size when the instruction runs); it was refused as IllegalOperand ("must be an
    immediate Python int")."""
    x = (np.arange(36 * 16) % 251 + 1).astype(np.float16)
    want, = run(_channel_kernel(16, False), {"g": x})
    got, = run(_channel_kernel(16, True), {"g": x})
    np.testing.assert_array_equal(got, want)
    p = np.pad(x.reshape(6, 6, 16), ((1, 1), (1, 1), (0, 0)))       # independent: tap (2, 2), rows 16..31
    np.testing.assert_array_equal(got.reshape(16, 16),
                                  np.stack([p[(16 + i) // 6 + 2, (16 + i) % 6 + 2, :] for i in range(16)]))
    c04_int, = run(_channel_kernel(4, False, ke=32), {"g": x})     # the float16 C04 map
    c04, = run(_channel_kernel(4, True, ke=32), {"g": x})
    np.testing.assert_array_equal(c04, c04_int)


@pytest.mark.parametrize("ch, cls, what", [
    (24, UnsupportedOp, r"tik.load3dv2 with a run-time channel_size that is not a multiple of 16 \(float16 map\) is "
                        r"not modelled: CANN TIK accepts it \(channel_size mod 16 in \{0, 4, 8\}.*Fix: pad the map's "
                        r"channels with zeros"),
    (12, IllegalOperand, r"channel_size of tik.load3dv2 = 12 is not a channel count CANN TIK takes \(float16 maps: "
                         r"channel_size mod 16 in \{0, 4, 8\}, check_load3dv2_channel_size\).*Fix: store the map as "
                         r"\[C1, H, W, 16\]"),
    (0, IllegalOperand, r"channel_size of tik.load3dv2 = 0 is outside \[1, 64512\]")])
def test_a_scalar_channel_size_is_checked_when_it_runs(ch, cls, what):
    """The same classes as for ints at the call: outside TIK's rule IllegalOperand, TIK-legal but not modelled
    UnsupportedOp, at the call's line."""
    with pytest.raises(cls, match=what) as info:
        run(_channel_kernel(ch, True), {"g": np.ones(36 * 16, np.float16)})
    assert "test_tik_load3dv2_tik_checks.py" in str(info.value)


@pytest.mark.parametrize("api, arg", [("load3dv2", "stride_w"), ("load3dv2", "filter_h"),
                                      ("load3dv2", "dilation_filter_w"), ("load3dv1", "stride_h"),
                                      ("load3dv1", "jump_offset"), ("load3dv1", "repeat_mode"),
                                      ("col2img", "filter_w")])
def test_tik_values_tik_accepts_but_the_lowering_needs_as_ints_are_unsupported(api, arg):
    """CANN TIK accepts int, Scalar or Expr for the window geometry (_load3dv1_load3dv2_col2img_check) and its
    debugger evaluates load3dv1's jump_offset / repeat_mode when the instruction runs; the simulator lays the walk
    out when it traces the call, so a TIK value is UnsupportedOp (cube_moves.RUN_TIME_ARGS_NEEDED_AT_TRACE) saying
    why, not IllegalOperand."""
    set_current_compile_soc_info("Ascend310P3" if api != "col2img" else "Ascend910")
    ti = tik.Tik()
    fm = ti.Tensor("float16", (36 * 16,), name="fm", scope=tik.scope_cbuf)
    u = ti.Tensor("float16", (4096,), name="u", scope=tik.scope_ubuf)
    v = ti.Scalar("int32", name="v", init_value=1)
    geo = dict(stride_w=1, stride_h=1, filter_w=3, filter_h=3, dilation_filter_w=1, dilation_filter_h=1)
    extra = dict(jump_offset=1, repeat_mode=0)
    (geo if arg in geo else extra)[arg] = v
    g = [geo[k] for k in ("stride_w", "stride_h", "filter_w", "filter_h", "dilation_filter_w", "dilation_filter_h")]
    with raises_tik(UnsupportedOp, match=rf"operand {arg}: {arg} as a TIK value \(Scalar or Expr\) is not supported: "
                                         rf"CANN TIK accepts one .*but the simulator .*when it traces the call.*"
                                         rf"Fix: pass {arg} as a Python int"):
        if api == "load3dv2":
            ti.load3dv2(u, fm, [1, 1, 1, 1], 6, 6, 16, 16, 16, 0, 0, *g)
        elif api == "load3dv1":
            ti.load3dv1(u, fm, [1, 1, 1, 1], 6, 6, 0, 0, 0, -1, -1, *g, extra["jump_offset"], extra["repeat_mode"], 1)
        else:
            ti.col2img(u, u[2048:], [1, 1, 1, 1], 6, 6, 0, 0, -1, -1, *g, 1)


def test_tik_values_tik_wants_as_immediates_stay_illegal():
    """load3dv1's _csize is an immediate in TIK too (its debugger tests it as a Python value): IllegalOperand."""
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    fm = ti.Tensor("float16", (36 * 16,), name="fm", scope=tik.scope_cbuf)
    u = ti.Tensor("float16", (4096,), name="u", scope=tik.scope_ubuf)
    v = ti.Scalar("int32", name="v", init_value=0)
    with raises_tik(IllegalOperand, match=r"_csize must be an immediate Python int"):
        ti.load3dv1(u, fm, [1, 1, 1, 1], 6, 6, 0, 0, 0, -1, -1, 1, 1, 3, 3, 1, 1, 1, 0, 1, v)


def _pad_kernel(as_scalar, pads=(1, 1, 1, 1)):
    def load(ti, u, fm):
        p = [ti.Scalar("int32", name=f"p{i}", init_value=v) for i, v in enumerate(pads)] if as_scalar else list(pads)
        ti.load3dv2(u, fm, p, 6, 6, 16, 16, 16, 128, 16, 1, 1, 3, 3, 1, 1)
    return _map_kernel(f"pad{as_scalar}", load)


def test_scalar_pads_load_like_ints_and_are_checked_when_they_run():
    """pad_list entries may be TIK values (CANN TIK's _load3dv1_load3dv2_col2img_check: int, Scalar or Expr; they
    go to FMATRIX when the instruction runs, FMATRIX_PADS_AT_RUN_TIME as for load3dv1); they were refused as "must
    be an immediate Python int". Their range and the rows past Ho*Wo they give are checked when the load runs."""
    x = (np.arange(36 * 16) % 251 + 1).astype(np.float16)
    want, = run(_pad_kernel(False), {"g": x})
    got, = run(_pad_kernel(True), {"g": x})
    np.testing.assert_array_equal(got, want)
    p = np.pad(x.reshape(6, 6, 16), ((1, 1), (1, 1), (0, 0)))
    np.testing.assert_array_equal(got.reshape(16, 16),
                                  np.stack([p[(16 + i) // 6 + 2, (16 + i) % 6 + 2, :] for i in range(16)]))
    with pytest.raises(IllegalOperand, match=r"pad_list\[2\] \(top\) of tik.load3dv2 = 300 is outside \[0, 255\]"):
        run(_pad_kernel(True, (1, 1, 300, 1)), {"g": x})
    with pytest.raises(IllegalOperand, match=r"m_start_pt \+ m_extension rounded up to 16 \(at most Ho\*Wo\) of "
                                             r"tik.load3dv2 = 32 is outside \[0, 16\]"):
        run(_pad_kernel(True, (0, 0, 0, 0)), {"g": x})


@pytest.mark.parametrize("dim, args", [("height", dict(dh=4)), ("width", dict(dw=4)),
                                       ("height", dict(h=2, pad=[1, 1, 0, 0]))])
def test_an_int_window_larger_than_the_padded_map_is_refused_at_the_call(dim, args):
    """CANN TIK's check_dilation_filter_size runs in load3dv2 itself when the values are known: the dilated filter
    must fit the padded map. All-int windows were refused only when the kernel ran (by pto.img2col)."""
    h, pad, dh, dw = args.get("h", 6), args.get("pad", [1, 1, 1, 1]), args.get("dh", 1), args.get("dw", 1)
    ti, T = _kernel("Ascend310P3", "float16", 16, 6, 6)
    name = "l1_h" if dim == "height" else "l1_w"
    span = (dh if dim == "height" else dw) * 2 + 1
    padded = (h + pad[2] + pad[3]) if dim == "height" else 6 + pad[0] + pad[1]
    with raises_tik(IllegalOperand, match=rf"test_tik_load3dv2_tik_checks.py:\d+ in `tik.load3dv2`: operand {name}: "
                                          rf"the dilated filter {dim} .* = {span} is larger than the padded map "
                                          rf"{dim} {name} \+ pad .* = {padded}.*Fix: use a map \(with its padding\) "
                                          rf"at least as large as the dilated filter"):
        ti.load3dv2(T["u"], T["fm"], pad, h, 6, 16, 16, 16, 0, 0, 1, 1, 3, 3, dw, dh)
    _finish_and_check_unchanged(ti, T)


@pytest.mark.parametrize("api, refusal", [("load3dv2", "stride"), ("load3dv2", "window"), ("load3dv1", "stride"),
                                          ("load3dv1", "jump"), ("col2img", "filter")])
def test_a_refused_call_records_nothing_its_run_time_checks_included(api, refusal):
    """A refused op changes nothing (review423): load3dv1/v2 and col2img record the run-time checks of their TIK
    values (a Scalar pad's range, a Scalar channel_size's rule) before their last trace-time refusal, and a caught
    refusal left them in the trace: here the pad Scalar is -1 at the refused call and set to 1 before the legal
    one, and the run stopped at the refused line ("pad ... = -1 is outside [0, 255]")."""
    set_current_compile_soc_info("Ascend310P3" if api != "col2img" else "Ascend910")
    ti = tik.Tik()
    g = ti.Tensor("float16", (36 * 16,), name="g", scope=tik.scope_gm)
    out = ti.Tensor("float16", (256,), name="out", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (36 * 16,), name="fm", scope=tik.scope_cbuf)
    u = ti.Tensor("float16", (4096,), name="u", scope=tik.scope_ubuf)
    src = fm if api != "col2img" else u[2048:]
    ti.data_move(fm if api != "col2img" else u[2048:], g, 0, 1, 36, 0, 0)
    p = ti.Scalar("int32", name="p", init_value=-1)
    c = ti.Scalar("int32", name="c", init_value=20)         # a run-time channel_size the simulator does not model
    s = ti.Scalar("int32", name="s", init_value=1)
    geo = [s if refusal == "stride" else 1, 1, s if refusal == "filter" else 3, 3, 1, 1]
    body = ti._builder.program.body
    n = len(body)
    with pytest.raises(UnsupportedOp if refusal != "window" else IllegalOperand):
        if api == "load3dv2":
            ti.load3dv2(u, fm, [p, 1, 1, 1], 6, 6, c if refusal == "window" else 16, 16, 16, 0, 0, *geo[:4],
                        1, 9 if refusal == "window" else 1)
        elif api == "load3dv1":
            ti.load3dv1(u, fm, [p, 1, 1, 1], 6, 6, 0, 0, 0, -1, -1, *geo, s if refusal == "jump" else 1, 0, 1)
        else:
            ti.col2img(u, src, [p, 1, 1, 1], 6, 6, 0, 0, -1, -1, *geo, 1)
    assert len(body) == n, [type(st).__name__ for st in body[n:]]
    p.set_as(1)
    if api == "col2img":
        ti.vec_dup(128, u, 0.0, 2, 8)
    else:
        ti.load3dv2(u, fm, [p, 1, 1, 1], 6, 6, 16, 16, 16, 0, 0, 1, 1, 3, 3, 1, 1)
    ti.data_move(out, u, 0, 1, 16, 0, 0)
    ti.BuildCCE("after_refusal", [g], [out])
    got, = run(ti, {"g": np.ones(36 * 16, np.float16)})
    assert got.shape == (256,)


@pytest.mark.parametrize("api", ["load2dv2", "mmad"])
def test_other_cube_calls_refused_after_their_run_time_checks_record_nothing(api):
    """The same for load2dv1/v2, mmad, broadcast_ub_to_l0c and mmad_broadcast (review423): a Scalar repeat_times /
    matrix_m is range-checked when it runs, recorded before the refusal of an 8-bit if_transpose / a misaligned
    bias_tensor (BIAS_L1_ALIGN, k419); the check stayed behind and stopped the later kernel at the refused line."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    g = ti.Tensor("float16", (256,), name="g", scope=tik.scope_gm)
    out = ti.Tensor("float16", (256,), name="out", scope=tik.scope_gm)
    u = ti.Tensor("float16", (256,), name="u", scope=tik.scope_ubuf)
    r = ti.Scalar("int32", name="r", init_value=0)           # out of range until set
    body = ti._builder.program.body
    n = len(body)
    if api == "load2dv2":
        l1 = ti.Tensor("int8", (4096,), name="l1", scope=tik.scope_cbuf)
        l0a = ti.Tensor("int8", (4096,), name="l0a", scope=tik.scope_ca)
        with pytest.raises(IllegalOperand, match="if_transpose transposes 16 x 16 fractals"):
            ti.load2dv2(l0a, l1, 0, r, 0, 1, 0, True)
    else:
        a = ti.Tensor("float16", (256,), name="a", scope=tik.scope_ca)
        b = ti.Tensor("float16", (256,), name="b", scope=tik.scope_cb)
        c = ti.Tensor("float32", (256,), name="c", scope=tik.scope_cc)
        bias = ti.Tensor("float32", (64,), name="bias", scope=tik.scope_cbuf)
        with pytest.raises(Exception, match="bias_tensor address is not 32-byte aligned"):
            ti.mmad(c, a, b, r, 16, 16, 0, bias_tensor=bias[4:])
    assert len(body) == n, [type(st).__name__ for st in body[n:]]
    r.set_as(1)
    ti.data_move(u, g, 0, 1, 16, 0, 0)
    ti.data_move(out, u, 0, 1, 16, 0, 0)
    ti.BuildCCE("after_refusal", [g], [out])
    x = np.arange(256).astype(np.float16)
    got, = run(ti, {"g": x})
    np.testing.assert_array_equal(got, x)


@pytest.mark.parametrize("api", ["data_move", "tensor_mov"])
def test_any_call_refused_after_recording_only_run_time_checks_records_nothing(api):
    """The general rule (`RUN_TIME_CHECK_OPS`, `_ApiCall`): a TIK call refused after it recorded only the run-time
    range checks of its Scalar arguments takes them out again, without a per-API snapshot. Here the L0C -> UB
    ``data_move`` / ``tensor_mov`` (Ascend910) records the check of a Scalar nburst, then refuses a misaligned UB
    destination; the check stayed behind and stopped the later, legal kernel at the refused line (review423)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    g = ti.Tensor("float16", (256,), name="g", scope=tik.scope_gm)
    out = ti.Tensor("float16", (256,), name="out", scope=tik.scope_gm)
    u = ti.Tensor("float16", (512,), name="u", scope=tik.scope_ubuf)
    c = ti.Tensor("float16", (256,), name="c", scope=tik.scope_cc)
    nb = ti.Scalar("int32", name="nb", init_value=0)          # out of range until set
    body = ti._builder.program.body
    n = len(body)
    with pytest.raises(Misaligned):
        if api == "data_move":
            ti.data_move(u[8:], c, 0, nb, 1, 0, 0)
        else:
            ti.tensor_mov(u[8:], c, "m", nb, 1, 0, 0)
    assert len(body) == n, [type(st).__name__ for st in body[n:]]
    nb.set_as(1)
    ti.data_move(u, g, 0, 1, 16, 0, 0)
    ti.data_move(out, u, 0, 1, 16, 0, 0)
    ti.BuildCCE("after_refusal", [g], [out])
    x = np.arange(256).astype(np.float16)
    got, = run(ti, {"g": x})
    np.testing.assert_array_equal(got, x)
