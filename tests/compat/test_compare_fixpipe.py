"""tbe_compat.fixpipe_compare (tik-compare-fixpipe): element-wise metrics (against per-element references),
per-call comparisons of
real kernels (equal, and with a deliberately injected difference in the model or in the lowering), the
first-mismatch report, generated and file feeds, scripts that only build kernels, errors."""
import json
import os
import struct

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from pto_core.errors import UnknownName
from tbe_compat import compare as CMP
from tbe_compat import fixpipe_compare as C
from tbe_compat import legacy_fixpipe as LF
from tbe_compat.tik import registry

from compare_scripts import BUILD_ONLY

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))


# ============================================================================= metrics

def _ulp_ref(a, b, fmt):
    """Per-element reference: ordered-code distance from struct-packed bits (independent of numpy views)."""
    code, nbits = {"e": ("<H", 16), "f": ("<I", 32)}[fmt]
    pack = {"e": "<e", "f": "<f"}[fmt]

    def ordinal(x):
        u = struct.unpack(code, struct.pack(pack, x))[0]
        mag = u & ((1 << (nbits - 1)) - 1)
        return -mag if u >> (nbits - 1) else mag
    out = []
    for x, y in zip(a, b):
        if np.isnan(x) and np.isnan(y):
            out.append(0.0)
        elif np.isnan(x) or np.isnan(y):
            out.append(np.inf)
        else:
            out.append(float(abs(ordinal(float(x)) - ordinal(float(y)))))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=40), st.lists(st.integers(0, 0xFFFF), min_size=40,
                                                                           max_size=40))
def test_diff_values_of_f16_bit_patterns_match_a_struct_reference(bits_a, bits_b):
    a = np.array(bits_a, np.uint16).view(np.float16)
    b = np.array(bits_b[:len(bits_a)], np.uint16).view(np.float16)
    ref = _ulp_ref(a, b, "e")
    d = C.diff_values(a, b)
    same = [(x.view(np.uint16) == y.view(np.uint16)) or (np.isnan(x) and np.isnan(y)) for x, y in zip(a, b)]
    assert d.mismatches == same.count(False) and d.elements == len(a)
    assert d.first == (same.index(False) if False in same else None)
    assert d.nan_mismatches == sum(1 for x, y, s in zip(a, b, same) if not s and np.isnan(x) != np.isnan(y))
    assert d.max_ulp_diff == max([u for u, s in zip(ref, same) if not s], default=0.0)
    assert d.mask.tolist() == [not s for s in same]


def test_diff_values_special_cases_f32_and_int():
    a = np.array([0.0, 1.0, np.nan, np.inf, 3.4028235e38, 2.0, -np.inf], np.float32)
    b = np.array([-0.0, np.nextafter(np.float32(1), np.float32(2)), np.nan, np.inf, np.inf, np.nan, np.inf],
                 np.float32)
    d = C.diff_values(a, b)
    assert d.mask.tolist() == [True, True, False, False, True, True, True]
    assert d.mismatches == 5 and d.nan_mismatches == 1 and d.first == 0
    assert d.max_abs_diff == np.inf and d.max_ulp_diff == np.inf
    assert CMP.ulp_distance(a, b)[[0, 1, 4]].tolist() == [0.0, 1.0, 1.0]   # +-0: 0 ulp; max -> inf: 1 ulp
    i = C.diff_values(np.array([5, -3, 7], np.int32), np.array([5, 4, 7], np.int32))
    assert (i.mismatches, i.max_abs_diff, i.max_ulp_diff, i.first) == (1, 7.0, 7.0, 1)
    bf = C.diff_values(np.array([1.0, 2.0], ml_dtypes.bfloat16), np.array([1.0078125, 2.0], ml_dtypes.bfloat16))
    assert (bf.mismatches, bf.max_ulp_diff, bf.first) == (1, 1.0, 0)
    with pytest.raises(ValueError, match="equal shapes and dtypes"):
        C.diff_values(np.zeros(3, np.float16), np.zeros(3, np.float32))


# ============================================================================= kernels

def _deq_kernel(chip="Ascend310", scale=0.3, relu=False, loop=1):
    """int8 matmul -> s32 L0C -> fixpipe int322fp16 (immediate scale) inside a for_range of ``loop``."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    a_gm = ti.Tensor("int8", (1, 32, 32), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("int8", (1, 32, 32), name="b_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (loop, 2, 20, 16), name="out", scope=tik.scope_gm)
    a = ti.Tensor("int8", (1, 32, 32), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("int8", (1, 32, 32), name="b", scope=tik.scope_cbuf)
    c = ti.Tensor("int32", (2, 32, 16), name="c", scope=tik.scope_cbuf_out)
    ti.data_move(a, a_gm, 0, 1, 32, 0, 0)
    ti.data_move(b, b_gm, 0, 1, 32, 0, 0)
    ti.matmul(c, a, b, 20, 32, 32)
    with ti.for_range(0, loop) as i:
        ti.fixpipe(out[i, 0, 0, 0], c, 2, 20 * 16 * 4 // 32, 0, 0,
                   extend_params={"quantize_params": {"mode": "int322fp16", "mode_param": scale}})
    ti.BuildCCE(kernel_name="deq_kernel", inputs=[a_gm, b_gm], outputs=[out])
    return ti


def _deq_feed(seed=3):
    rng = np.random.default_rng(seed)
    return {"a_gm": rng.integers(-128, 128, (1, 32, 32)).astype(np.int8),
            "b_gm": rng.integers(-128, 128, (1, 32, 32)).astype(np.int8)}


def test_the_fixpipe_api_is_importable_from_tbe_compat_compare():
    from tbe_compat.compare import compare_script, sweep, watch_kernel
    assert compare_script is C.compare_script and watch_kernel is C.watch_kernel and sweep is C.sweep
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        CMP.nope


def test_compare_kernel_equal_with_loop_runs_and_structured_result():
    ti = _deq_kernel(loop=3)
    res = C.compare_kernel(ti, _deq_feed())
    c, = res.comparisons
    assert c.equal and c.runs == 3 and c.elements == 3 * 2 * 20 * 16 and c.mismatches == 0
    assert (c.kernel, c.chip, c.lowering, c.shape) == ("deq_kernel", "Ascend310", "fixpipe", (2, 20, 16))
    assert (c.src_dtype, c.dst_dtype, c.quant, c.relu, c.add) == ("int32", "float16", "int322fp16 (immediate 0.3)",
                                                                   False, "none")
    assert c.site == f"{__file__}:{_line_of('ti.fixpipe(out[i, 0, 0, 0]')}"
    assert res.exit_status == 0 and res.kernels[0].how == "feed file"
    d = c.to_dict()
    assert json.loads(json.dumps(d))["first_mismatch"] is None and d["equal"] is True


def test_a_reserved_src_stride_is_noted_once():
    from tbe import tik
    ti = tik.Tik()
    gm = ti.Tensor("int32", (1024,), name="g", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (1024,), name="ub", scope=tik.scope_ubuf)
    l0c = ti.Tensor("int32", (2, 32, 16), name="l0c", scope=tik.scope_cbuf_out)
    dst = ti.Tensor("float16", (2, 16, 16), name="dst", scope=tik.scope_gm)
    ti.data_move(ub, gm, 0, 1, 128, 0, 0)
    ti.data_move(l0c, ub, 0, 1, 4, 0, 0)
    ti.fixpipe(dst, l0c, 2, 32, 0, 1, extend_params={"quantize_params": {"mode": "int322fp16", "mode_param": 0.5}})
    ti.BuildCCE(kernel_name="stride", inputs=[gm], outputs=[dst])
    res = C.compare_kernel(ti, {"g": np.arange(1024, dtype=np.int32) - 512})
    c, = res.comparisons
    assert c.equal and c.elements == 2 * 16 * 16
    assert [n for n in c.notes if "src_stride" in n] == [
        "src_stride=1 is documented as reserved ('to ensure data accuracy, pass 0'); modelled as a gap of "
        "1*256 elements between src blocks"]


def _line_of(text):
    with open(__file__) as f:
        return next(n for n, line in enumerate(f, 1) if text in line and "_line_of" not in line)


def test_a_difference_injected_into_the_legacy_model_is_reported_with_its_first_mismatch(monkeypatch):
    ti = _deq_kernel(loop=2)
    real = LF.deq_int32_to_fp16

    def off_by_one_ulp(x, scale, mode):
        y = real(x, scale, mode)
        y.reshape(-1)[37] = np.nextafter(y.reshape(-1)[37], np.float16(np.inf))
        return y
    monkeypatch.setattr(LF, "deq_int32_to_fp16", off_by_one_ulp)
    res = C.compare_kernel(ti, _deq_feed())
    c, = res.comparisons
    assert not c.equal and c.mismatches == 2 and c.max_ulp_diff == 1.0 and res.exit_status == 1
    fm = c.first_mismatch
    # element 37 of run 0 (i = 0): block 1 (37 // (20*16) = 0 -> block 0, row 2, lane 5) of out[0]
    assert (fm.index, fm.multi_index, fm.run, fm.core, fm.loops) == (37, (0, 0, 2, 5), 0, 0, (("i", 0),))
    out = ti.tikdb.start_debug(_deq_feed(), interactive=False)[0]
    assert fm.new == float(out[0, 0, 2, 5])
    assert fm.legacy == float(np.nextafter(out[0, 0, 2, 5], np.float16(np.inf)))
    assert fm.legacy_bits == f"0x{int(np.float16(fm.legacy).view(np.uint16)):04x}"
    assert "legacy" in fm.describe() and "i=0" in fm.describe()


def test_a_difference_injected_into_the_lowering_is_found(monkeypatch):
    """A lowering that passes the scale as an f32 (FP19-truncated) instead of its float16 value."""
    from tbe_compat.tik import cube_fixpipe
    real = cube_fixpipe.FixpipeAPI._fixpipe_clauses

    def fp19_scale(self, a):
        cl = real(self, a)
        if a.mode == "int322fp16":
            cl["pre_quant"] = (float(a.scale), {"mode": "deqf16_scalar"})
        return cl
    monkeypatch.setattr(cube_fixpipe.FixpipeAPI, "_fixpipe_clauses", fp19_scale)
    res = C.compare_kernel(_deq_kernel(scale=0.3), _deq_feed())
    c, = res.comparisons
    assert c.mismatches > 0 and not c.errors and res.exit_status == 1
    text = C.format_comparisons(res, "table")
    assert "DIFFERENCES: 1 of 1 fixpipe call site differs" in text and "legacy" in text


def test_generated_inputs_are_deterministic_and_reported():
    ti = _deq_kernel()
    f1, made = C.generated_feed(ti, seed=5)
    f2, _ = C.generated_feed(ti, seed=5)
    assert made == ["a_gm", "b_gm"] and all(np.array_equal(f1[k], f2[k]) for k in f1)
    assert f1["a_gm"].dtype == np.int8 and f1["a_gm"].shape == (1, 32, 32)
    assert not np.array_equal(f1["a_gm"], C.generated_feed(ti, seed=6)[0]["a_gm"])
    res = C.compare_kernel(ti, None, seed=5)
    assert res.exit_status == 0 and res.kernels[0].how == "generated inputs (seed 5)"
    assert any("default_rng(5)" in n for n in res.notes)


def test_input_scalars_cannot_be_generated():
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    ti.BuildCCE(kernel_name="with_scalar", inputs=[x, n], outputs=[x])
    with pytest.raises(UnknownName, match="InputScalar 'n'") as ei:
        C.generated_feed(ti)
    assert ei.value.operand == "n" and "--feed" in ei.value.hint
    feed, made = C.generated_feed(ti, given={"n": 3})
    assert feed["n"] == 3 and made == ["x"]


# ============================================================================= scripts



def test_script_that_only_builds_is_run_with_the_feed_file(tmp_path, capsys):
    script = tmp_path / "build_only.py"
    script.write_text(BUILD_ONLY)
    rng = np.random.default_rng(0)
    feed = {"a_gm": rng.standard_normal((2, 16, 16)).astype(np.float16),
            "b_gm": rng.standard_normal((2, 32, 16)).astype(np.float16), "unused": np.zeros(2)}
    np.savez(tmp_path / "in.npz", **feed)
    res = C.compare_script(str(script), feed=C.load_feed(str(tmp_path / "in.npz")))
    assert capsys.readouterr().out == "built\n"
    c, = res.comparisons
    assert c.equal and c.runs == 1 and c.relu and c.lowering == "vector" and res.exit_status == 0
    line = next(i for i, t in enumerate(BUILD_ONLY.splitlines(), 1) if "ti.fixpipe(" in t)
    assert c.site == f"{script}:{line}"
    assert res.kernels[0].how == "feed file" and any("not used by any kernel: unused" in n for n in res.notes)


def test_script_errors_unknown_kernel_and_nothing_compared(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("raise ValueError('boom')\n")
    res = C.compare_script(str(bad))
    assert res.exit_status == 3 and "ValueError: boom" in res.script_error
    assert "ERROR: ValueError: boom" in C.format_comparisons(res)
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    res = C.compare_script(str(empty))
    assert res.exit_status == 4 and "nothing compared" in C.format_comparisons(res)
    script = tmp_path / "b.py"
    script.write_text(BUILD_ONLY)
    with pytest.raises(UnknownName, match="no kernel named 'nope'") as ei:
        C.compare_script(str(script), kernel="nope")
    assert "built_only" in ei.value.limit
    registry.clear()


def test_examples_with_fixpipe_compare_equal():
    for name, sites, runs in (("tik_matmul_tiled.py", 1, 2), ("tik_conv2d_fixpipe.py", 2, 2),
                              ("migrate_conv2d_fixpipe.py", 2, 2)):
        res = C.compare_script(os.path.join(ROOT, "examples", name))
        assert res.exit_status == 0, C.format_comparisons(res)
        assert len(res.comparisons) == sites and sum(c.runs for c in res.comparisons) == runs
        assert all(c.equal for c in res.comparisons) and res.kernels[0].how == "by the script"


def test_formats_of_a_script_comparison(tmp_path):
    res = C.compare_kernel(_deq_kernel(), _deq_feed())
    table = C.format_comparisons(res, "table")
    assert any(line.startswith("| call site") for line in table.splitlines())
    assert "OK: 1 fixpipe call site (1 execution) matches the legacy model bit for bit" in table
    assert "note (test_compare_fixpipe.py:" in table and "rounded (nearest-even) to 0.300048828125" in table
    md = C.format_comparisons(res, "md")
    assert "|:--" in md and md.splitlines()[0].startswith("* kernel deq_kernel")
    csv_text = C.format_comparisons(res, "csv")
    head, row = csv_text.splitlines()
    assert head.split(",")[:3] == ["call site", "kernel", "runs"] and ",deq_kernel,1," in row
    doc = json.loads(C.format_comparisons(res, "json"))
    assert doc["exit_status"] == 0 and doc["comparisons"][0]["quant"] == "int322fp16 (immediate 0.3)"
    assert set(doc["comparisons"][0]) >= {"site", "shape", "max_ulp_diff", "first_mismatch", "mismatches"}
    with pytest.raises(UnknownName, match="unknown format"):
        C.format_comparisons(res, "xml")


def test_a_script_running_its_kernel_on_several_chips_gets_a_chip_column():
    """h_author276: a script that runs the same kernel on Ascend310 and Ascend910A gave two identical rows
    (no chip in the table or csv), a verdict counting them as two call sites, and the note's call site twice."""
    runs = [C.compare_kernel(_deq_kernel(chip=chip), _deq_feed()) for chip in ("Ascend310", "Ascend910A")]
    res = C.ScriptComparison(script="", comparisons=[c for r in runs for c in r.comparisons],
                             kernels=[k for r in runs for k in r.kernels])
    table = C.format_comparisons(res, "table")
    head = next(line for line in table.splitlines() if line.startswith("| call site"))
    assert [h.strip() for h in head.strip("|").split("|")][:3] == ["call site", "kernel", "chip"]
    assert any("| Ascend310 " in line for line in table.splitlines())
    assert any("| Ascend910A " in line for line in table.splitlines())
    assert "OK: all 2 fixpipe (call site, chip) rows [1 call site on 2 chips] (2 executions) match" in table
    site = os.path.basename(res.comparisons[0].site)
    assert f"note ({site}): " in table and f"{site}, {site}" not in table
    csv_head, *rows = C.format_comparisons(res, "csv").splitlines()
    assert csv_head.split(",")[:3] == ["call site", "kernel", "chip"]
    assert sorted(r.split(",")[2] for r in rows) == ["Ascend310", "Ascend910A"]
    one = C.format_comparisons(runs[0], "csv").splitlines()[0]     # one chip: the columns as before
    assert one.split(",")[:3] == ["call site", "kernel", "runs"]


def test_mismatch_record_names_nested_loops_and_serialises():
    m = C.Mismatch(7, (0, 7), 1.0, float("nan"), "0x3c00", "0x7e00", run=2, core=1, loops=(("i", 0), ("i", 3)))
    d = m.to_dict()
    assert d["loops"] == {"i": 0, "i'": 3} and d["new"] == "nan" and json.loads(json.dumps(d))["multi_index"] == [0, 7]
    assert m.describe() == "[0, 7] (flat 7, run 2, core 1, i=0, i'=3): legacy 1.0 (0x3c00) vs new nan (0x7e00)"


@pytest.mark.parametrize("chip", ["Ascend910A", "Ascend910B1"])
def test_atomic_add_fixpipe_compares_old_plus_value(chip):
    """set_atomic_add(1) (float32): the second fixpipe adds onto the first's result."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (1, 16, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (1, 16, 16), name="b_gm", scope=tik.scope_gm)
    out = ti.Tensor("float32", (1, 16, 16), name="out", scope=tik.scope_gm, is_atomic_add=True)
    a = ti.Tensor("float16", (1, 16, 16), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("float16", (1, 16, 16), name="b", scope=tik.scope_cbuf)
    c = ti.Tensor("float32", (1, 16, 16), name="c", scope=tik.scope_cbuf_out)
    ti.data_move(a, a_gm, 0, 1, 16, 0, 0)
    ti.data_move(b, b_gm, 0, 1, 16, 0, 0)
    ti.matmul(c, a, b, 16, 16, 16)
    ti.set_atomic_add(1)
    for _ in range(2):
        ti.fixpipe(out, c, 1, 32, 0, 0)
    ti.set_atomic_add(0)
    ti.BuildCCE(kernel_name="atomic_fixpipe", inputs=[a_gm, b_gm], outputs=[out])
    res = C.compare_kernel(ti, seed=1)
    assert [c.runs for c in res.comparisons] == [2] and res.exit_status == 0, C.format_comparisons(res)
    c, = res.comparisons
    assert any("set_atomic_add" in n for n in c.notes)


def test_compare_kernel_leaves_the_callers_feed_arrays_alone():
    """A kernel that stores to a GM input (atomic-add accumulator listed in inputs and outputs):
    compare_kernel runs it on copies, so the caller's array keeps its data and a second comparison
    sees the same inputs."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (1, 16, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (1, 16, 16), name="b_gm", scope=tik.scope_gm)
    c_gm = ti.Tensor("float32", (1, 16, 16), name="c_gm", scope=tik.scope_gm)
    a = ti.Tensor("float16", (1, 16, 16), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("float16", (1, 16, 16), name="b", scope=tik.scope_cbuf)
    c = ti.Tensor("float32", (1, 16, 16), name="c", scope=tik.scope_cbuf_out)
    ti.data_move(a, a_gm, 0, 1, 16, 0, 0)
    ti.data_move(b, b_gm, 0, 1, 16, 0, 0)
    ti.matmul(c, a, b, 16, 16, 16)
    ti.set_atomic_add(1)
    ti.fixpipe(c_gm, c, 1, 32, 0, 0)
    ti.set_atomic_add(0)
    ti.BuildCCE(kernel_name="acc_into_input", inputs=[a_gm, b_gm, c_gm], outputs=[c_gm])
    feed = {"a_gm": np.ones((1, 16, 16), np.float16), "b_gm": np.ones((1, 16, 16), np.float16),
            "c_gm": np.full((1, 16, 16), 100, np.float32)}
    for _ in range(2):
        res = C.compare_kernel(ti, feed)
        assert res.exit_status == 0, C.format_comparisons(res)
        assert (feed["c_gm"] == 100).all()


MIGRATED = '''
import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from pto_core import pto
set_current_compile_soc_info("Ascend910B1")
ti = tik.Tik()
a_gm = ti.Tensor("int8", (1, 32, 32), name="a_gm", scope=tik.scope_gm)
b_gm = ti.Tensor("int8", (1, 32, 32), name="b_gm", scope=tik.scope_gm)
out = ti.Tensor("float16", (2, 32, 16), name="out", scope=tik.scope_gm)
a = ti.Tensor("int8", (1, 32, 32), name="a", scope=tik.scope_cbuf)
b = ti.Tensor("int8", (1, 32, 32), name="b", scope=tik.scope_cbuf)
c = ti.Tensor("int32", (2, 32, 16), name="c", scope=tik.scope_cbuf_out)
ti.data_move(a, a_gm, 0, 1, 32, 0, 0)
ti.data_move(b, b_gm, 0, 1, 32, 0, 0)
ti.matmul(c, a, b, 32, 32, 32)
for half in range(2):                 # one site, traced twice: named once
    pto.mte_l0c_gm(c[half, 0, 0].pto_ptr(), out[half, 0, 0].pto_ptr(), 32, 16, 32, 512, 0, 0,
                   pre_quant=(np.float16(0.25), {"mode": "deqf16_scalar"}))
ti.BuildCCE(kernel_name="migrated", inputs=[a_gm, b_gm], outputs=[out])
'''


def test_a_fixpipe_op_written_directly_is_named_in_a_note_not_silently_skipped(tmp_path):
    """user440: after the kernel's fixpipe was replaced by pto.mte_l0c_gm (a mixed kernel), the report said only
    "(no fixpipe call traced)"; it now names the op's line and says how to compare it with legacy fixpipe."""
    script = tmp_path / "migrated.py"
    script.write_text(MIGRATED)
    res = C.compare_script(str(script))
    line = MIGRATED.splitlines().index(next(ln for ln in MIGRATED.splitlines() if "pto.mte_l0c_gm(" in ln)) + 1
    assert res.exit_status == 4 and res.kernels[0].how == "not run (no fixpipe call)"
    note = next(n for n in res.notes if "FIXPIPE" in n)
    assert note.startswith(f"kernel migrated: migrated.py:{line} pto.mte_l0c_gm: a FIXPIPE op written directly, "
                           "not compared") and "diff_values" in note and note.count("migrated.py:") == 1
    assert f"note: {note}" in C.format_comparisons(res)
    assert note in json.loads(C.format_comparisons(res, "json"))["notes"]
    res = C.compare_kernel(_deq_kernel(), _deq_feed())          # a kernel without one: no such note
    assert not [n for n in res.notes if "FIXPIPE" in n]
    registry.clear()
