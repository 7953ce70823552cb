"""``pto-run KERNEL.pto --in NAME=FILE.npy ... --out NAME=FILE.npy [--target ..] [--cores N]``."""
import configparser
import os

import numpy as np
import pytest

from pto_core.cli import pto_run_main
from pto_core.program import program

KERNEL = """\
module attributes {pto.target_arch = "a2a3"} {
  func.func @scale(%x: !pto.ptr<i32, gm> {pto.shape = [2, 4]}, %y: !pto.ptr<i32, gm> {pto.io = "out", pto.shape = [2, 4]}, %k: i32) {
    %0 = pto.get_block_idx
    %c4 = arith.constant 4 : i64
    %1 = arith.muli %0, %c4 : i64
    %2 = arith.index_cast %1 : i64 to index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4i = arith.constant 4 : index
    scf.for %i = %c0 to %c4i step %c1 {
      %j = arith.addi %2, %i : index
      %v = pto.load_scalar %x[%j] : !pto.ptr<i32, gm> -> i32
      %w = arith.muli %v, %k : i32
      pto.store_scalar %w, %y[%j] : !pto.ptr<i32, gm>, i32
    }
    return
  }
}
"""


@pytest.fixture
def files(tmp_path):
    kernel = tmp_path / "scale.pto"
    kernel.write_text(KERNEL)
    x = np.arange(8, dtype=np.int32).reshape(2, 4)
    np.save(tmp_path / "x.npy", x)
    return tmp_path, kernel, x


def test_pto_run_runs_a_text_kernel_on_n_cores(files, capsys):
    tmp, kernel, x = files
    out = tmp / "y.npy"
    rc = pto_run_main([str(kernel), "--in", f"x={tmp / 'x.npy'}", "--in", "k=3", "--out", f"y={out}",
                       "--target", "A5", "--cores", "2", "--print"])
    assert rc == 0
    assert np.load(out).tolist() == (x * 3).tolist()
    assert "y int32 (2, 4)" in capsys.readouterr().out


def test_pto_run_on_one_core_leaves_the_second_row_unwritten(files):
    tmp, kernel, x = files
    out = tmp / "y.npy"
    assert pto_run_main([str(kernel), "--in", f"x={tmp / 'x.npy'}", "--in", "k=2", "--out", f"y={out}"]) == 0
    y = np.load(out)
    assert y[0].tolist() == (x[0] * 2).tolist() and (y[1] == -1).all()        # 0xFF fill pattern


def test_pto_run_reports_output_bytes_the_kernel_did_not_write(files, capsys):
    # one core writes row 0 only: row 1 is the launch fill, which pto-run used to return silently
    tmp, kernel, x = files
    assert pto_run_main([str(kernel), "--in", f"x={tmp / 'x.npy'}", "--in", "k=2"]) == 0
    err = capsys.readouterr().err
    assert "pto-run: uninitialized: output 'y': 16 of 32 bytes hold no data the kernel wrote (first at byte 0x10)" \
        in err and "Fix:" in err
    assert pto_run_main([str(kernel), "--in", f"x={tmp / 'x.npy'}", "--in", "k=2", "--cores", "2"]) == 0
    assert "uninitialized" not in capsys.readouterr().err
    # a zero-filled (TIK is_atomic_add) or initialised output starts defined: not reported
    zero = tmp / "zero.pto"
    zero.write_text(KERNEL.replace('pto.io = "out",', 'pto.io = "out", pto.fill = "zero",'))
    assert pto_run_main([str(zero), "--in", f"x={tmp / 'x.npy'}", "--in", "k=2"]) == 0
    assert "uninitialized" not in capsys.readouterr().err


def test_pto_run_does_not_report_unwritten_bytes_of_outputs_that_start_with_the_callers_data(files, capsys):
    # REPORT_UNWRITTEN_OUTPUTS (review340): an inout output, a host buffer and an --alias output start with
    # the caller's array, so the row one core leaves holds defined data; the plain output still is reported
    tmp, kernel, x = files
    inout = tmp / "inout.pto"
    inout.write_text(KERNEL.replace('pto.io = "out",', 'pto.io = "inout",'))
    assert pto_run_main([str(inout), "--in", f"x={tmp / 'x.npy'}", "--in", f"y={tmp / 'x.npy'}", "--in", "k=2"]) == 0
    assert "uninitialized" not in capsys.readouterr().err
    host = tmp / "host.pto"
    host.write_text(KERNEL.replace('{pto.io = "out", pto.shape = [2, 4]}', ''))
    assert pto_run_main([str(host), "--in", f"x={tmp / 'x.npy'}", "--in", f"y={tmp / 'x.npy'}", "--in", "k=2"]) == 0
    assert "uninitialized" not in capsys.readouterr().err
    assert pto_run_main([str(kernel), "--in", f"x={tmp / 'x.npy'}", "--in", "k=2", "--alias", "y=x"]) == 0
    assert "uninitialized" not in capsys.readouterr().err
    assert pto_run_main([str(kernel), "--in", f"x={tmp / 'x.npy'}", "--in", "k=2"]) == 0
    assert "uninitialized: output 'y'" in capsys.readouterr().err


@pytest.mark.parametrize("args,code,message", [
    (["missing.pto"], 2, "kernel file 'missing.pto' does not exist"),
    (["{k}", "--in", "x"], 2, "--in 'x' is not NAME=VALUE"),
    (["{k}", "--in", "x=nofile.npy", "--in", "k=1"], 2, "input file 'nofile.npy' for 'x' does not exist"),
    (["{k}", "--in", "x={x}", "--in", "k=one"], 2, "scalar argument 'k' needs a number"),
    (["{k}", "--in", "x={x}"], 2, "missing k"),
    (["{k}", "--in", "x={x}", "--in", "k=1", "--out", "z=z.npy"], 2, "'z' is not an output"),
    (["{k}", "--in", "q={x}"], 2, "no argument 'q' (its arguments: x, y, k)"),
    (["{k}", "--in", "x={x}", "--in", "k=1", "--target", "nochip"], 2, "unknown target 'nochip'"),
    (["{bad}"], 1, "bad.pto:2:3: expected 'func.func'"),
])
def test_pto_run_errors_are_one_line_messages(files, capsys, args, code, message):
    tmp, kernel, _ = files
    bad = tmp / "bad.pto"
    bad.write_text("module {\n  oops\n}\n")
    argv = [a.format(k=kernel, x=tmp / "x.npy", bad=bad) for a in args]
    assert pto_run_main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith("pto-run: error: ") and message in err and "Traceback" not in err


def test_pto_run_prints_checker_reports(tmp_path, capsys):
    with program("uninit") as k:
        y = k.gm_arg("y", "s32", (2,), io="out")
        u = k.ptr("ub", "s32", 0)
        k.store(y, 0, k.load(u, 0))
    path = tmp_path / "u.pto"
    path.write_text(k.program.to_asm())
    assert pto_run_main([str(path)]) == 0
    assert "pto-run: uninitialized:" in capsys.readouterr().err


def test_setup_cfg_declares_the_console_script():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(os.path.dirname(__file__), "..", "..", "setup.cfg"))
    assert "pto-run = pto_core.cli:pto_run_main" in cfg["options.entry_points"]["console_scripts"]


def test_pto_run_unreadable_files_are_usage_errors_not_tracebacks(files, capsys):
    """An --in file that is a folder, not .npy, pickled or an .npz archive; an --out path in a missing folder;
    a kernel path that is a folder or not UTF-8: one message, exit 2 (1 for text that does not parse)."""
    tmp, kernel, x = files
    (tmp / "garbage.npy").write_bytes(b"hello")
    np.save(tmp / "obj.npy", np.array([1, "a"], object), allow_pickle=True)
    np.savez(tmp / "z.npz", x=x)
    (tmp / "d.npy").mkdir()
    (tmp / "latin.pto").write_bytes(b"module {\n // caf\xe9\n}\n")
    xin = f"x={tmp / 'x.npy'}"
    cases = [
        ([str(kernel), "--in", f"x={tmp}", "--in", "k=1"], 2, "cannot read input file"),
        ([str(kernel), "--in", f"x={tmp / 'garbage.npy'}", "--in", "k=1"], 2, "cannot read input file"),
        ([str(kernel), "--in", f"x={tmp / 'obj.npy'}", "--in", "k=1"], 2, "cannot read input file"),
        ([str(kernel), "--in", f"x={tmp / 'z.npz'}", "--in", "k=1"], 2, "is an .npz archive"),
        ([str(kernel), "--in", xin, "--in", "k=1", "--out", f"y={tmp / 'no' / 'y.npy'}"], 2, "which does not exist"),
        ([str(kernel), "--in", xin, "--in", "k=1", "--out", f"y={tmp / 'd.npy'}"], 2, "is a folder"),
        ([str(tmp)], 2, "cannot read PTO-AS file"),
        ([str(tmp / "latin.pto")], 1, "latin.pto:2:8: byte 0xe9 is not UTF-8"),
    ]
    for argv, code, message in cases:
        assert pto_run_main(argv) == code, argv
        err = capsys.readouterr().err
        assert err.startswith("pto-run: error: ") and message in err and "Fix:" in err and "Traceback" not in err
    assert pto_run_main([str(kernel), "--in", xin, "--in", "k=1", "--out", f"y={tmp / 'y'}"]) == 0   # numpy adds .npy
    assert np.load(tmp / "y.npy").shape == (2, 4)


def test_pto_run_an_output_aliased_twice_is_a_usage_error(tmp_path, capsys):
    """`--alias y=a --alias y=b` used to run with the last alias only (a dict), silently."""
    with program("inplace") as k:
        a = k.gm_arg("a", "s32", (4,))
        b = k.gm_arg("b", "s32", (4,))
        y = k.gm_arg("y", "s32", (4,), io="out")
        with k.for_(0, 4) as i:
            k.store(y, i, k.load(a, i) + k.load(b, i))
    path = tmp_path / "inplace.pto"
    path.write_text(k.program.to_asm())
    for n in "ab":
        np.save(tmp_path / f"{n}.npy", np.arange(4, dtype=np.int32))
    ins = ["--in", f"a={tmp_path / 'a.npy'}", "--in", f"b={tmp_path / 'b.npy'}"]
    assert pto_run_main([str(path), *ins, "--alias", "y=a"]) == 0
    capsys.readouterr()
    assert pto_run_main([str(path), *ins, "--alias", "y=a", "--alias", "y=b"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pto-run: error: ") and "output 'y' aliased twice (onto 'a' and 'b')" in err


def test_pto_run_says_why_an_input_file_is_not_an_array_without_numpys_allow_pickle_advice(files, capsys):
    """A text file given as ``--in`` read 'This file contains pickled (object) data. If you trust the file you
    can load it unsafely using the `allow_pickle=` keyword argument' (numpy's fallback to unpickling): wrong
    for a text file and unsafe advice. It now says the file is no .npy file, or that a .npy holds an object
    array (`cli._not_npy_reason`; user404)."""
    tmp, kernel, x = files
    (tmp / "text.npy").write_text("1 2 3 4\n5 6 7 8\n")
    np.save(tmp / "obj.npy", np.array([1, "a"], object), allow_pickle=True)
    for name, reason in (("text.npy", "it is not a .npy file (it does not start with the .npy magic bytes"),
                         ("obj.npy", "it holds an object array (pickled Python objects), not numbers")):
        assert pto_run_main([str(kernel), "--in", f"x={tmp / name}", "--in", "k=1"]) == 2
        err = capsys.readouterr().err
        assert reason in err and "allow_pickle" not in err and "Fix: write it with numpy.save(" in err, err


def test_pto_run_an_input_file_that_starts_like_a_zip_is_a_usage_error_not_a_traceback(files, capsys):
    """review414: a file starting with a zip header that is no readable zip (a broken .npz, a renamed .xlsx part)
    escaped as zipfile.BadZipFile with a traceback; it is a usage error saying so. The Fix of a name numpy.save
    would extend (data.csv -> data.csv.npy) names the .npy file to write and pass."""
    tmp, kernel, x = files
    (tmp / "broken.npz").write_bytes(b"PK\x03\x04 not really a zip")
    assert pto_run_main([str(kernel), "--in", f"x={tmp / 'broken.npz'}", "--in", "k=1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pto-run: error: ") and "starts like a zip archive" in err and "Traceback" not in err, err
    npy = str(tmp / "broken.npy")
    assert f"Fix: write it with numpy.save({npy!r}, array) and pass --in x={npy}" in err, err


def test_pto_run_without_out_or_print_notes_that_the_outputs_were_not_saved(files, capsys):
    """Named choice NOTE_UNSAVED_OUTPUTS: a forgotten --out ran silently (exit 0, nothing written); pto-run now
    notes it on stderr, exit status unchanged. With --out (any output) or --print there is no note (user404)."""
    tmp, kernel, x = files
    xin = f"x={tmp / 'x.npy'}"
    assert pto_run_main([str(kernel), "--in", xin, "--in", "k=2"]) == 0
    err = capsys.readouterr().err
    assert "pto-run: note: the kernel's outputs (y) were computed but not saved (no --out or --print) Fix: add " \
           "--out NAME=FILE.npy" in err
    for extra in (["--out", f"y={tmp / 'y.npy'}"], ["--print"]):
        assert pto_run_main([str(kernel), "--in", xin, "--in", "k=2", *extra]) == 0
        assert "not saved" not in capsys.readouterr().err


def test_the_unsaved_outputs_note_is_the_named_choice(files, capsys, monkeypatch):
    """review414: pto_programs.md names the choice NOTE_UNSAVED_OUTPUTS, but cli.py had no such constant."""
    from pto_core import cli
    tmp, kernel, x = files
    monkeypatch.setattr(cli, "NOTE_UNSAVED_OUTPUTS", False)
    assert pto_run_main([str(kernel), "--in", f"x={tmp / 'x.npy'}", "--in", "k=2"]) == 0
    assert "not saved" not in capsys.readouterr().err


def test_pto_run_names_the_pto_file_line_next_to_an_ops_loc(tmp_path, capsys):
    """Named choice LOC_NAMES_TEXT_LINE: in a file `tik-migrate -o` wrote, each op carries
    ``loc("script.py":line)``; an error named only the script's line, so a user who edited the .pto file (here:
    no V -> MTE3 pair) was sent to the Python source. It now names the .pto line too, for the failing op and
    the earlier op of the Fix; text parsed from a string keeps the loc alone (user404)."""
    from pto_core import asm, pto
    from pto_core.errors import HazardError, Provenance
    with program("k", target="A2A3") as k:
        x, y = k.gm_arg("x", "f16", (128,)), k.gm_arg("y", "f16", (128,), io="out")
        u = k.ptr("ub", "f16", 0)
        with k.at(Provenance("user.py", 7, "tik.data_move")):
            pto.mte_gm_ub(x, u, 0, 256, nburst=(1, 256, 256))
        with k.at(Provenance("user.py", 8, "tik.data_move")):
            pto.mte_ub_gm(u, y, 256, nburst=(1, 256, 256))
    text = k.program.to_asm(locations=True)
    lines = text.splitlines()
    load = 1 + next(i for i, t in enumerate(lines) if "pto.mte_gm_ub" in t)
    store = 1 + next(i for i, t in enumerate(lines) if "pto.mte_ub_gm" in t)
    path = tmp_path / "k.pto"
    path.write_text(text)
    np.save(tmp_path / "x.npy", np.ones(128, np.float16))
    assert pto_run_main([str(path), "--in", f"x={tmp_path / 'x.npy'}", "--out", f"y={tmp_path / 'y.npy'}"]) == 1
    err = capsys.readouterr().err
    assert f"pto-run: error: user.py:8 in `tik.data_move` ({path}:{store}): " in err, err
    assert f"pto.mte_gm_ub at user.py:7 (`tik.data_move`) ({path}:{load})" in err, err
    with pytest.raises(HazardError) as e:             # parsed from a string: no file to point into
        asm.parse(text).run({"x": np.ones(128, np.float16)})
    assert str(e.value).startswith("user.py:8 in `tik.data_move`: ") and ".pto" not in str(e.value)


def test_the_pto_file_line_of_an_op_is_where_the_op_starts_not_where_its_loc_is(tmp_path, capsys):
    """LOC_NAMES_TEXT_LINE (review414): an op whose ``loc(...)`` a user moved to the next line when editing the file
    was reported at the loc's line, one past the op (an op without a loc is reported at its own line); so was an
    scf.for, at its closing brace. Both now name the line the op starts on."""
    from pto_core import pto
    from pto_core.errors import Provenance
    with program("k", target="A2A3") as k:
        x, y = k.gm_arg("x", "f16", (128,)), k.gm_arg("y", "f16", (128,), io="out")
        u = k.ptr("ub", "f16", 0)
        with k.at(Provenance("user.py", 7, "tik.data_move")):
            pto.mte_gm_ub(x, u, 0, 256, nburst=(1, 256, 256))
        with k.at(Provenance("user.py", 8, "tik.data_move")):
            pto.mte_ub_gm(u, y, 256, nburst=(1, 256, 256))
    lines = k.program.to_asm(locations=True).splitlines()
    store = next(i for i, t in enumerate(lines) if "pto.mte_ub_gm" in t)
    at = lines[store].index(" loc(")
    lines[store:store + 1] = [lines[store][:at], "        " + lines[store][at + 1:]]     # the loc on its own line
    path = tmp_path / "k.pto"
    path.write_text("\n".join(lines) + "\n")
    np.save(tmp_path / "x.npy", np.ones(128, np.float16))
    assert pto_run_main([str(path), "--in", f"x={tmp_path / 'x.npy'}", "--out", f"y={tmp_path / 'y.npy'}"]) == 1
    err = capsys.readouterr().err
    assert f"pto-run: error: user.py:8 in `tik.data_move` ({path}:{store + 1}): " in err, err
    loop = ('module {\n  func.func @k(%s: i64) {\n    %c0 = arith.constant 0 : i64\n'
            '    %c2 = arith.constant 2 : i64\n    scf.for %i = %c0 to %c2 step %s : i64 {\n'
            '      pto.barrier[<PIPE_ALL>]\n    } loc("user.py":5:0)\n    return\n  }\n}\n')
    path.write_text(loop)
    assert pto_run_main([str(path), "--in", "s=0"]) == 1                    # step 0: reported at the loop
    err = capsys.readouterr().err
    assert f"user.py:5 ({path}:5): operand step" in err, err
