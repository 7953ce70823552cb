"""``tik-compare-fixpipe --new-fixpipe`` (`tbe_compat.fixpipe_new`): per legacy fixpipe call, the replacing
``pto.mte_l0c_gm`` call, run on the call's own L0C data and compared with the legacy model; the printed call,
pasted into the kernel in place of the fixpipe, writes what the report says (user456: the script mode compared
only the simulator's lowering -- the vector composition on v100/v200 -- and said nothing about what to write
instead; the sweep's "run as" column is clause shorthand on synthetic data)."""
import json

import numpy as np
import pytest

from tbe_compat.cli import tik_compare_fixpipe_main as main
from tbe_compat.compare import compare_kernel, diff_values
from tbe_compat import fixpipe_new as NF

KERNEL = '''
import sys
import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

M, K, N = 16, 64, 32


def build(soc="Ascend310P3", replace=None):
    """int8 matmul + fixpipe int322fp16 (immediate 0.3; per-channel L1 tensor + relu); ``replace``: the
    text of the new FIXPIPE calls, executed in place of the fixpipe calls."""
    set_current_compile_soc_info(soc)
    ti = tik.Tik()
    a_gm = ti.Tensor("int8", (K // 32, M, 32), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("int8", (K // 32, N, 32), name="b_gm", scope=tik.scope_gm)
    s_gm = ti.Tensor("float16", (16,), name="s_gm", scope=tik.scope_gm)
    c_imm = ti.Tensor("float16", (N // 16, M, 16), name="c_imm", scope=tik.scope_gm)
    c_vec = ti.Tensor("float16", (N // 16, M, 16), name="c_vec", scope=tik.scope_gm)
    a = ti.Tensor("int8", (K // 32, M, 32), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("int8", (K // 32, N, 32), name="b", scope=tik.scope_cbuf)
    s = ti.Tensor("float16", (16,), name="s", scope=tik.scope_cbuf)
    acc = ti.Tensor("int32", (N // 16, M, 16), name="acc", scope=tik.scope_cbuf_out)
    ti.data_move(a, a_gm, 0, 1, K * M // 32, 0, 0)
    ti.data_move(b, b_gm, 0, 1, K * N // 32, 0, 0)
    ti.data_move(s, s_gm, 0, 1, 1, 0, 0)
    ti.matmul(acc, a, b, M, K, N)
    if replace is None:
        ti.fixpipe(c_imm, acc, N // 16, M * 16 * 4 // 32, 0, 0,
                   extend_params={"quantize_params": {"mode": "int322fp16", "mode_param": 0.3}})
        ti.fixpipe(c_vec, acc, N // 16, M * 16 * 4 // 32, 0, 0,
                   extend_params={"quantize_params": {"mode": "int322fp16", "mode_param": s}, "relu": True})
    else:
        from pto_core import pto
        exec(replace, {"pto": pto, "np": np, "acc": acc, "c_imm": c_imm, "c_vec": c_vec})
    ti.BuildCCE(kernel_name="int8_deq", inputs=[a_gm, b_gm, s_gm], outputs=[c_imm, c_vec])
    return ti


def feed(sign=1.0):
    rng = np.random.default_rng(3)
    return {"a_gm": rng.integers(-128, 128, (K // 32, M, 32)).astype(np.int8),
            "b_gm": rng.integers(-128, 128, (K // 32, N, 32)).astype(np.int8),
            "s_gm": (sign * rng.uniform(0.001, 0.01, 16)).astype(np.float16)}


if __name__ == "__main__":
    build().tikdb.start_debug(feed(-1.0 if "neg" in sys.argv else 1.0), interactive=False)
'''


FIXPIPE_LINE = next(i for i, x in enumerate(KERNEL.splitlines(), 1) if "ti.fixpipe(c_imm" in x)


@pytest.fixture
def script(tmp_path):
    p = tmp_path / "int8_deq.py"
    p.write_text(KERNEL)
    return p


def test_new_fixpipe_prints_the_replacing_call_and_its_result_on_the_calls_data(script, capsys):
    assert main(["--new-fixpipe", str(script)]) == 0
    out = capsys.readouterr().out
    assert "new FIXPIPE (pto.mte_l0c_gm) in place of each fixpipe call, run on the call's own L0C data" in out
    assert f"new FIXPIPE for int8_deq.py:{FIXPIPE_LINE} (int8_deq): matches legacy bit for bit on this call's L0C data " \
           "(512 elements, 1 execution)" in out
    assert '    pto.mte_l0c_gm(acc.pto_ptr(), c_imm.pto_ptr(), 16, 32, 16, 256, 0, 0, ' \
           'pre_quant=(np.float16(0.3), {"mode": "deqf16_scalar"}))' in out
    assert 'pre_quant=(fb.pto_ptr(), {"mode": "deqf16_vec"}), pre_relu={"mode": "normal_relu"})  # fb: a ' \
           'scope_fb0 tensor of 32 64-bit words' in out
    assert out.rstrip().endswith("match the legacy model bit for bit")
    assert main(["--format", "json", "--new-fixpipe", str(script)]) == 0
    doc = json.loads(capsys.readouterr().out)
    imm, vec = (c["new_fixpipe"] for c in doc["comparisons"])
    assert (imm["status"], imm["mismatches"], imm["elements"], imm["reasons"]) == ("match", 0, 512, [])
    assert vec["status"] == "match" and vec["call"].startswith("pto.mte_l0c_gm(acc.pto_ptr(), c_vec.pto_ptr()")
    assert main(["--format", "json", str(script)]) == 0             # without the option: no new_fixpipe key
    assert all("new_fixpipe" not in c for c in json.loads(capsys.readouterr().out)["comparisons"])


def test_negative_per_channel_scales_are_reported_rejected_with_the_documented_reason(script, capsys):
    assert main(["--format", "json", "--new-fixpipe", str(script), "neg"]) == 0
    vec = json.loads(capsys.readouterr().out)["comparisons"][1]["new_fixpipe"]
    assert vec["status"] == "rejected" and vec["reasons"] == ["scale_not_positive_normal"]
    assert vec["error"].startswith("pto.mte_l0c_gm: pre_quant vector scale of channel 0 is -")
    assert "<pto kernel" not in vec["error"] and "differences item 3" in vec["explanation"]
    assert "fold the sign into the weights" in vec["explanation"]


def test_the_printed_call_pasted_in_place_of_the_fixpipe_writes_the_legacy_result(script):
    import importlib.util
    spec = importlib.util.spec_from_file_location("int8_deq_k", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = compare_kernel(mod.build(), mod.feed(), new_fixpipe=True)
    imm = res.comparisons[0].new_fixpipe
    assert imm.status == "match"
    want = mod.build().tikdb.start_debug(mod.feed(), interactive=False)
    got = mod.build(replace=imm.call).tikdb.start_debug(mod.feed(), interactive=False)
    assert diff_values(want[0], got[0]).mismatches == 0 and np.any(got[0] != 0)
    notes = compare_kernel(mod.build(replace=imm.call), mod.feed()).notes      # the migrated kernel: not compared,
    assert "--new-fixpipe on the kernel before the change prints each fixpipe's replacing call" in notes[0]   # says how


def test_running_the_new_calls_leaves_the_kernels_machine_the_active_one(script):
    """The new call runs on a throwaway machine; that machine stayed the active one after the comparison (the
    default of eager ``pto.*`` calls without pointers, and what `tracing_kernel` checks), where a run without
    --new-fixpipe leaves the kernel's machine (review462). It is put back: the run is side-effect free."""
    import importlib.util
    from pto_core.memory import active_context
    spec = importlib.util.spec_from_file_location("int8_deq_k2", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def active_regions():
        return [r.name for r in active_context().machine.gm.regions]
    compare_kernel(mod.build(), mod.feed())
    plain = active_regions()
    assert {"a_gm", "c_imm", "c_vec"} <= set(plain)
    res = compare_kernel(mod.build(), mod.feed(), new_fixpipe=True)
    assert res.comparisons[0].new_fixpipe.status == "match"         # the new calls did run
    assert active_regions() == plain


def test_a_wrong_new_result_is_reported_with_its_elements_and_as_unexplained(script, monkeypatch, capsys):
    """The new call is run, not assumed: one element off by one ulp in its result is reported (count, ulps,
    first element) as an UNEXPLAINED difference."""
    real = NF.run_new

    def off(call, s, snap):
        got = real(call, s, snap).copy()
        got[5] = np.nextafter(got[5], np.float16(np.inf))
        return got
    monkeypatch.setattr(NF, "run_new", off)
    assert main(["--new-fixpipe", str(script)]) == 0            # the legacy-vs-lowering verdict is unchanged
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith(f"new FIXPIPE for int8_deq.py:{FIXPIPE_LINE} "))
    assert "differs from legacy on 1/512 elements (max 1 ulp; first [5]: legacy" in line
    assert "UNEXPLAINED: not a documented difference; report it as a simulator bug" in line


def test_f16_accumulator_copy_gets_nosat_on_a_saturation_chip():
    class T:
        def __init__(self, dtype, name):
            from pto_core.dtypes import dtype as D
            self.dtype, self.name, self.offset, self._whole = dtype, name, 0, True
            self.dt = D(dtype)

    class Call:
        extend_params = {"quantize_params": None}
        src, dst = T("float16", "acc"), T("float16", "out")
        howo, round_howo, cburst_num, src_stride, dst_stride = 16, 16, 2, 0, 0
    s = NF.suggest(Call, "saturation")
    assert s.sat is False and s.text == "pto.mte_l0c_gm(acc.pto_ptr(), out.pto_ptr(), 16, 32, 16, 256, 0, 0, sat=False)"
    assert NF.suggest(Call, "inf_nan").sat is None


def test_sweep_refuses_new_fixpipe(capsys):
    assert main(["--sweep", "--new-fixpipe"]) == 2
    assert "--sweep takes no script, --feed, --kernel, --new-fixpipe or --strict" in capsys.readouterr().err
    assert main(["--sweep", "--strict"]) == 2
    assert "--sweep takes no script, --feed, --kernel, --new-fixpipe or --strict" in capsys.readouterr().err


# ----------------------------------------------------------------------------- --strict (CI)

def test_strict_passes_when_every_replacement_matches(script, capsys):
    assert main(["--new-fixpipe", "--strict", str(script)]) == 0
    out = capsys.readouterr().out
    assert "STRICT" not in out and out.rstrip().endswith("match the legacy model bit for bit")


def test_strict_fails_on_a_rejected_replacement_that_plain_new_fixpipe_only_reports(script, capsys):
    """user456 item 6: the exit status ignored --new-fixpipe outcomes, so CI could not fail on a non-exact
    replacement; with --strict a rejected one (negative per-channel scales) exits 1 and the verdict says why."""
    assert main(["--new-fixpipe", str(script), "neg"]) == 0             # without --strict: reported only
    capsys.readouterr()
    assert main(["--new-fixpipe", "--strict", str(script), "neg"]) == 1
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == ('STRICT: 1 of 2 new FIXPIPE replacements is not an exact match '
                                              '(rejected 1; --strict: see the "new FIXPIPE for" lines)')
    assert "DIFFERENCES" not in out                                    # the legacy comparison itself matched
    assert main(["--format", "json", "--new-fixpipe", "--strict", str(script), "neg"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["exit_status"], doc["strict_new"], doc["outcomes"]) == (1, True, [1])


def test_strict_fails_on_a_differing_replacement(script, monkeypatch, capsys):
    real = NF.run_new

    def off(call, s, snap):
        got = real(call, s, snap).copy()
        got[5] = np.nextafter(got[5], np.float16(np.inf))
        return got
    monkeypatch.setattr(NF, "run_new", off)
    assert main(["--new-fixpipe", "--strict", str(script)]) == 1
    assert "STRICT: 2 of 2 new FIXPIPE replacements are not an exact match (differs 2;" in capsys.readouterr().out


def test_strict_needs_new_fixpipe(script, capsys):
    from pto_core.errors import ConfigError
    from tbe_compat.compare import compare_script
    assert main(["--strict", str(script)]) == 2
    assert "--strict judges the new FIXPIPE replacements. Fix: add --new-fixpipe" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="new_fixpipe=True"):
        compare_script(str(script), strict=True)


def test_help_lists_the_exit_statuses(capsys):
    """user456: --help gave the options but not what the exit statuses mean, which a CI job needs."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for line in ("0  every executed fixpipe call matched", "1  a difference, or a call the legacy model refused",
                 "2  usage error", "3  the script or a kernel run failed", "4  no fixpipe call ran",
                 "exit status (--sweep): 0 every difference explained",
                 "except with --strict: then a replacement that is not an exact match"):
        assert line in out


VIEWS_KERNEL = '''
import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

M, K, N = 16, 32, 64


def build(replace=None):
    """f16 matmul; fixpipe of a for_range view (run-time offset), of a view at a trace-time offset, and in a
    Python loop over two trace-time offsets. ``replace``: text executed in place of the second fixpipe."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (K // 16, M, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (K // 16, N, 16), name="b_gm", scope=tik.scope_gm)
    c_gm = ti.Tensor("float16", (N // 16, M, 16), name="c_gm", scope=tik.scope_gm)
    d_gm = ti.Tensor("float32", (N // 16, M, 16), name="d_gm", scope=tik.scope_gm)
    e_gm = ti.Tensor("float32", (N // 16, M, 16), name="e_gm", scope=tik.scope_gm)
    a = ti.Tensor("float16", (K // 16, M, 16), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("float16", (K // 16, N, 16), name="b", scope=tik.scope_cbuf)
    acc = ti.Tensor("float32", (N // 16, M, 16), name="acc", scope=tik.scope_cbuf_out)
    ti.data_move(a, a_gm, 0, 1, K * M * 2 // 32, 0, 0)
    ti.data_move(b, b_gm, 0, 1, K * N * 2 // 32, 0, 0)
    ti.matmul(acc, a, b, M, K, N)
    with ti.for_range(0, N // 16) as j:
        ti.fixpipe(c_gm[j, 0, 0], acc[j, 0, 0], 1, M * 16 * 4 // 32, 0, 0,
                   extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    if replace is None:
        ti.fixpipe(d_gm[2, 0, 0], acc[2, 0, 0], 2, M * 16 * 4 // 32, 0, 0)
    else:
        from pto_core import pto
        exec(replace, {"pto": pto, "acc": acc, "d_gm": d_gm})
    for i in range(2):
        ti.fixpipe(e_gm[2 * i, 0, 0], acc[2 * i, 0, 0], 2, M * 16 * 4 // 32, 0, 0)
    ti.BuildCCE(kernel_name="views", inputs=[a_gm, b_gm], outputs=[c_gm, d_gm, e_gm])
    return ti


def feed():
    rng = np.random.default_rng(5)
    return {"a_gm": rng.standard_normal((K // 16, M, 16)).astype(np.float16),
            "b_gm": rng.standard_normal((K // 16, N, 16)).astype(np.float16)}
'''


def test_a_views_index_is_printed_when_known_and_a_placeholder_is_said_to_be_one(tmp_path):
    """review462: every view but a whole tensor was printed ``name[...]``, unmarked: pasted, TIK refuses the
    Ellipsis with a generic index error, and a view at a trace-time offset (``d_gm[2, 0, 0]``) lost an index
    the trace knows. Now that index is printed (and the pasted call writes what the fixpipe wrote); a run-time
    offset (a for_range variable) or a site traced at several offsets (a Python loop) keeps ``name[...]`` with
    a comment saying it is a placeholder."""
    import importlib.util
    p = tmp_path / "views.py"
    p.write_text(VIEWS_KERNEL)
    spec = importlib.util.spec_from_file_location("views_k", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = compare_kernel(mod.build(), mod.feed(), new_fixpipe=True)
    loop, static, python_loop = (c.new_fixpipe for c in res.comparisons)
    assert all(r.status == "match" for r in (loop, static, python_loop))
    assert static.call == "pto.mte_l0c_gm(acc[2, 0, 0].pto_ptr(), d_gm[2, 0, 0].pto_ptr(), 16, 32, 16, 256, 0, 0)"
    assert loop.call.startswith("pto.mte_l0c_gm(acc[...].pto_ptr(), c_gm[...].pto_ptr(), 16, 16, 16, 256, 0, 0, ")
    assert loop.call.endswith("  # acc[...] and c_gm[...]: [...] is a placeholder: write the index the fixpipe "
                              "call gives this view")
    assert python_loop.runs == 2 and python_loop.call.startswith(
        "pto.mte_l0c_gm(acc[...].pto_ptr(), e_gm[...].pto_ptr(), 16, 32, 16, 256, 0, 0)  # acc[...] and e_gm[...]: "
        "[...] is a placeholder")
    want = mod.build().tikdb.start_debug(mod.feed(), interactive=False)
    got = mod.build(replace=static.call).tikdb.start_debug(mod.feed(), interactive=False)
    assert want[1][2:].tobytes() == got[1][2:].tobytes() and np.any(got[1][2:] != 0)
