"""The pytest plugin: a folder of TIK scripts as tests (reference functions, golden files,
tolerances, readable mismatch reports, pytest-xdist)."""
import os
import textwrap

import numpy as np
import pytest

from tbe_compat import pytest_plugin

pytest_plugins = ["pytester"]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGIN = ("-p", "tbe_compat.pytest_plugin", "-W", "ignore::pytest.PytestAssertRewriteWarning")

#: GM -> UB -> (x + 1) -> GM on float16 through element-wise Scalars; ``OFF`` breaks one element
ADD_ONE = '''\
import numpy as np
from tbe import tik

def add_one(kernel_name="add_one"):
    ti = tik.Tik()
    x = ti.Tensor("float16", (32,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (32,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (32,), name="ub", scope=tik.scope_ubuf)
    v = ti.Scalar("float16", name="v")
    ti.data_move(ub, x, 0, 1, 2, 0, 0)
    with ti.for_range(0, 32) as i:
        v.set_as(ub[i])
        ub[i].set_as(v + 1)
    ti.data_move(y, ub, 0, 1, 2, 0, 0)
    ti.BuildCCE(kernel_name=kernel_name, inputs=[x], outputs=[y])
    return ti

def reference(inputs):
    y = (inputs["x"] + np.float16(1)).astype(np.float16)
    y[7] += np.float16(OFF)
    return y

if __name__ == "__main__":
    ti = add_one()
    ti.tikdb.start_debug({"x": np.linspace(-2, 2, 32).astype(np.float16)}, False)
'''

TWO_KERNELS_BUILD_ONLY = '''\
import numpy as np
from tbe import tik

def copy(kernel_name, n):
    ti = tik.Tik()
    x = ti.Tensor("int32", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (n,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (n,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, n // 8, 0, 0)
    ti.data_move(y, ub, 0, 1, n // 8, 0, 0)
    ti.BuildCCE(kernel_name=kernel_name, inputs=[x], outputs=[y])

copy(kernel_name="copy8", n=8)
copy(kernel_name="copy64", n=64)

def make_inputs(kernel_name):
    n = 8 if kernel_name == "copy8" else 64
    return {"x": np.arange(n, dtype=np.int32) * 3}

def reference(inputs, kernel_name):
    return inputs["x"]
'''

NOT_A_KERNEL = "VALUE = 3\n"


@pytest.fixture(autouse=True, scope="module")
def _warm_imports():
    """pytester's in-process runs drop the modules first imported during a run; import (and use)
    everything a kernel run touches up front so every run shares one copy of the simulator."""
    import tbe_compat.aliases
    tbe_compat.aliases.install()
    ns = {}
    exec(compile(ADD_ONE.replace("OFF", "0") + "\nti = add_one('warm')\n"
                 "ti.tikdb.start_debug({'x': np.zeros(32, np.float16)}, False)\n", "<warm>", "exec"), ns)
    import tbe_compat.cli  # noqa: F401
    import tbe_compat.compare  # noqa: F401
    import tbe_compat.tik.registry
    tbe_compat.tik.registry.clear()


def _kernels(pytester, off=0):
    d = pytester.mkdir("kernels")
    (d / "add_one.py").write_text(ADD_ONE.replace("OFF", repr(off)))
    (d / "two.py").write_text(TWO_KERNELS_BUILD_ONLY)
    (d / "helper.py").write_text(NOT_A_KERNEL)
    return d


def test_reference_scripts_become_one_item_per_kernel(pytester):
    d = _kernels(pytester)
    res = pytester.runpytest(*PLUGIN, "--tik-kernels", str(d), "-v")
    res.assert_outcomes(passed=3)
    res.stdout.fnmatch_lines(["*kernels/add_one.py::add_one PASSED*", "*kernels/two.py::copy8 PASSED*",
                              "*kernels/two.py::copy64 PASSED*"])


def test_a_failing_kernel_reports_a_readable_diff_and_tolerances_accept_it(pytester):
    d = _kernels(pytester, off=0.5)
    res = pytester.runpytest(*PLUGIN, "--tik-kernels", str(d))
    res.assert_outcomes(passed=2, failed=1)
    res.stdout.fnmatch_lines(["*kernel add_one, run 1 of 1 against reference():*",
                              "*output 0 (y): 1 of 32 elements differ; first at index 7: got *, expected *"
                              "max abs diff 0.5, max ulp diff *"])
    assert "Traceback" not in res.stdout.str()
    pytester.runpytest(*PLUGIN, "--tik-kernels", str(d), "--tik-atol", "0.5").assert_outcomes(passed=3)
    pytester.runpytest(*PLUGIN, "--tik-kernels", str(d), "--tik-ulp", "2").assert_outcomes(passed=2, failed=1)
    (d / "add_one.py").write_text(ADD_ONE.replace("OFF", "0.5") + "\nTOLERANCE = {'atol': 0.5}\n")
    pytester.runpytest(*PLUGIN, "--tik-kernels", str(d)).assert_outcomes(passed=3)


def test_golden_files_are_recorded_then_checked(pytester):
    d = pytester.mkdir("kernels")
    # no reference(): the script's own driver feeds unseeded random data
    (d / "noisy.py").write_text(ADD_ONE.replace("np.linspace(-2, 2, 32).astype(np.float16)",
                                                "np.random.standard_normal(32).astype(np.float16)")
                                .replace("def reference", "def _unused"))
    assert pytester.runpytest(*PLUGIN, "--tik-kernels", str(d)).ret == pytest.ExitCode.NO_TESTS_COLLECTED
    pytester.runpytest(*PLUGIN, "--tik-kernels", str(d), "--tik-record-golden").assert_outcomes(passed=1)
    golden = d / "noisy.golden.npz"
    cases = pytest_plugin.load_golden(str(golden))
    (inputs, outputs), = cases["add_one"]
    np.testing.assert_array_equal(outputs[0], (inputs["x"] + np.float16(1)).astype(np.float16))
    # the check replays the recorded inputs (the script's new random feed does not matter)
    pytester.runpytest(*PLUGIN, "--tik-kernels", str(d), "-v").assert_outcomes(passed=1)
    outputs[0][3] = np.float16(99)
    pytest_plugin.save_golden(str(golden), {"add_one": [(inputs, outputs)]})
    res = pytester.runpytest(*PLUGIN, "--tik-kernels", str(d))
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*kernel add_one, golden case 1 of 1:*", "*first at index 3*expected 99.0*"])


INPLACE_BLOCKS = '''\
import numpy as np
from tbe import tik

def bump(kernel_name="bump"):
    ti = tik.Tik()
    x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    with ti.for_range(0, 4, block_num=4) as b:
        ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, y, 0, 1, 1, 0, 0)
        ti.vec_adds(8, ub, ub, b + 1.0, 1, 8, 8)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name=kernel_name, inputs=[x], outputs=[y])
    return ti

if __name__ == "__main__":
    ti = bump()
    ti.tikdb.start_debug({"x": np.random.standard_normal(8).astype(np.float32)}, False, inplace={"y": "x"},
                         block_dim=1)
'''


def test_golden_cases_keep_the_runs_inplace_and_block_dim(pytester):
    """A run with start_debug(inplace=, block_dim=) is recorded with both and replayed with both (without
    them the replay reads y's launch fill and runs 4 racing blocks: a false mismatch)."""
    d = pytester.mkdir("kernels")
    (d / "bump.py").write_text(INPLACE_BLOCKS)
    pytester.runpytest(*PLUGIN, "--tik-kernels", str(d), "--tik-record-golden").assert_outcomes(passed=1)
    case, = pytest_plugin.load_golden(str(d / "bump.golden.npz"))["bump"]
    inputs, outputs = case
    assert case.options == {"inplace": {"y": "x"}, "block_dim": 1}
    np.testing.assert_array_equal(outputs[0], inputs["x"] + np.float32(1))
    pytester.runpytest(*PLUGIN, "--tik-kernels", str(d), "-v").assert_outcomes(passed=1)


def test_script_errors_and_kernels_without_runs(pytester):
    d = pytester.mkdir("kernels")
    (d / "crash.py").write_text(ADD_ONE.replace("OFF", "0") + "\nraise RuntimeError('boom')\n")
    (d / "norun.py").write_text(ADD_ONE.replace("OFF", "0").split("if __name__")[0] + "add_one()\n")
    res = pytester.runpytest(*PLUGIN, "--tik-kernels", str(d))
    res.assert_outcomes(failed=2)
    res.stdout.fnmatch_lines(["*the script exited with status 1:*", "*RuntimeError: boom*",
                              "*kernel 'add_one' was built but never run*make_inputs()*"])


def test_reference_by_input_names_and_a_failing_reference(pytester):
    d = pytester.mkdir("kernels")
    by_name = ADD_ONE.replace("OFF", "0").replace(
        'def reference(inputs):\n    y = (inputs["x"] + np.float16(1)).astype(np.float16)',
        'def reference(x):\n    y = (x + 1).astype(np.float64)')       # by name; float64 -> float16
    (d / "by_name.py").write_text(by_name)
    (d / "raising.py").write_text(ADD_ONE.replace("OFF", "0").replace('inputs["x"]', 'inputs["nope"]'))
    res = pytester.runpytest(*PLUGIN, "--tik-kernels", str(d))
    res.assert_outcomes(passed=1, failed=1)
    res.stdout.fnmatch_lines(["*raising.py::add_one*", "*reference() raised KeyError: 'nope'*"])


def test_explicit_paths_keep_their_tests_and_add_the_kernels(pytester):
    d = _kernels(pytester)
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    res = pytester.runpytest(*PLUGIN, "test_plain.py", "--tik-kernels", str(d))
    res.assert_outcomes(passed=4)
    res = pytester.runpytest(*PLUGIN, "--tik-kernels", str(pytester.path / "missing"))
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--tik-kernels*is not a folder*"])


def test_xdist_spreads_kernels_over_processes(pytester, monkeypatch):
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTHONPATH", ROOT)
    d = _kernels(pytester, off=1)
    res = pytester.runpytest_subprocess(*PLUGIN, "--tik-kernels", str(d), "-n", "2", "-p", "xdist")
    res.assert_outcomes(passed=2, failed=1)
    res.stdout.fnmatch_lines(["*2 workers*", "*first at index 7*"])


def test_the_examples_folder_passes(pytester):
    examples = os.path.join(ROOT, "examples")
    scripts = [os.path.join(examples, f) for f in sorted(os.listdir(examples)) if f.endswith(".py")]
    items = sum(max(1, len(pytest_plugin.static_kernel_names(p))) for p in scripts if pytest_plugin.script_kind(p))
    assert items >= 6
    res = pytester.runpytest(*PLUGIN, "--tik-kernels", examples, "-v")
    res.assert_outcomes(passed=items)
    res.stdout.fnmatch_lines(["*migrate_row_sum.py::migrate_row_sum PASSED*",
                              "*tik_entry_returns_none.py::interleave_blocks PASSED*",
                              "*tik_tiled_copy.py::tiled_copy PASSED*"])


def test_static_kernel_names_and_script_kinds(tmp_path):
    p = tmp_path / "k.py"
    p.write_text(textwrap.dedent('''\
        from tbe import tik
        def a(x, kernel_name="alpha"): pass
        def b(*, kernel_name="beta"): pass
        t = None
        t.BuildCCE(kernel_name="gamma", inputs=[], outputs=[])
        t.BuildCCE(kernel_name=f"dyn{1}", inputs=[], outputs=[])
        '''))
    assert pytest_plugin.static_kernel_names(str(p)) == ["alpha", "beta", "gamma"]
    assert pytest_plugin.script_kind(str(p)) is None
    assert pytest_plugin.script_kind(str(p), record=True) == "record"
    p.write_text(p.read_text() + "def reference(inputs):\n    return inputs\n")
    assert pytest_plugin.script_kind(str(p)) == "reference"
    (tmp_path / "k.golden.npz").write_bytes(b"")
    assert pytest_plugin.script_kind(str(p)) == "golden+reference"
    (tmp_path / "bad.py").write_text("def (:\n")
    assert pytest_plugin.script_kind(str(tmp_path / "bad.py"), record=True) is None


def test_golden_files_keep_ml_dtypes_outputs(tmp_path):
    """bfloat16 / int4 / float8 arrays survive save_golden -> load_golden with their dtype and bits (numpy's .npz
    stores them as untyped |V2 / |V1 bytes that cannot be cast back, so a bf16 or int4 golden output failed to
    compare: "No cast function available")."""
    import ml_dtypes
    bf = np.array([1.5, -0.0, np.inf, np.nan, 3.0e38], dtype=ml_dtypes.bfloat16)
    i4 = np.array([-8, 7, 0, -1], dtype=ml_dtypes.int4)
    f8 = np.array([0.5, -448.0], dtype=ml_dtypes.float8_e4m3fn)
    path = str(tmp_path / "k.golden.npz")
    pytest_plugin.save_golden(path, {"k": [({"x": bf, "n": 3}, [i4, f8, np.arange(3, dtype=np.float16)])]})
    (inputs, outputs), = pytest_plugin.load_golden(path)["k"]
    assert inputs["n"] == 3 and inputs["x"].dtype == bf.dtype
    assert inputs["x"].view(np.uint16).tolist() == bf.view(np.uint16).tolist()
    assert outputs[0].dtype == i4.dtype and outputs[0].astype(int).tolist() == [-8, 7, 0, -1]
    assert outputs[1].dtype == f8.dtype and outputs[1].astype(float).tolist() == [0.5, -448.0]
    assert outputs[2].dtype == np.float16 and outputs[2].tolist() == [0.0, 1.0, 2.0]
    assert pytest_plugin.golden_kernel_names(path) == ["k"]


def test_golden_files_keep_float8_e5m2_outputs(tmp_path):
    """review271: float8_e5m2 is the ml_dtypes type whose dtype kind is "f" (str '<f1'), not "V": save_golden
    stored it as-is and load_golden then refused the file ("descr is not a valid dtype descriptor: '<f1'")."""
    import ml_dtypes
    f8 = np.array([0.5, -57344.0, np.inf], dtype=ml_dtypes.float8_e5m2)
    path = str(tmp_path / "k.golden.npz")
    pytest_plugin.save_golden(path, {"k": [({"x": f8}, [f8])]})
    (inputs, outputs), = pytest_plugin.load_golden(path)["k"]
    assert inputs["x"].dtype == outputs[0].dtype == f8.dtype
    assert outputs[0].view(np.uint8).tolist() == f8.view(np.uint8).tolist()
