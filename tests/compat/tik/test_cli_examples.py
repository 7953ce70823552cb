"""The examples (our own TIK kernels, each with a numpy reference) run unchanged through
``python`` and through ``tik-run``; tik-run's argv, sys.path and exit-status contract."""
import os
import subprocess
import sys

import pytest

from tbe_compat.cli import tik_run_main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = ["tik_tiled_copy.py", "tik_atomic_reduce.py", "tik_dynamic_shape.py", "tik_entry_returns_none.py",
            "migrate_row_sum.py", "migrate_vector_add.py", "migrate_conv2d_fixpipe.py"]


def _env(with_aliases: bool):
    paths = [ROOT] + ([os.path.join(ROOT, "tbe_compat", "aliases")] if with_aliases else [])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_with_python(example):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", example)], capture_output=True, text=True,
                       env=_env(True), timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS" in p.stdout


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_with_tik_run_without_alias_packages_on_the_path(example):
    # only the repository root is importable: tik-run itself makes `tbe`/`te`/`topi` importable
    p = subprocess.run([sys.executable, "-m", "tbe_compat.cli", os.path.join(ROOT, "examples", example)],
                       capture_output=True, text=True, env=_env(False), timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS" in p.stdout


def test_tik_run_passes_arguments_and_puts_the_script_folder_on_the_path(tmp_path, capsys):
    (tmp_path / "helper_mod.py").write_text("VALUE = 41\n")
    script = tmp_path / "script.py"
    script.write_text("import sys\nimport helper_mod\nfrom tbe import tik\n"
                      "print('argv', sys.argv[1:], helper_mod.VALUE + 1, __name__)\n")
    assert tik_run_main([str(script), "a", "--b"]) == 0
    out = capsys.readouterr().out
    assert "argv ['a', '--b'] 42 __main__" in out


def test_tik_run_exit_status_and_error_report(tmp_path, capsys):
    ok = tmp_path / "exit3.py"
    ok.write_text("import sys\nsys.exit(3)\n")
    assert tik_run_main([str(ok)]) == 3
    bad = tmp_path / "bad.py"
    bad.write_text("from tbe import tik\nti = tik.Tik()\nti.Tensor('float16', (0,), name='x', scope=tik.scope_ubuf)\n")
    assert tik_run_main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3 in `tik.Tensor`" in err and "non-positive dimension" in err
    boom = tmp_path / "boom.py"
    boom.write_text("raise KeyError('x')\n")
    assert tik_run_main([str(boom)]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert tik_run_main([str(tmp_path / "missing.py")]) == 2


def test_tik_run_selects_the_chip_and_lists_kernels(tmp_path, capsys):
    script = tmp_path / "k.py"
    script.write_text(
        "from tbe import tik\n"
        "from tbe.common.platform import get_soc_spec\n"
        "print('soc', get_soc_spec('SOC_VERSION'))\n"
        "ti = tik.Tik()\n"
        "x = ti.Tensor('float16', (16,), name='x', scope=tik.scope_gm)\n"
        "ti.BuildCCE(kernel_name='listed', inputs=[x], outputs=[])\n")
    assert tik_run_main(["--soc", "Ascend610:VectorCore", "--kernels", str(script)]) == 0
    cap = capsys.readouterr()
    assert "soc Ascend610" in cap.out
    assert "kernel listed on Ascend610: inputs [x:float16[16]] outputs []" in cap.err
    assert tik_run_main(["--soc", "Ascend999", str(script)]) == 2
