"""The vector examples (softmax, vector add with tail across 2 cores, argmax with vcmax) run
unchanged through ``python`` and through ``tik-run`` and match their numpy references; and
built in-process, on a second chip."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from tbe.common.platform import set_current_compile_soc_info

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = ["tik_softmax.py", "tik_vector_add_tail.py", "tik_argmax.py"]


def _env(with_aliases: bool):
    paths = [ROOT] + ([os.path.join(ROOT, "tbe_compat", "aliases")] if with_aliases else [])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("runner", ["python", "tik-run"])
def test_example_runs(example, runner):
    script = os.path.join(ROOT, "examples", example)
    cmd = [sys.executable, script] if runner == "python" else [sys.executable, "-m", "tbe_compat.cli", script]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(runner == "python"), timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS" in p.stdout


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_examples_in_process_on_another_chip():
    set_current_compile_soc_info("Ascend910B1")
    add = _load("tik_vector_add_tail")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(add.N).astype(np.float32), rng.standard_normal(add.N).astype(np.float32)
    z, = add.vector_add().tikdb.start_debug({"x": x, "y": y}, interactive=False)
    np.testing.assert_array_equal(z, add.reference(x, y))
    am = _load("tik_argmax")
    x = rng.integers(-100, 100, (am.ROWS, am.COLS)).astype(np.float16)
    out, = am.argmax_kernel().tikdb.start_debug({"x": x}, interactive=False)
    np.testing.assert_array_equal(out, am.reference(x))
    sm = _load("tik_softmax")
    x = rng.uniform(-3, 3, (sm.ROWS, sm.COLS)).astype(np.float16)
    y, = sm.softmax_kernel().tikdb.start_debug({"x": x}, interactive=False)
    assert np.abs(y.astype(np.float64) - sm.reference(x)).max() < 2e-3
