"""The cube examples run unchanged with ``python`` and with ``tik-run`` (PASS = bit-exact against their
numpy references), and their kernels' results hold for other data too."""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = ["tik_matmul_tiled.py", "tik_conv2d_fixpipe.py"]


def _env(paths):
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


@pytest.mark.parametrize("example", EXAMPLES)
def test_cube_example_runs_with_python(example):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", example)], capture_output=True, text=True,
                       env=_env([ROOT, os.path.join(ROOT, "tbe_compat", "aliases")]), timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS" in p.stdout


@pytest.mark.parametrize("example", EXAMPLES)
def test_cube_example_runs_with_tik_run(example):
    p = subprocess.run([sys.executable, "-m", "tbe_compat.cli", os.path.join(ROOT, "examples", example)],
                       capture_output=True, text=True, env=_env([ROOT]), timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS" in p.stdout


def _load(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_matmul_example_kernel_other_data_and_listing():
    mod = _load("tik_matmul_tiled")
    ti = mod.matmul_tiled()
    a, b = mod.inputs(seed=11)
    c, = ti.tikdb.start_debug({"a_gm": mod.to_nz(a), "b_gm": mod.to_nz(b.T.copy())}, interactive=False)
    np.testing.assert_array_equal(c, mod.reference(mod.to_nz(a), mod.to_nz(b.T.copy())))
    text = ti.program.to_asm()
    for op in ("pto.mte_l1_l0a", "pto.mte_l1_l0b", "pto.mad ", "pto.mad_acc", "pto.mte_l0c_gm", "pre_quant"):
        assert op in text


def test_conv_example_kernel_other_data():
    mod = _load("tik_conv2d_fixpipe")
    ti = mod.conv2d_fixpipe()
    fm, w, bias = mod.inputs(seed=5)
    got, got_relu = ti.tikdb.start_debug({"fm_gm": fm, "w_gm": w, "bias_gm": bias}, interactive=False)
    want, want_relu = mod.reference(fm, w, bias)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_relu, want_relu)
    assert [c.lowering for c in ti.fixpipe_calls] == ["vector", "vector"]
