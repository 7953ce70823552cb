"""tik-migrate --format python: the replacement Python of every TIK call site runs, inside the same TIK kernel, to
bit-identical outputs (kernels rewritten from the tool's own rows), says so where it cannot name an operand, and
spells every clause the way the Python API takes it."""
import ast
import importlib.util
import itertools
import re

import numpy as np
import pytest

from pto_core import pto
from pto_core.ops.registry import OPS, clause_python, normalize_clause
from tbe_compat.migrate import main
from tbe_compat.migrate_python import PLACEHOLDER, format_python, python_rows

HEAD = '''\
import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
'''

#: name -> (source of a module defining kernel() and feed(), TIK API calls it makes that record PTO ops)
KERNELS = {
    "vec_tail": (HEAD + '''
N, CORES, PER, LAST = 1000, 2, 512, 488


def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    x = ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("float16", (N,), name="z", scope=tik.scope_gm)
    with ti.for_range(0, CORES, block_num=CORES) as core:
        xu = ti.Tensor("float16", (PER,), name="xu", scope=tik.scope_ubuf)
        yu = ti.Tensor("float16", (PER,), name="yu", scope=tik.scope_ubuf)
        count = ti.Scalar("int32", name="count")
        with ti.if_scope(core < CORES - 1):
            count.set_as(PER)
        with ti.else_scope():
            count.set_as(LAST)
        base = core * PER
        burst = ti.Scalar("int32", name="burst")
        burst.set_as((count * 2 + 31) // 32)
        ti.data_move(xu, x[base], 0, 1, burst, 0, 0)
        ti.data_move(yu, y[base], 0, 1, burst, 0, 0)
        rep = ti.Scalar("int32", name="rep")
        rep.set_as(count // 128)
        tail = ti.Scalar("int32", name="tail")
        tail.set_as(count % 128)
        with ti.if_scope(rep > 0):
            ti.vec_add(128, xu, xu, yu, rep, 8, 8, 8)
            ti.vec_relu(128, xu, xu, rep, 8, 8)
        with ti.if_scope(tail > 0):
            off = rep * 128
            ti.vec_add(tail, xu[off], xu[off], yu[off], 1, 8, 8, 8)
            ti.vec_relu(tail, xu[off], xu[off], 1, 8, 8)
        ti.data_move(z[base], xu, 0, 1, burst, 0, 0)
    ti.BuildCCE(kernel_name="vec_tail", inputs=[x, y], outputs=[z])
    return ti


def feed():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal(N).astype(np.float16), "y": rng.standard_normal(N).astype(np.float16)}
''', 7),
    "moves": (HEAD + '''
def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    a = ti.Tensor("float16", (8, 64), name="a", scope=tik.scope_gm)
    b = ti.Tensor("float16", (8, 32), name="b", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (8, 32), name="ub", scope=tik.scope_ubuf)
    l1 = ti.Tensor("float16", (8, 32), name="l1", scope=tik.scope_cbuf)
    with ti.for_range(0, 2) as half:
        ti.data_move(ub[half * 4, 0], a[half * 4, 16], 0, 4, 2, 2, 0)
    ti.data_move(l1, ub, 0, 2, 8, 0, 0)
    ti.data_move(ub, l1, 0, 1, 16, 0, 0)
    ti.vec_adds(128, ub, ub, 1.5, 2, 8, 8)
    ti.data_move(b, ub, 0, 1, 16, 0, 0)
    ti.BuildCCE(kernel_name="moves", inputs=[a], outputs=[b])
    return ti


def feed():
    return {"a": np.random.default_rng(1).standard_normal((8, 64)).astype(np.float16)}
''', 5),
    "matmul": (HEAD + '''
M, K, N, KC = 32, 128, 64, 64
KC1, NC, NC1, M1 = KC // 16, 32, 2, 2


def kernel():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (K // 16, M, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (K // 16, N, 16), name="b_gm", scope=tik.scope_gm)
    c_gm = ti.Tensor("float16", (N // 16, M, 16), name="c_gm", scope=tik.scope_gm)
    with ti.for_range(0, 2, block_num=2) as core:
        a_l1 = ti.Tensor("float16", (KC1, M, 16), name="a_l1", scope=tik.scope_cbuf)
        b_l1 = ti.Tensor("float16", (KC1, NC, 16), name="b_l1", scope=tik.scope_cbuf)
        a_l0 = ti.Tensor("float16", (M1, KC1, 16, 16), name="a_l0", scope=tik.scope_ca)
        b_l0 = ti.Tensor("float16", (KC1, NC1, 16, 16), name="b_l0", scope=tik.scope_cb)
        c_l0c = ti.Tensor("float32", (NC1, M, 16), name="c_l0c", scope=tik.scope_cbuf_out)
        with ti.for_range(0, K // KC) as kc:
            ti.data_move(a_l1, a_gm[kc * KC1, 0, 0], 0, 1, KC1 * M, 0, 0)
            ti.data_move(b_l1, b_gm[kc * KC1, core * NC, 0], 0, KC1, NC, N - NC, 0)
            with ti.for_range(0, M1) as m1:
                ti.load2dv2(a_l0[m1, 0, 0, 0], a_l1[0, m1 * 16, 0], 0, KC1, 0, M1, 0, False)
            ti.load2dv2(b_l0, b_l1, 0, KC1 * NC1, 0, 1, 0, False)
            with ti.if_scope(kc == 0):
                ti.mmad(c_l0c, a_l0, b_l0, M, KC, NC, 0)
            with ti.else_scope():
                ti.mmad(c_l0c, a_l0, b_l0, M, KC, NC, 1)
        ti.fixpipe(c_gm[core * NC1, 0, 0], c_l0c, NC1, M * 16 * 4 // 32, 0, 0,
                   extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}, "relu": True})
    ti.BuildCCE(kernel_name="matmul", inputs=[a_gm, b_gm], outputs=[c_gm])
    return ti


def feed():
    rng = np.random.default_rng(2)
    return {"a_gm": rng.standard_normal((K // 16, M, 16)).astype(np.float16),
            "b_gm": rng.standard_normal((K // 16, N, 16)).astype(np.float16)}
''', 7),
    "conv": (HEAD + '''
N = 256


def kernel():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
    w = ti.Tensor("int32", (N,), name="w", scope=tik.scope_gm)
    xu = ti.Tensor("float16", (N,), name="xu", scope=tik.scope_ubuf)
    xf = ti.Tensor("float32", (N,), name="xf", scope=tik.scope_ubuf)
    th = ti.Tensor("float32", (N,), name="th", scope=tik.scope_ubuf)
    wi = ti.Tensor("int32", (N,), name="wi", scope=tik.scope_ubuf)
    ti.data_move(xu, x, 0, 1, N * 2 // 32, 0, 0)
    ti.vec_conv(64, "none", xf, xu, N // 64, 8, 4)
    ti.vec_dup(64, th, 0.3, N // 64, 8)
    ti.vec_mul(64, xf, xf, th, N // 64, 8, 8, 8)
    low = ti.Tensor("float32", (64,), name="low", scope=tik.scope_ubuf)
    ti.vec_dup(64, low, float("-inf"), 1, 8)                # a literal Python has no name for
    ti.vec_max(64, xf, xf, low, N // 64, 8, 8, 0)
    ti.vec_conv(64, "round", xu, xf, N // 64, 4, 8)
    ti.vec_conv(64, "ceil", wi, xf, N // 64, 8, 8)
    ti.data_move(y, xu, 0, 1, N * 2 // 32, 0, 0)
    ti.data_move(w, wi, 0, 1, N * 4 // 32, 0, 0)
    ti.BuildCCE(kernel_name="conv", inputs=[x], outputs=[y, w])
    return ti


def feed():
    return {"x": (np.random.default_rng(3).standard_normal(N) * 100).astype(np.float16)}
''', 10),
    "atomic_branches": (HEAD + '''
N = 256


def kernel():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float32", (N,), name="x", scope=tik.scope_gm)
    mode = ti.InputScalar("int32", name="mode")
    y = ti.Tensor("float32", (N,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    xu = ti.Tensor("float32", (N,), name="xu", scope=tik.scope_ubuf)
    with ti.for_range(0, 2, block_num=2) as core:
        ti.data_move(xu, x, 0, 1, N * 4 // 32, 0, 0)
        ti.vec_muls(64, xu, xu, mode, N // 64, 8, 8)
        ti.set_atomic_add(mode)                     # the lowering branches on the InputScalar
        ti.data_move(y, xu, 0, 1, N * 4 // 32, 0, 0)
        ti.set_atomic_add(0)
    ti.BuildCCE(kernel_name="atomic_branches", inputs=[x, mode], outputs=[y])
    return ti


def feed():
    return {"x": np.random.default_rng(5).standard_normal(N).astype(np.float32), "mode": 1}
''', 5),
    "reduce": (HEAD + '''
ROWS, COLS = 8, 256


def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    x = ti.Tensor("float16", (ROWS, COLS), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (ROWS, COLS), name="y", scope=tik.scope_gm)
    xu = ti.Tensor("float16", (COLS,), name="xu", scope=tik.scope_ubuf)
    red = ti.Tensor("float16", (16,), name="red", scope=tik.scope_ubuf)
    work = ti.Tensor("float16", (32,), name="work", scope=tik.scope_ubuf)
    mx = ti.Scalar("float16", name="mx")
    sm = ti.Scalar("float16", name="sm")
    with ti.for_range(0, ROWS) as r:
        ti.data_move(xu, x[r, 0], 0, 1, COLS * 2 // 32, 0, 0)
        ti.vec_reduce_max(128, red, xu, work, 2, 8, cal_index=False)
        ti.vec_muls(1, red, red, -1.0, 1, 8, 8)
        mx.set_as(red[0])
        ti.vec_adds(128, xu, xu, mx, 2, 8, 8)
        ti.vec_exp(128, xu, xu, 2, 8, 8)
        ti.vec_reduce_add(128, red, xu, work, 2, 8)
        ti.vec_rec(1, red, red, 1, 8, 8)
        sm.set_as(red[0])
        ti.vec_muls(128, xu, xu, sm, 2, 8, 8)
        ti.data_move(y[r, 0], xu, 0, 1, COLS * 2 // 32, 0, 0)
    ti.BuildCCE(kernel_name="reduce", inputs=[x], outputs=[y])
    return ti


def feed():
    return {"x": np.random.default_rng(4).standard_normal((ROWS, COLS)).astype(np.float16)}
''', 9),
}


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rewrite(path, rows) -> str:
    """The kernel source with every row's call statement replaced by the row's code (same indentation)."""
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    stmts = {n.lineno: n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Expr) and
             isinstance(n.value, ast.Call)}
    for r in sorted(rows, key=lambda r: -r.line):
        assert r.runnable and r.file == str(path), (r.site, r.problems)
        st = stmts[r.line]
        pad = " " * st.col_offset
        lines[st.lineno - 1:st.end_lineno] = [pad + c + "\n" for c in r.code]
    return "from pto_core import pto\n" + "".join(lines)


def _run(mod):
    outs = mod.kernel().tikdb.start_debug(mod.feed(), interactive=False)
    return [np.asarray(o).tobytes() for o in outs]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_call_site_replaced_by_its_python_runs_bit_identical(name, tmp_path):
    src, sites = KERNELS[name]
    path = tmp_path / f"{name}_tik.py"
    path.write_text(src)
    mod = _load(path, f"{name}_tik_{id(tmp_path)}")
    tik = mod.kernel()
    rows = python_rows(tik)
    assert len(rows) == sites, [r.site for r in rows]
    golden = _run(mod)
    assert all(g != b"\xff" * len(g) for g in golden)       # really written, not the GM fill
    new = tmp_path / f"{name}_pto.py"
    new.write_text(_rewrite(path, rows))
    mixed = _load(new, f"{name}_pto_{id(tmp_path)}")
    assert python_rows(mixed.kernel()) == []                # no TIK call recording PTO ops is left
    assert _run(mixed) == golden


def test_vector_rows_name_tensors_scalars_and_clauses(tmp_path):
    path = tmp_path / "vec_tail_names.py"
    path.write_text(KERNELS["vec_tail"][0])
    rows = python_rows(_load(path, f"vec_tail_names_{id(tmp_path)}").kernel())
    by_line = {r.source: r for r in rows}
    tail_add = by_line["ti.vec_add(tail, xu[off], xu[off], yu[off], 1, 8, 8, 8)"]
    assert tail_add.code == ["pto.ub.vadd(xu.pto_ptr() + rep * 128, xu.pto_ptr() + rep * 128, "
                             "yu.pto_ptr() + rep * 128, 1, mask=tail, rep_stride=(8, 8, 8))"]
    load = by_line["ti.data_move(xu, x[base], 0, 1, burst, 0, 0)"]
    assert load.code == ["pto.mte_gm_ub(x.pto_ptr() + core * 512, xu.pto_ptr(), 0, 32, nburst=(burst, 32, 32))"]
    assert any("pto.assert_in_range" in n for n in load.notes)
    vadd = by_line["ti.vec_add(128, xu, xu, yu, rep, 8, 8, 8)"]
    assert any("auto-sync inserts set_flag/wait_flag MTE2 -> V" in n for n in vadd.notes)


def test_branches_a_lowering_opened_are_if_scopes_of_the_calls_tik_instance(tmp_path):
    path = tmp_path / "atomic_names.py"
    path.write_text(KERNELS["atomic_branches"][0])
    rows = python_rows(_load(path, f"atomic_names_{id(tmp_path)}").kernel())
    atomic = next(r for r in rows if r.source == "ti.set_atomic_add(mode)")
    assert atomic.code[:6] == ["with ti.if_scope(mode == 0):", "    pto.set_atomic_none()", "with ti.else_scope():",
                               "    with ti.if_scope(mode == 1):", "        pto.set_atomic_f32()",
                               "        pto.set_atomic_add()"]


def test_cube_and_conv_clauses_are_python_keywords(tmp_path):
    path = tmp_path / "mm_names.py"
    path.write_text(KERNELS["matmul"][0])
    rows = python_rows(_load(path, f"mm_names_{id(tmp_path)}").kernel())
    code = [c for r in rows for c in r.code]
    assert "pto.mad(a_l0.pto_ptr(), b_l0.pto_ptr(), c_l0c.pto_ptr(), 32, 32, 64, disable_gemv=True)" in code
    fix = next(c for c in code if c.startswith("pto.mte_l0c_gm("))
    assert fix.endswith('pre_quant=(0.0, {"mode": "f32_f16"}), pre_relu={"mode": "normal_relu"})')
    import os                                                   # pto_api.md shows this line (wrapped)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "migration_guide", "pto_api.md"), encoding="utf-8") as f:
        page = f.read()
    shown = re.search(r"```text\n(pto\.mte_l0c_gm\(c_l0c.*?)```", page, re.S).group(1)
    assert " ".join(shown.split()) == fix
    path = tmp_path / "conv_names.py"
    path.write_text(KERNELS["conv"][0])
    rows = python_rows(_load(path, f"conv_names_{id(tmp_path)}").kernel())
    conv = [c for r in rows for c in r.code if c.startswith("pto.ub.vconv(")]
    assert [re.findall(r'round="\w"', c) for c in conv] == [[], ['round="r"'], ['round="c"']]


UNNAMED = HEAD + '''
def add(ti, dst, a, b, n):
    ti.vec_add(n, dst, a, b, 1, 8, 8, 8)


def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
    xu = ti.Tensor("float16", (256,), name="xu", scope=tik.scope_ubuf)
    ti.data_move(xu, x, 0, 1, 16, 0, 0)
    add(ti, xu, xu, xu, 128)
    for k in range(2):
        ti.vec_muls(128, xu[k * 128], xu[k * 128], 0.5, 1, 8, 8)
    ti.data_move(y, xu, 0, 1, 16, 0, 0)
    ti.BuildCCE(kernel_name="unnamed", inputs=[x], outputs=[y])
    return ti
'''


def test_operands_the_trace_cannot_name_are_placeholders_and_the_site_says_so(tmp_path):
    path = tmp_path / "unnamed.py"
    path.write_text(UNNAMED)
    tik = _load(path, f"unnamed_{id(tmp_path)}").kernel()
    rows = {r.source: r for r in python_rows(tik)}
    helper = rows["ti.vec_add(n, dst, a, b, 1, 8, 8, 8)"]
    assert not helper.runnable
    assert helper.code == [f"pto.ub.vadd({PLACEHOLDER}xu.pto_ptr(), {PLACEHOLDER}xu.pto_ptr(), "
                           f"{PLACEHOLDER}xu.pto_ptr(), 1, mask=128, rep_stride=(8, 8, 8))"]
    assert any("'xu'" in p and "may not be the name" in p for p in helper.problems)
    loop = rows["ti.vec_muls(128, xu[k * 128], xu[k * 128], 0.5, 1, 8, 8)"]
    assert not loop.runnable and "2 times with different operands" in loop.problems[0]
    assert "pto.ub.vmuls(xu.pto_ptr() + 128, xu.pto_ptr() + 128, 0.5, 1, mask=128, rep_stride=(8, 8))" in loop.code
    text = format_python(list(rows.values()), "unnamed")
    assert text.count("# NOT RUNNABLE AS IS") == 2
    with pytest.raises(NameError, match=PLACEHOLDER):          # run as it stands: stops, never runs wrong
        exec(compile("\n".join(helper.code), "gen.py", "exec"), {"pto": pto})


def test_tik_scratch_pointer_is_a_placeholder(tmp_path):
    src = HEAD + '''
def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (1, 16, 16), name="a_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (1, 16, 16), name="out", scope=tik.scope_gm)
    a_l1 = ti.Tensor("float16", (1, 16, 16), name="a_l1", scope=tik.scope_cbuf)
    a_l0 = ti.Tensor("float16", (1, 16, 16), name="a_l0", scope=tik.scope_ca)
    b_l0 = ti.Tensor("float16", (1, 16, 16), name="b_l0", scope=tik.scope_cb)
    acc = ti.Tensor("float32", (1, 16, 16), name="acc", scope=tik.scope_cbuf_out)
    ti.data_move(a_l1, a_gm, 0, 1, 16, 0, 0)
    ti.load2dv1(a_l0, a_l1, 0, 1, 1, 0, False)
    ti.load2dv1(b_l0, a_l1, 0, 1, 1, 0, False)
    ti.mmad(acc, a_l0, b_l0, 16, 16, 16, 0)
    ti.fixpipe(out, acc, 1, 32, 0, 0, extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None},
                                                     "relu": True})
    ti.BuildCCE(kernel_name="scratch", inputs=[a_gm], outputs=[out])
    return ti
'''
    path = tmp_path / "scratch.py"
    path.write_text(src)
    rows = python_rows(_load(path, f"scratch_{id(tmp_path)}").kernel())
    fix = next(r for r in rows if r.api == "tik.fixpipe")
    assert not fix.runnable
    assert any("scratch TIK placed for itself" in p for p in fix.problems), fix.problems
    assert any(f"{PLACEHOLDER}ub_0x" in c for c in fix.code), fix.code


def _sample_values(clause):
    """Canonical values (what normalize_clause returns) of every shape the clause takes."""
    if clause.form == "flag":
        return [True]
    if clause.form == "sat":
        return [True, False, "preserve_nan"]
    if clause.form in ("word", "word_or_arg"):
        return list(clause.values) + ([7] if clause.form == "word_or_arg" else [])
    if clause.form == "optarg":
        return [True, 3]
    if clause.form == "attr":
        return list(clause.values) or [5]
    need = len(clause.params) if clause.min_params is None else clause.min_params
    out = []
    for n in range(need, len(clause.params) + 1):
        args = tuple(itertools.islice(itertools.cycle((3, 0.5, 64)), n))
        out.append((args, {}))
        for k, legal in clause.keys.items():
            out.append((args, {k: legal[0] if legal else "x"}))
    if clause.repeat:
        return [tuple(out[:2])]
    return out


def test_clause_python_is_the_inverse_of_normalize_clause():
    """Every clause of every op: the Python text the tool writes, evaluated, normalises back to the value."""
    checked = 0
    for spec in OPS.values():
        for clause in spec.clauses:
            for value in _sample_values(clause):
                text = clause_python(clause, value, repr)
                assert normalize_clause(spec, clause, eval(text)) == value, (spec.name, clause.name, value, text)
                checked += 1
    assert checked > 900


def test_cli_prints_python_and_refuses_bad_combinations(tmp_path, capsys):
    path = tmp_path / "cli_kernel.py"
    path.write_text(KERNELS["moves"][0] + "\n\nif __name__ == '__main__':\n    kernel()\n")
    assert main([str(path), "--format", "python"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# kernel moves: the Python statements")
    assert "pto.mte_ub_gm(ub.pto_ptr(), b.pto_ptr(), 512, nburst=(1, 512, 512))" in out
    compile(out, "out.py", "exec")                              # the whole output is Python
    for extra, flag in ((["-o", str(tmp_path / "k.pto")], "-o"), (["--expand"], "--expand"),
                        (["--constants"], "--constants"), (["--width", "40"], "--width"),
                        (["--group", "sequence"], "--group sequence")):
        assert main([str(path), "--format", "python", *extra]) == 2
        err = capsys.readouterr().err
        assert f"{flag} cannot be combined with --format python" in err and "Fix:" in err, err
    assert not (tmp_path / "k.pto").exists()


#: example scripts whose every TIK call site has a runnable replacement (others hold TIK scratch: conv2d, matmul,
#: fixpipe on a chip without the FIXPIPE unit; or tensors in Python lists)
RUNNABLE_EXAMPLES = {"tik_argmax.py": [], "tik_atomic_reduce.py": [], "tik_dynamic_shape.py": ["333"],
                     "tik_entry_returns_none.py": [], "tik_softmax.py": [], "tik_tiled_copy.py": [],
                     "tik_vector_add_tail.py": []}


def _trace(path, args):
    import contextlib
    import io
    from tbe_compat.migrate import trace_script
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return trace_script(str(path), args)


@pytest.mark.parametrize("example", sorted(RUNNABLE_EXAMPLES))
def test_example_rewritten_with_its_rows_gives_the_same_outputs(example, tmp_path, monkeypatch):
    """The example with every TIK call site replaced by its rows (run as tik-migrate runs it) gives every
    start_debug output bit for bit."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "examples", example)
    args = RUNNABLE_EXAMPLES[example]
    before = _trace(path, args)
    assert before.status == 0 and before.runs
    rows = [r for tik in before.kernels.values() for r in python_rows(tik)]
    assert rows and all(r.runnable for r in rows), [(r.site, r.problems) for r in rows if not r.runnable]
    import pathlib
    new = tmp_path / example
    new.write_text(_rewrite(pathlib.Path(path), rows))
    monkeypatch.syspath_prepend(os.path.join(root, "examples"))
    after = _trace(new, args)
    assert after.status == 0
    assert [r for tik in after.kernels.values() for r in python_rows(tik)] == []
    assert sorted(after.runs) == sorted(before.runs)
    for name, runs in before.runs.items():
        for r0, r1 in zip(runs, after.runs[name], strict=True):
            assert {k: np.asarray(v).tobytes() for k, v in r0.results.items()} == \
                   {k: np.asarray(v).tobytes() for k, v in r1.results.items()}
