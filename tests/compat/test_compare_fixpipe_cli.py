"""``tik-compare-fixpipe``: exit statuses, every format, --feed / --kernel / --output, the examples, usage
errors, the script's output kept off stdout, and a real subprocess run."""
import json
import os
import subprocess
import sys

import numpy as np

from tbe_compat import legacy_fixpipe as LF
from tbe_compat.cli import tik_compare_fixpipe_main as main

from compare_scripts import BUILD_ONLY, TWO_KERNELS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TILED = os.path.join(ROOT, "examples", "tik_matmul_tiled.py")
CONV = os.path.join(ROOT, "examples", "tik_conv2d_fixpipe.py")


def test_examples_compare_equal_and_the_script_output_goes_to_stderr(capsys):
    assert main([TILED]) == 0
    out, err = capsys.readouterr()
    assert "matmul_tiled: PASS" in err and "PASS" not in out
    assert "| tik_matmul_tiled.py:54 | matmul_tiled | 2" in out
    assert "OK: 1 fixpipe call site (2 executions) matches the legacy model bit for bit" in out
    assert main(["--format", "json", CONV]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["add"] for c in doc["comparisons"]] == ["bias", "none"] and all(c["equal"] for c in doc["comparisons"])
    assert doc["kernels"] == [{"kernel": "conv2d_fixpipe", "chip": "Ascend310", "how": "by the script",
                               "fixpipe_sites": 2, "error": None, "feed_refused": False}]
    assert doc["outcomes"] == [0]


def test_formats_feed_kernel_and_output_file(tmp_path, capsys):
    script = tmp_path / "b.py"
    script.write_text(BUILD_ONLY)
    rng = np.random.default_rng(1)
    np.savez(tmp_path / "in.npz", a_gm=rng.standard_normal((2, 16, 16)).astype(np.float16),
             b_gm=rng.standard_normal((2, 32, 16)).astype(np.float16))
    assert main(["--feed", str(tmp_path / "in.npz"), "--kernel", "built_only", "--format", "csv", str(script)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("call site,kernel,runs,shape,dtypes") and lines[1].startswith("b.py:")
    assert main(["--format", "md", "-o", str(tmp_path / "r.md"), str(script)]) == 0
    md = (tmp_path / "r.md").read_text()
    assert "generated inputs (seed 0)" in md and "| call site" in md and "|:--" in md
    assert capsys.readouterr().out == ""
    assert main(["--seed", "9", "--format", "json", str(script)]) == 0
    assert "default_rng(9)" in json.loads(capsys.readouterr().out)["notes"][0]


def test_soc_option_selects_the_chip_before_the_script(tmp_path, capsys):
    script = tmp_path / "b.py"
    script.write_text(BUILD_ONLY)
    assert main(["--soc", "Ascend910B1", "--format", "json", str(script)]) == 0
    doc = json.loads(capsys.readouterr().out)
    c, = doc["comparisons"]
    assert (c["chip"], c["lowering"], c["relu"], c["equal"]) == ("Ascend910B1", "fixpipe", True, True)


def test_an_injected_difference_gives_exit_status_1_and_the_first_mismatch(monkeypatch, capsys):
    real = LF.fp32_to_fp16

    def flip(x, mode):
        y = real(x, mode)
        y.reshape(-1)[100] = -y.reshape(-1)[100]
        return y
    monkeypatch.setattr(LF, "fp32_to_fp16", flip)
    assert main(["--format", "json", TILED]) == 1
    doc = json.loads(capsys.readouterr().out)
    c, = doc["comparisons"]
    assert c["mismatches"] == 2 and not c["equal"] and doc["exit_status"] == 1
    fm = c["first_mismatch"]
    # run 0 is core 0 (the block_num loop is the core index, no loop variable): dst c_gm[0, 0, 0] + 100
    assert (fm["index"], fm["multi_index"], fm["core"], fm["loops"]) == (100, [0, 6, 4], 0, {})
    assert fm["legacy"] == -fm["new"] and fm["new"] != 0
    assert main([TILED]) == 1
    out = capsys.readouterr().out
    assert "DIFFERENCES: 1 of 1 fixpipe call site differs" in out
    # the verdict says which side is the reference and what to do (a newcomer cannot guess it)
    assert "the legacy value is the expected one" in out and "simulator bug" in out
    assert "refuses a call" not in out


def test_usage_errors(tmp_path, capsys):
    assert main([str(tmp_path / "missing.py")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main([]) == 2
    assert main(["--sweep", TILED]) == 2
    assert main(["--full", TILED]) == 2
    bad = tmp_path / "bad.npz"
    bad.write_text("not a zip")
    assert main(["--feed", str(bad), TILED]) == 2
    assert "cannot read the feed file" in capsys.readouterr().err
    script = tmp_path / "b.py"
    script.write_text(BUILD_ONLY)
    assert main(["--kernel", "nope", str(script)]) == 2
    assert "no kernel named 'nope'" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text("1/0\n")
    assert main([str(broken)]) == 3
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_negative_seed_is_a_usage_error_before_the_script_runs(tmp_path, capsys):
    """author298: --seed -1 ran the script, then numpy's ValueError ended the tool with exit status 1 (the
    status of a difference) and a traceback."""
    script = tmp_path / "b.py"
    script.write_text(BUILD_ONLY + "\nprint('SCRIPT RAN')\n")
    assert main(["--seed", "-1", str(script)]) == 2
    out = capsys.readouterr()
    assert "seed -1 is not a non-negative integer" in out.err and "Fix:" in out.err
    assert "SCRIPT RAN" not in out.out + out.err and "Traceback" not in out.err


def test_subprocess_run_keeps_stdout_parseable():
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "tbe_compat.fixpipe_compare", "--format", "json", CONV], capture_output=True,
                       text=True, env=env, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["exit_status"] == 0 and "conv2d_fixpipe: PASS" in p.stderr


def test_a_npy_feed_or_an_unwritable_report_is_a_usage_error(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros(4, np.float16))
    assert main(["--feed", str(tmp_path / "x.npy"), TILED]) == 2
    err = capsys.readouterr().err
    assert "not arrays by kernel input name" in err and "Traceback" not in err
    script = tmp_path / "b.py"
    script.write_text(BUILD_ONLY)
    assert main(["-o", str(tmp_path / "no" / "r.txt"), str(script)]) == 2
    err = capsys.readouterr().err
    assert "cannot write the report" in err and "Traceback" not in err


def test_a_failed_report_write_leaves_the_old_report(tmp_path, capsys, monkeypatch):
    """-o writes all or nothing (migrate.write_text_atomic, as tik-migrate -o): a failing write keeps the old
    report and leaves no temporary file; it truncated the old report before."""
    from tbe_compat import migrate
    script = tmp_path / "b.py"
    script.write_text(BUILD_ONLY)
    report = tmp_path / "r.txt"
    report.write_text("old report\n")
    before = sorted(os.listdir(tmp_path))

    def refuse(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(migrate.os, "replace", refuse)
    assert main(["-o", str(report), str(script)]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "left as it was" in err and "Fix:" in err
    assert report.read_text() == "old report\n" and sorted(os.listdir(tmp_path)) == before
    monkeypatch.undo()
    assert main(["-o", str(report), str(script)]) == 0 and report.read_text() != "old report\n"


def test_usage_error_wording_for_a_folder_and_a_non_npz_feed(tmp_path, capsys):
    """A folder given as the script is not called missing; a feed that is not an .npz does not get numpy's
    allow_pickle advice (loading it with pickle would not help)."""
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder, not a file" in err and "does not exist" not in err
    bad = tmp_path / "bad.npz"
    bad.write_text("not a zip")
    assert main(["--feed", str(bad), TILED]) == 2
    err = capsys.readouterr().err
    assert "it is not an .npz archive" in err and "allow_pickle" not in err


def test_a_feed_array_of_the_wrong_shape_or_dtype_names_the_feed_file_not_unknown(tmp_path, capsys):
    """The tool itself runs a built-only kernel, so no frame of the user's script is on the stack: the
    start_debug error about a --feed array names the feed file (it said ``<unknown>:0``). It is a usage error
    (exit 2: the given input does not fit the kernel, as an unreadable feed; it exited 3, "a kernel run failed"),
    and the report is still written."""
    script = tmp_path / "b.py"
    script.write_text(BUILD_ONLY)
    feed = tmp_path / "in.npz"
    np.savez(feed, a_gm=np.zeros((1, 16, 16), np.float16), b_gm=np.zeros((2, 32, 16), np.float16))
    assert main(["--feed", str(feed), str(script)]) == 2
    out = capsys.readouterr().out
    assert "<unknown>" not in out
    assert f"ERROR: --feed {feed}: tikdb.start_debug operand a_gm: feed_dict['a_gm'] has shape (1, 16, 16)" in out
    assert "OK:" not in out         # the verdict said "OK: all 0 fixpipe call sites (0 executions) match"
    assert out.rstrip().splitlines()[-1].startswith(f"ERROR: --feed {feed}: tikdb.start_debug operand a_gm")
    np.savez(feed, a_gm=np.zeros((2, 16, 16), np.float32), b_gm=np.zeros((2, 32, 16), np.float16))
    assert main(["--feed", str(feed), "--format", "json", str(script)]) == 2
    doc = json.loads(capsys.readouterr().out)
    err = doc["kernels"][0]["error"]
    assert doc["exit_status"] == 2
    assert err.startswith(f"--feed {feed}: tikdb.start_debug operand a_gm: feed_dict['a_gm'] has dtype float32")


def test_unreadable_npz_members_are_usage_errors_not_tracebacks(tmp_path, capsys):
    """A feed .npz with an object array is not called 'not an .npz archive'; a zip member that is no .npy and a
    damaged archive are usage errors (exit 2) too -- they escaped as AttributeError / zipfile.BadZipFile."""
    import zipfile
    np.savez(tmp_path / "obj.npz", a=np.array([1, "x"], dtype=object))
    with zipfile.ZipFile(tmp_path / "txt.npz", "w") as z:
        z.writestr("a.txt", "hello")
    np.savez(tmp_path / "ok.npz", a=np.zeros(64, np.float16))
    raw = (tmp_path / "ok.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(raw[:len(raw) // 2])
    np.savez(tmp_path / "rec.npz", a=np.zeros(64, np.dtype([("a", "<f4")])))     # a structured dtype: loaded
    np.savez(tmp_path / "rec0.npz", a=np.zeros((), np.dtype([("a", "<f2")])))    # (0-d: fed as a tuple)
    np.savez(tmp_path / "txt0.npz", a=np.array("3"))
    for name, words in (("obj", "array 'a' is an object array"), ("txt", "its member 'a.txt' is not a numpy array"),
                        ("cut", "it is a damaged .npz archive"),
                        ("rec", "array 'a' has the structured dtype [('a', '<f4')]"),
                        ("rec0", "array 'a' has the structured dtype [('a', '<f2')]"),
                        ("txt0", "array 'a' has dtype <U1 (text or dates), not numbers")):
        assert main(["--feed", str(tmp_path / f"{name}.npz"), TILED]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and "not an .npz archive" not in err, (name, err)


def test_a_damaged_compressed_npz_is_a_usage_error_not_a_zlib_traceback(tmp_path, capsys):
    """np.savez_compressed output whose deflate stream is damaged (CRC not reached): zlib.error escaped."""
    np.savez_compressed(tmp_path / "ok.npz", a=np.random.default_rng(0).standard_normal(4000).astype(np.float32))
    raw = bytearray((tmp_path / "ok.npz").read_bytes())
    for off in range(200, 2000, 97):
        raw[off] ^= 0xFF
    (tmp_path / "bad.npz").write_bytes(bytes(raw))
    assert main(["--feed", str(tmp_path / "bad.npz"), TILED]) == 2
    err = capsys.readouterr().err
    assert "it is a damaged .npz archive" in err and "Traceback" not in err, err


def test_a_feed_error_of_one_kernel_never_hides_another_kernels_difference_or_failure(tmp_path, monkeypatch, capsys):
    """Two kernels: k_two's --feed array is refused (2), k_one differs (1) or the script fails (3). The exit
    status is the most serious outcome (EXIT_PRECEDENCE) and the verdict names each one; it exited 2 with only
    the feed error as the verdict."""
    script = tmp_path / "two.py"
    script.write_text(TWO_KERNELS)
    feed = tmp_path / "in.npz"
    np.savez(feed, x_a=np.zeros((2, 16, 16), np.float16), x_b=np.zeros((2, 32, 16), np.float16),
             y_a=np.zeros((1, 16, 16), np.float16), y_b=np.zeros((2, 32, 16), np.float16))
    refused = f"ERROR: kernel k_two: --feed {feed}: tikdb.start_debug operand y_a"

    def verdict_lines(out):
        return out.rstrip().split("| two.py")[-1].splitlines()[1:]
    assert main(["--feed", str(feed), str(script)]) == 2          # k_one matched: both outcomes named
    lines = verdict_lines(capsys.readouterr().out)
    assert lines[0].startswith("2 outcomes, the most serious first (exit status 2;")
    assert lines[1].startswith(refused) and lines[2].startswith("OK: 1 fixpipe call site")
    assert main(["--feed", str(feed), str(script), "fail"]) == 3
    lines = verdict_lines(capsys.readouterr().out)
    assert lines[0].startswith("3 outcomes, the most serious first (exit status 3;")
    assert lines[1] == "ERROR: ValueError: boom" and lines[2].startswith(refused) and lines[3].startswith("OK:")
    real = LF.fp32_to_fp16

    def off_by_one(x, mode):
        y = real(x, mode)
        y.reshape(-1)[100] = y.reshape(-1)[100] + 1
        return y
    monkeypatch.setattr(LF, "fp32_to_fp16", off_by_one)
    assert main(["--feed", str(feed), str(script)]) == 1
    lines = verdict_lines(capsys.readouterr().out)
    assert lines[0].startswith("2 outcomes, the most serious first (exit status 1;")
    assert lines[1].startswith("DIFFERENCES: 1 of 1 fixpipe call site differs") and lines[-1].startswith(refused)
    assert main(["--feed", str(feed), "--format", "json", str(script)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_status"] == 1 and [k["error"] is None for k in doc["kernels"]] == [True, False]
    # a JSON reader tells the refused feed from a failed run, and sees every outcome, not only the exit status
    assert [k["feed_refused"] for k in doc["kernels"]] == [False, True] and doc["outcomes"] == [1, 2]
    from tbe_compat.fixpipe_compare import EXIT_PRECEDENCE
    assert EXIT_PRECEDENCE == (3, 1, 2, 0)
