"""``tik-run`` prints a summary of the checker reports (``tikdb.reports``) of the kernels a script ran, on stderr
after the script: count by kind, the first `REPORTS_SHOWN` (first of each kind first) with their file:line, and how
to see them all; nothing for a kernel without reports; reports already emitted as a warning are left out
(`Machine.warned_reports`); ``--reports all|none``. ``python kernel.py`` prints nothing of them (tik_core.md §1)."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from pto_core import Machine, pto
from pto_core.errors import GmPaddingWriteWarning
from tbe_compat.cli import REPORTS_SHOWN, ReportSummary, tik_run_main
from tbe_compat.tik.debug import REPORT_OBSERVERS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

HEAD = ("import numpy as np\nfrom tbe import tik\nfrom pto_core import pto\n"
        "ti = tik.Tik()\n"
        "x = ti.Tensor('float16', (128,), name='x', scope=tik.scope_gm)\n"
        "y = ti.Tensor('float16', (128,), name='y', scope=tik.scope_gm)\n"
        "ub = ti.Tensor('float16', (128,), name='ub', scope=tik.scope_ubuf)\n"
        "junk = ti.Tensor('float16', (128,), name='junk', scope=tik.scope_ubuf)\n"
        "ti.data_move(ub, x, 0, 1, 8, 0, 0)\n")                                     # line 9
TAIL = ("ti.data_move(y, ub, 0, 1, 8, 0, 0)\n"
        "ti.BuildCCE(kernel_name='k', inputs=[x], outputs=[y])\n"
        "for _ in range(RUNS):\n"
        "    r, = ti.tikdb.start_debug({'x': np.ones(128, np.float16)}, interactive=False)\n"
        "print('done', len(ti.tikdb.reports))\n")


def _script(tmp_path, body: str, runs: int = 1):
    path = tmp_path / "kern.py"
    path.write_text(HEAD + body + TAIL.replace("RUNS", str(runs)))
    return path


def test_a_flag_left_set_is_summarised_with_its_line(tmp_path, capsys):
    """The outside user's MIS=flag_nowait: tik-run showed nothing (the report was only in tikdb.reports)."""
    path = _script(tmp_path, "pto.set_flag('MTE2', 'V', 1)\n")                   # line 10
    assert tik_run_main([str(path)]) == 0
    cap = capsys.readouterr()
    assert "done 1" in cap.out
    lines = cap.err.splitlines()
    assert lines[0] == "tik-run: kernel 'k': 1 checker report (sync 1):"
    assert lines[1].startswith("  [sync] core0: pto.set_flag[PIPE_MTE2, PIPE_V, EVENT_ID1] at ")
    assert f"{path}:10 was never waited for" in lines[1]
    assert "tik_instance.tikdb.reports" in lines[2] and "--reports all" in lines[2] and "more" not in lines[2]
    assert len(lines) == 3
    assert tik_run_main(["--reports", "none", str(path)]) == 0
    assert capsys.readouterr().err == ""
    assert not REPORT_OBSERVERS                       # tik-run's collector is gone after the run


def test_a_clean_kernel_prints_nothing(tmp_path, capsys):
    path = _script(tmp_path, "")
    assert tik_run_main([str(path)]) == 0
    cap = capsys.readouterr()
    assert "done 0" in cap.out and cap.err == ""


def test_first_report_of_each_kind_first_then_all(tmp_path, capsys):
    """Four reads of a UB tensor nothing wrote (lines 10-13) and a flag left set (line 14), over two runs: counted
    once each; the summary shows the flag even though it came fifth; --reports all shows every one."""
    body = "".join(f"ti.{op}(128, ub, ub, junk, 1, 8, 8, 8)\n" for op in ("vec_add", "vec_mul", "vec_sub", "vec_max"))
    path = _script(tmp_path, body + "pto.set_flag('MTE2', 'V', 3)\n", runs=2)
    assert REPORTS_SHOWN == 3
    assert tik_run_main([str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "tik-run: kernel 'k' (2 start_debug runs): 5 checker reports (uninitialized 4, sync 1):"
    assert [ln.split("]")[0] for ln in err[1:4]] == ["  [uninitialized", "  [uninitialized", "  [sync"]
    assert f"({path}:10 in `tik.vec_add`)" in err[1] and f"({path}:11 in `tik.vec_mul`)" in err[2]
    assert f"{path}:14 was never waited for" in err[3]
    assert err[4].startswith("  ... 2 more; all of them: tik-run --reports all")
    assert len(err) == 5
    assert tik_run_main(["--reports", "all", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 6 and all(f"{path}:{n}" in err[n - 9] for n in range(10, 15))


def test_reports_already_warned_are_left_out(tmp_path, capsys):
    """A store past the tensor's last 32-byte block warns (GmPaddingWriteWarning) and makes a gm-tail report: the
    summary does not repeat it. A store into the last block's padding only (no warning) is summarised, with its
    line (the gm-tail report had no file:line before)."""
    path = _script(tmp_path, "ti.data_move(y[8], ub, 0, 1, 8, 0, 0)\n")           # 8 elements past y's end
    with pytest.warns(GmPaddingWriteWarning, match="past its end are dropped"):
        assert tik_run_main([str(path)]) == 0
    assert capsys.readouterr().err == ""
    path.write_text(HEAD.replace("(128,), name='y'", "(120,), name='y'") + TAIL.replace("RUNS", "1"))
    assert tik_run_main([str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "tik-run: kernel 'k': 1 checker report (gm-tail 1):"
    assert err[1].startswith(f"  [gm-tail] {path}:10 in `tik.data_move`: tik.data_move writes float16 elements "
                             f"120..127 (bytes [240, 256)) past the end of tensor 'y' (120 elements, 240 B)")


def test_python_kernel_py_prints_no_summary(tmp_path):
    path = _script(tmp_path, "pto.set_flag('MTE2', 'V', 1)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tbe_compat", "aliases")]))
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0 and "done 1" in p.stdout and p.stderr == ""


def test_machine_marks_the_reports_it_also_warned():
    """`Machine.warned_reports`: a GM over-read (GmOverreadWarning) is marked, a flag left set is not."""
    m = Machine("A2A3")
    g = m.gm_tensor(np.ones(8, np.float16), name="g")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pto.mte_gm_ub(g, m.ptr("ub", "f16", 0), 0, 128, nburst=(1, 128, 128))
    pto.set_flag("MTE2", "V", 2)
    reports = m.end_kernel()
    kinds = {k: msg in m.warned_reports for k, msg in m.reports}
    assert kinds == {"gm-overread": True, "sync": False}, reports
    summary = ReportSummary()
    assert summary.format() == ""


_FOUR_READS = "".join(f"ti.{op}(128, ub, ub, junk, 1, 8, 8, 8)\n" for op in ("vec_add", "vec_mul", "vec_sub", "vec_max"))
_OPTIONS = "from tbe_compat.tik.debug import tik_machine_options\nti.tikdb.options = tik_machine_options({})\n"


def test_reports_dropped_over_several_runs_are_counted_once(tmp_path, capsys):
    """review414: the kept reports of two runs are counted once each, but the dropped ones were summed (each run
    dropped the same 2 of its 4 reads: '4 more not recorded'). Now the most one run dropped."""
    path = _script(tmp_path, _OPTIONS.format("max_reports=2") + _FOUR_READS, runs=2)
    assert tik_run_main([str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("tik-run: kernel 'k' (2 start_debug runs): 2 checker reports (uninitialized 2), 2 more not "
                      "recorded (MachineOptions.max_reports):"), err[0]


def test_reports_warned_over_several_runs_are_counted_once(tmp_path, capsys):
    """review414: four reads reported as warnings (uninitialized='warn') over two runs were '8 more shown as
    warnings above' (Python showed each once); now 4."""
    path = _script(tmp_path, _OPTIONS.format("uninitialized='warn'") + _FOUR_READS + "pto.set_flag('MTE2', 'V', 3)\n",
                   runs=2)
    with pytest.warns(RuntimeWarning, match="which nothing wrote"):
        assert tik_run_main([str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("tik-run: kernel 'k' (2 start_debug runs): 1 checker report (sync 1), 4 more shown as warnings "
                      "above:"), err[0]


def test_reports_warned_past_the_cap_are_not_summarised(tmp_path, capsys):
    """review414: reports that were warnings but past max_reports were counted as dropped, so a kernel whose every
    report was a warning printed '0 checker reports (none kept), 2 more shown as warnings above, 2 more not
    recorded'; they were shown (Machine.warned_dropped): nothing is printed."""
    path = _script(tmp_path, _OPTIONS.format("uninitialized='warn', max_reports=2") + _FOUR_READS)
    with pytest.warns(RuntimeWarning, match="which nothing wrote"):
        assert tik_run_main([str(path)]) == 0
    cap = capsys.readouterr()
    assert "done 3" in cap.out and cap.err == ""           # 2 kept + the reports-dropped entry


def test_machine_counts_the_dropped_reports_it_also_warned():
    """`Machine.warned_dropped`: of the reports past max_reports, those the caller also warned."""
    from pto_core import MachineOptions
    m = Machine("A2A3", options=MachineOptions(max_reports=1))
    m.report("sync", "kept", warned=True)
    m.report("sync", "dropped, warned", warned=True)
    m.report("sync", "dropped", warned=False)
    assert (m.reports, m.reports_dropped, m.warned_dropped, m.warned_reports) == ([("sync", "kept")], 2, 1, {"kept"})
