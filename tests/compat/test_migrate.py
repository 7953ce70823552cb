"""tik-migrate: the per-call listing, PTO-AS output, and the round trip through pto-run
(outputs bit-identical to start_debug's for every example kernel)."""
import glob
import os
import re
import textwrap

import numpy as np
import pytest

from pto_core.asm import parse_file
from pto_core.cli import pto_run_main
from tbe_compat import migrate
from tbe_compat.compare import compare_arrays
from tbe_compat.migrate import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(os.path.basename(p) for pattern in ("tik_*.py", "migrate_*.py")
                  for p in glob.glob(os.path.join(ROOT, "examples", pattern)))
#: script arguments of examples that take some
EXAMPLE_ARGS = {"tik_dynamic_shape.py": ["333"]}


def _pto_run_commands(err: str) -> list:
    return [line.split("tik-migrate: pto-run ", 1)[1].split(" ") for line in err.splitlines()
            if line.startswith("tik-migrate: pto-run ")]


@pytest.mark.parametrize("example", EXAMPLES)
def test_pto_run_reproduces_start_debug_bit_for_bit(example, tmp_path, capsys):
    script = os.path.join(ROOT, "examples", example)
    status = main(["--save-io", str(tmp_path), "--check", script, "--", *EXAMPLE_ARGS.get(example, [])])
    err = capsys.readouterr().err
    assert status == 0, err
    commands = _pto_run_commands(err)
    assert commands, err
    for argv in commands:
        assert pto_run_main(argv) == 0
        outs = [a.split("=", 1) for a in argv[argv.index("--out"):] if "=" in a]
        for name, path in outs:
            expected = np.load(path.replace(".out.npy", ".expected.npy"))
            got = np.load(path)
            assert compare_arrays(name, expected, got) is None
            assert got.tobytes() != b"\xff" * got.nbytes          # really written, not the GM fill


SCRIPT = '''\
import numpy as np
from tbe import tik

def kernel(name="k"):
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    with ti.for_range(0, 2) as i:
        ti.data_move(ub, x[i * 128],
                     0, 1, 8, 0, 0)
        ti.data_move(y[i * 128], ub, 0, 1, 8, 0, 0)
    ti.BuildCCE(kernel_name=name, inputs=[x], outputs=[y])
    return ti

if __name__ == "__main__":
    for name in NAMES:
        ti = kernel(name)
        a = np.arange(256, dtype=np.float16)
        y, = ti.tikdb.start_debug({"x": a}, False)
        assert (y == a).all()
'''


def _script(tmp_path, names=("k",), extra=""):
    p = tmp_path / "kern.py"
    p.write_text(SCRIPT.replace("NAMES", repr(list(names))) + extra)
    return str(p)


def test_listing_rows_show_each_call_with_its_pto_lines(tmp_path):
    trace = migrate.trace_script(_script(tmp_path))
    assert trace.status == 0 and list(trace.kernels) == ["k"] and len(trace.runs["k"]) == 1
    rows = migrate.listing(trace.kernels["k"])
    by_api = {}
    for r in rows:
        by_api.setdefault(r.api, []).append(r)
    assert [r.line for r in rows if r.file] == sorted(r.line for r in rows if r.file)
    loop = by_api["tik.for_range"][0]
    assert loop.source == "with ti.for_range(0, 2) as i:"
    assert loop.pto[0].startswith("scf.for ") and loop.pto[1].strip() == "..." and loop.pto[-1] == "}"
    load, store = by_api["tik.data_move"]
    assert load.source == "ti.data_move(ub, x[i * 128],\n             0, 1, 8, 0, 0)"     # the whole call
    assert any(t.startswith("pto.mte_gm_ub ") for t in load.pto)
    assert any("hoisted to the kernel entry" in t and "pto.castptr" in t for t in load.pto)
    assert store.pto[0] == "pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]"   # auto-sync before it
    assert "kernel argument %x" in by_api["tik.Tensor"][0].note
    assert "ub bytes [0x0, 0x100)" in by_api["tik.Tensor"][2].note
    build = by_api["tik.BuildCCE"][0]
    assert build.pto[0].startswith("module attributes") and "func.func @k(" in build.pto[1]
    assert "pto-run" in by_api["tikdb.start_debug"][0].note


def test_sequence_grouping_and_constants(tmp_path):
    tik_instance = migrate.trace_script(_script(tmp_path)).kernels["k"]
    rows = migrate.listing(tik_instance, group="sequence", constants=True)
    apis = [r.api for r in rows]
    assert apis[0] == "tik.BuildCCE" and "(kernel entry)" in apis
    assert any("arith.constant" in t for r in rows if r.api == "(kernel entry)" for t in r.pto)
    # program order: the loop's opening row, its body's rows, its closing brace's row
    first, last = apis.index("tik.for_range"), len(apis) - 1 - apis[::-1].index("tik.for_range")
    assert apis[first + 1:last] == ["tik.data_move", "tik.data_move"]
    assert rows[last].pto[-1] == "}" and "set_flag[<PIPE_MTE3>, <PIPE_MTE2>" in rows[last].pto[0]  # back edge
    assert rows[first].pto[0].startswith("scf.for")
    with pytest.raises(Exception, match="group"):
        migrate.listing(tik_instance, group="random")


def test_text_and_markdown_formats(tmp_path):
    rows = migrate.listing(migrate.trace_script(_script(tmp_path)).kernels["k"])
    text = migrate.format_rows(rows, "text", width=60)
    assert "| TIK call" in text and "pto.mte_gm_ub" in text
    assert max(len(ln) for ln in text.splitlines()) < 60 + 120
    md = migrate.format_rows(rows, "markdown")
    assert md.startswith("<table>") and "&lt;PIPE_MTE2&gt;" in md and "<pre>with ti.for_range(0, 2) as i:</pre>" in md


def test_cli_output_file_and_kernel_selection(tmp_path, capsys):
    script = _script(tmp_path, names=("k1", "k2"))
    out = tmp_path / "k2.pto"
    assert main([script, "--kernel", "k2", "-o", str(out)]) == 0
    text = out.read_text()
    assert "func.func @k2(" in text and 'loc("tik.data_move"' in text
    assert parse_file(str(out)).name == "k2"
    assert main([script, "--kernel", "k2", "--no-locations", "-o", str(out)]) == 0
    assert "loc(" not in out.read_text()
    capsys.readouterr()
    assert main([script, "-o", str(out)]) == 2
    assert "choose one with --kernel" in capsys.readouterr().err
    assert main([script, "--kernel", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no kernel named 'nope'" in err and "k1, k2" in err
    assert main([str(tmp_path / "missing.py")]) == 2


def test_cli_output_write_failure_leaves_the_existing_file_untouched(tmp_path, capsys, monkeypatch):
    """-o writes all or nothing (migrate.write_text_atomic): a write that fails half way (here text the encoder
    refuses, then a failing rename) keeps the old file and leaves no temporary file behind; it truncated the old
    file before."""
    script = _script(tmp_path)
    out = tmp_path / "k.pto"
    out.write_text("old contents\n")
    before = sorted(os.listdir(tmp_path))
    monkeypatch.setattr(migrate, "kernel_asm", lambda *a, **k: "func.func @k() {\n" * 2000 + "\ud800")
    assert main([script, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "left as it was" in err and "Fix:" in err
    assert out.read_text() == "old contents\n"
    assert sorted(os.listdir(tmp_path)) == before

    def refuse(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(migrate, "kernel_asm", lambda *a, **k: "new contents\n")
    monkeypatch.setattr(migrate.os, "replace", refuse)
    assert main([script, "-o", str(out)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert out.read_text() == "old contents\n"
    assert sorted(os.listdir(tmp_path)) == before
    monkeypatch.undo()
    fresh = tmp_path / "fresh.pto"
    assert main([script, "-o", str(fresh)]) == 0 and "func.func @k(" in fresh.read_text()
    assert oct(fresh.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def test_cli_output_writes_the_file_a_symlink_names_and_into_pipes_and_devices(tmp_path, capsys):
    """-o replaces the file a symbolic link names (the link stays), and writes a path that is no regular file (a
    named pipe here; /dev/null, /dev/stdout) as open(path, "w") does (review423): write_text_atomic replaced the
    link and the pipe by a regular file, and an -o /dev/null run by root replaced the device node."""
    import stat
    import threading
    script = _script(tmp_path)
    real = tmp_path / "real.pto"
    real.write_text("old contents\n")
    link = tmp_path / "link.pto"
    link.symlink_to(real)
    assert main([script, "-o", str(link)]) == 0
    assert link.is_symlink() and "func.func @k(" in real.read_text()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()), daemon=True)
    reader.start()
    assert main([script, "-o", str(fifo)]) == 0
    reader.join(30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and got and "func.func @k(" in got[0]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_cli_output_into_a_folder_that_takes_no_new_file_overwrites_the_writable_file(tmp_path, capsys,
                                                                                    monkeypatch):
    """A writable -o file in a folder without write permission is overwritten in place (review423): the temporary
    file cannot be made there, and the write, which worked before k419, was refused (exit 2)."""
    script = _script(tmp_path)
    out = tmp_path / "k.pto"
    out.write_text("old contents\n")

    def no_new_files(*a, **k):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(migrate.tempfile, "mkstemp", no_new_files)
    assert main([script, "-o", str(out)]) == 0
    assert "func.func @k(" in out.read_text()
    fresh = tmp_path / "fresh.pto"                  # no file to overwrite: refused, with the reason
    assert main([script, "-o", str(fresh)]) == 2
    assert "Permission denied" in capsys.readouterr().err and not fresh.exists()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_cli_reports_a_failing_script_and_a_script_without_kernels(tmp_path, capsys):
    failing = _script(tmp_path, extra="\nraise SystemExit(3)\n")
    assert main([failing]) == 1
    assert "exited with status 3" in capsys.readouterr().err
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert main([str(empty)]) == 1
    assert "built no kernel" in capsys.readouterr().err


def test_dynamic_shapes_need_a_run(tmp_path, capsys):
    p = tmp_path / "dyn.py"
    p.write_text(textwrap.dedent('''\
        from tbe import tik
        ti = tik.Tik()
        n = ti.InputScalar("int32", name="n")
        x = ti.Tensor("int32", (n,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("int32", (n,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x, 0, 1, 1, 0, 0)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
        ti.BuildCCE(kernel_name="dyn", inputs=[x, n], outputs=[y])
        '''))
    assert main([str(p), "-o", str(tmp_path / "d.pto")]) == 2
    err = capsys.readouterr().err
    assert "shape depends on InputScalars (x, y)" in err and "start_debug" in err


def test_check_round_trip_reports_a_difference(tmp_path):
    trace = migrate.trace_script(_script(tmp_path))
    ti, run = trace.kernels["k"], trace.runs["k"][0]
    assert migrate.check_round_trip(ti, run) == []
    doctored = run._replace(results={"y": run.results["y"].copy()})
    doctored.results["y"][37] = 5
    reports = migrate.check_round_trip(ti, doctored)
    assert len(reports) == 1 and "first at index 37" in reports[0] and "expected 5.0" in reports[0]


def test_expand_shows_vector_loops_of_pto_ub_ops(tmp_path, capsys):
    p = tmp_path / "vec.py"
    p.write_text(textwrap.dedent('''\
        import numpy as np
        from tbe import tik
        from pto_core import pto
        ti = tik.Tik()
        x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x, 0, 1, 8, 0, 0)
        pto.ub.vadds(ub.pto_ptr(), ub.pto_ptr(), 2.0,
                     1)
        ti.data_move(y, ub, 0, 1, 8, 0, 0)
        ti.BuildCCE(kernel_name="vec", inputs=[x], outputs=[y])
        a = np.arange(128, dtype=np.float16)
        assert (ti.tikdb.start_debug({"x": a}, False)[0] == a + 2).all()
        '''))
    assert main([str(p), "--expand", "--check", "--width", "0"]) == 0
    out = capsys.readouterr()
    assert "pto.ub.vadds(ub.pto_ptr(), ub.pto_ptr(), 2.0," in out.out and "pto.vlds" in out.out
    assert "// %dst = %" in out.out
    assert "equal its start_debug run bit for bit" in out.err


def test_call_source_fallbacks(tmp_path):
    p = tmp_path / "src.py"
    p.write_text("a = 1\nb = [a,\n     2]\nwith open('x') as f:\n    pass\n")
    assert migrate.call_source(str(p), 2, "tik.nothing") == "b = [a,\n     2]"
    assert migrate.call_source(str(p), 4, "tik.nothing") == "with open('x') as f:"
    assert migrate.call_source(str(p), 4, "tik.open") == "with open('x') as f:"
    assert migrate.call_source(str(tmp_path / "gone.py"), 1, "tik.x") == "?"


def _check_script(tmp_path, body, feed, name="rt", debug_kw=""):
    """Trace a small self-written kernel and run the PTO-AS round trip on its start_debug run."""
    p = tmp_path / f"{name}.py"
    p.write_text("import numpy as np\nfrom tbe import tik\n" + textwrap.dedent(body) +
                 f"\nti.BuildCCE(kernel_name={name!r}, inputs=[x], outputs=[y])\n"
                 f"ti.tikdb.start_debug({feed}, False{debug_kw})\n")
    trace = migrate.trace_script(str(p))
    assert trace.status == 0
    return migrate.check_round_trip(trace.kernels[name], trace.runs[name][-1])


def test_check_round_trip_register_set_on_one_path_only(tmp_path):
    # a Scalar assigned only inside an if (and read only there): the printed scf.if yields ub.poison on the
    # other path, and the enclosing scf.if copies that undefined value on; the copy must not be a read
    body = """
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    a = ti.Scalar("int32", name="a")
    b = ti.Scalar("int32", name="b")
    a.set_as(ub[0])
    with ti.if_scope(a > 0):
        with ti.if_scope(a > 1):
            b.set_as(a * 3)
    with ti.if_scope(a > 1):
        ub[1].set_as(b)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    """
    for first in (5, 1, -1):
        assert _check_script(tmp_path, body, f"{{'x': np.arange({first}, {first} + 8, dtype=np.int32)}}") == []


def test_check_round_trip_mask_words_with_bit_63(tmp_path):
    # Python-int mask words >= 2**63 (CANN's 2**64 - 256 style masks) print as ui64 constants and read back as
    # the same words; as i64 literals they came back negative and the op refused them
    body = """
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    ti.vector_dup([2**64 - 256, 2**63 + 5], ub, 7.0, 1, 1, 8)
    ti.vec_adds([2**63, 2**64 - 1], ub, ub, 1.0, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    """
    assert _check_script(tmp_path, body, "{'x': np.arange(128, dtype=np.float16)}") == []


#: an in-place ("ref") kernel: y is placed on x's memory (start_debug(inplace=)); it adds 1 to the
#: first 8 elements it reads through y, the other 8 keep x's data
INPLACE_BODY = """
ti = tik.Tik()
x = ti.Tensor("float32", (16,), name="x", scope=tik.scope_gm)
y = ti.Tensor("float32", (16,), name="y", scope=tik.scope_gm)
ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
ti.data_move(ub, y, 0, 1, 1, 0, 0)
ti.vec_adds(8, ub, ub, 1.0, 1, 8, 8)
ti.data_move(y, ub, 0, 1, 1, 0, 0)
"""


def test_check_round_trip_replays_an_inplace_output_on_its_input(tmp_path):
    # the replay places y on x's memory as start_debug(inplace=) did; it ran with y at the launch fill
    feed = "{'x': np.arange(16, dtype=np.float32) * 3}"
    assert _check_script(tmp_path, INPLACE_BODY, feed, debug_kw=", inplace={'y': 'x'}") == []


def test_save_io_pto_run_command_of_an_inplace_run_reproduces_it(tmp_path, capsys):
    p = tmp_path / "inpl.py"
    p.write_text("import numpy as np\nfrom tbe import tik\n" + INPLACE_BODY +
                 "ti.BuildCCE(kernel_name='inpl', inputs=[x], outputs=[y])\n"
                 "out, = ti.tikdb.start_debug({'x': np.arange(16, dtype=np.float32) * 3}, False, inplace={'y': 'x'})\n"
                 "assert (out == np.r_[np.arange(8) * 3 + 1, np.arange(8, 16) * 3]).all()\n")
    assert main(["--save-io", str(tmp_path / "io"), "--check", str(p)]) == 0
    argv, = _pto_run_commands(capsys.readouterr().err)
    assert argv[argv.index("--alias") + 1] == "y=x"
    assert pto_run_main(argv) == 0
    out = argv[-1].split("=", 1)[1]
    assert np.array_equal(np.load(out), np.r_[np.arange(8) * 3 + 1, np.arange(8, 16) * 3])
    bad = argv[:argv.index("--alias")] + ["--alias", "y=nope"] + argv[argv.index("--alias") + 2:]
    assert pto_run_main(bad) == 2
    assert "pto-run: error: " in capsys.readouterr().err


#: every block of 4 adds its index + 1 to row 0 of y (unguarded: on a 4-block launch they race); the host
#: launches 1 block (start_debug(block_dim=1))
BLOCK_DIM_BODY = """
ti = tik.Tik()
x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
with ti.for_range(0, 4, block_num=4) as b:
    ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.vec_adds(8, ub, ub, b + 1.0, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
"""


def test_check_and_save_io_replay_a_block_dim_run_on_the_same_blocks(tmp_path, capsys):
    p = tmp_path / "bdim.py"
    p.write_text("import numpy as np\nfrom tbe import tik\n" + BLOCK_DIM_BODY +
                 "ti.BuildCCE(kernel_name='bdim', inputs=[x], outputs=[y])\n"
                 "out, = ti.tikdb.start_debug({'x': np.arange(8, dtype=np.float32)}, False, block_dim=1)\n"
                 "assert (out == np.arange(8) + 1).all()\n")
    assert main(["--save-io", str(tmp_path / "io"), "--check", str(p)]) == 0
    argv, = _pto_run_commands(capsys.readouterr().err)
    assert argv[argv.index("--block-dim") + 1] == "1"
    assert pto_run_main(argv) == 0
    out = argv[-1].split("=", 1)[1]
    assert np.array_equal(np.load(out), np.arange(8) + 1.0)


def test_check_round_trips_every_start_debug_run(tmp_path, capsys, monkeypatch):
    """Two runs of one kernel (one block, then all 4): --check replays both, not only the last."""
    p = tmp_path / "bdim2.py"
    p.write_text("import numpy as np\nimport warnings\nfrom tbe import tik\n" + BLOCK_DIM_BODY +
                 "ti.BuildCCE(kernel_name='bdim2', inputs=[x], outputs=[y])\n"
                 "ti.tikdb.start_debug({'x': np.arange(8, dtype=np.float32)}, False, block_dim=1)\n"
                 "with warnings.catch_warnings():\n"
                 "    warnings.simplefilter('ignore')\n"
                 "    ti.tikdb.start_debug({'x': np.arange(8, dtype=np.float32) * 2}, False)\n")
    seen = []
    real = migrate.check_round_trip
    monkeypatch.setattr(migrate, "check_round_trip", lambda tik, run, **kw: seen.append(run.block_dim) or
                        real(tik, run, **kw))
    from pto_core.errors import GmRaceWarning
    with pytest.warns(GmRaceWarning):               # the 4-block run's replay races as the run did
        assert main(["--check", str(p)]) == 0
    assert seen == [1, None]
    assert "kernel bdim2: PTO-AS outputs equal all 2 start_debug runs bit for bit (y)" in capsys.readouterr().err


def test_check_goes_on_after_a_kernel_whose_round_trip_fails(tmp_path, capsys, monkeypatch):
    from pto_core.errors import UnsupportedOp
    real = migrate.check_round_trip

    def check(tik, run, **kw):
        if tik.build.kernel_name == "a":
            raise UnsupportedOp("pto.something is not parsed", operand="op")
        return real(tik, run, **kw)

    monkeypatch.setattr(migrate, "check_round_trip", check)
    assert main([_script(tmp_path, names=("a", "b")), "--check"]) == 1
    err = capsys.readouterr().err
    assert "kernel a: the PTO-AS round trip failed (run 1 of 1): " in err and "pto.something is not parsed" in err
    assert "kernel b: PTO-AS outputs equal its start_debug run bit for bit (y)" in err


def test_expand_of_a_traced_kernel_uses_the_operands_types(tmp_path, capsys):
    """A traced kernel's ops take pointer expressions, not machine pointers: the expansion still shows
    the f32 lane count (64), the b32 predicate and typed loads/stores (was: f16's 128 lanes, untyped)."""
    p = tmp_path / "vec32.py"
    p.write_text(textwrap.dedent('''\
        import numpy as np
        from tbe import tik
        ti = tik.Tik()
        x = ti.Tensor("float32", (256,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float32", (256,), name="y", scope=tik.scope_gm)
        a = ti.Tensor("float32", (256,), name="a", scope=tik.scope_ubuf)
        h = ti.Tensor("float16", (256,), name="h", scope=tik.scope_ubuf)
        b = ti.Tensor("float32", (64,), name="b", scope=tik.scope_ubuf)
        ti.data_move(a, x, 0, 1, 32, 0, 0)
        ti.vec_add(16, a, a, a, 4, 8, 8, 8)
        ti.vec_conv(64, "none", h, a, 4, 4, 8)
        ti.vec_conv(64, "", a, h, 4, 8, 4)
        ti.vec_dup(64, b, 1.5, 1, 8)
        ti.vcadd(64, b, a, 4, 1, 1, 8)
        ti.data_move(y, a, 0, 1, 32, 0, 0)
        ti.BuildCCE(kernel_name="vec32", inputs=[x], outputs=[y])
        ti.tikdb.start_debug({"x": np.arange(256, dtype=np.float32)}, False)
        '''))
    assert main([str(p), "--expand", "--width", "0"]) == 0
    out = capsys.readouterr().out
    lanes = re.findall(r"// pto\.ub\.(\w+): \d+ repeats x (\d+) lanes", out)
    assert sorted(lanes) == [("vadd", "64"), ("vconv", "64"), ("vconv", "64"), ("vector_dup", "64")], lanes
    assert 'pto.pge_b32 "PAT_VL16"' in out and "pto.pge_b16" not in out
    assert "!pto.vreg<64xf32>" in out and "pto.vlds %src0[%o_src0] {" in out


def test_call_source_indexes_a_script_once(tmp_path, monkeypatch):
    # a listing has one row per TIK call: each row must not walk the whole script's tree again
    # (a 500-row one_hot listing took ~50 s that way); the answers stay those of the full walk
    p = tmp_path / "many.py"
    body = "".join(f"tik_instance.data_move(dst[{i}], src,\n    0, 1, {i}, 0, 0)\n" for i in range(50))
    p.write_text("x = 'é'; tik_instance.vec_add(64, d, s0, s1, 1, 8, 8, 8)\n" + body
                 + "for i in range(2):\n    pass\n")
    first = migrate.call_source(str(p), 1, "tik.vec_add")
    assert first == "tik_instance.vec_add(64, d, s0, s1, 1, 8, 8, 8)"

    calls = []
    for fn in ("walk", "get_source_segment"):
        real = getattr(migrate.ast, fn)
        monkeypatch.setattr(migrate.ast, fn, lambda *a, _r=real, _n=fn, **k: calls.append(_n) or _r(*a, **k))
    got = [migrate.call_source(str(p), 4, "tik.data_move"), migrate.call_source(str(p), 101, "tik.data_move"),
           migrate.call_source(str(p), 102, "tik.for_range")]
    monkeypatch.undo()
    assert calls == []
    assert got == ["tik_instance.data_move(dst[1], src,\n    0, 1, 1, 0, 0)",
                   "tik_instance.data_move(dst[49], src,\n    0, 1, 49, 0, 0)", "for i in range(2):"]


def test_cli_unwritable_output_paths_are_usage_errors(tmp_path, capsys):
    script = _script(tmp_path, names=("k1",))
    assert main([script, "-o", str(tmp_path / "no" / "k.pto")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Fix:" in err and "Traceback" not in err
    assert main([script, "-o", str(tmp_path)]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_text_table_keeps_the_indentation_of_a_cells_first_line():
    """A sequence row that starts inside a loop body (its first PTO-AS line indented) keeps that indent
    (tabulate strips cell whitespace unless told not to: the first line sat at column 0, the rest at 2)."""
    rows = [migrate.Row("k.py", 3, "tik.for_range", "with ti.for_range(0, 2):",
                        ["  pto.set_flag[<PIPE_MTE3>, <PIPE_V>, <EVENT_ID0>]", "}"])]
    text = migrate.format_rows(rows, "text")
    cell = [ln.split("|")[2] for ln in text.splitlines() if "set_flag" in ln][0]
    assert cell.startswith("   pto.set_flag")                   # the table's one space of padding + 2


def test_check_replays_each_run_of_a_dynamic_kernel_with_that_runs_shapes(tmp_path, capsys):
    """Two runs with different InputScalar shapes: each replay's PTO-AS declares its own run's shapes
    (the PTO-AS of the last run refused the first run's inputs: 'must have shape (32,), got (16,)')."""
    p = tmp_path / "dyn2.py"
    p.write_text(textwrap.dedent('''\
        import numpy as np
        from tbe import tik
        ti = tik.Tik()
        n = ti.InputScalar("int32", name="n")
        x = ti.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
        with ti.for_range(0, n // 8) as i:
            ti.data_move(ub, x[i * 8], 0, 1, 1, 0, 0)
            ti.vec_adds(8, ub, ub, 1.0, 1, 8, 8)
            ti.data_move(y[i * 8], ub, 0, 1, 1, 0, 0)
        ti.BuildCCE(kernel_name="dyn2", inputs=[x, n], outputs=[y])
        for size in (16, 32):
            ti.tikdb.start_debug({"x": np.arange(size, dtype=np.float32), "n": size}, False)
        '''))
    assert main(["--check", "-o", str(tmp_path / "d.pto"), str(p)]) == 0
    assert "kernel dyn2: PTO-AS outputs equal all 2 start_debug runs bit for bit (y)" in capsys.readouterr().err
    assert "pto.shape = [32]" in (tmp_path / "d.pto").read_text()     # -o: the last run's shapes


def test_check_and_save_io_keep_the_outputs_as_start_debug_returned_them(tmp_path, capsys):
    """A script that changes start_debug's output (and its input array) in place afterwards: --check compared
    against the changed array (a false 'outputs differ') and --save-io saved it as expected."""
    p = tmp_path / "mut.py"
    p.write_text(textwrap.dedent('''\
        import numpy as np
        from tbe import tik
        ti = tik.Tik()
        x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x, 0, 1, 1, 0, 0)
        ti.vec_adds(8, ub, ub, 1.0, 1, 8, 8)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
        ti.BuildCCE(kernel_name="mut", inputs=[x], outputs=[y])
        xin = np.arange(8, dtype=np.float32)
        out, = ti.tikdb.start_debug({"x": xin}, False)
        out *= 100
        xin[:] = -5
        '''))
    assert main(["--check", "--save-io", str(tmp_path / "io"), str(p)]) == 0
    assert "kernel mut: PTO-AS outputs equal its start_debug run bit for bit (y)" in capsys.readouterr().err
    assert np.array_equal(np.load(tmp_path / "io" / "mut.y.expected.npy"), np.arange(8) + 1.0)
    assert np.array_equal(np.load(tmp_path / "io" / "mut.x.npy"), np.arange(8))


def test_check_replays_the_runs_of_every_build_of_a_kernel_name(tmp_path, capsys, monkeypatch):
    """A script that builds its kernel once per shape (one tik.Tik per call, as op wrappers do) and runs each
    build: --check replays every run against the build it ran, not only the last build's run (it reported
    'equal its start_debug run' after checking one of three)."""
    p = tmp_path / "rebuilt.py"
    p.write_text(textwrap.dedent('''\
        import numpy as np
        from tbe import tik

        def build(n):
            ti = tik.Tik()
            x = ti.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
            y = ti.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
            ub = ti.Tensor("float32", (n,), name="ub", scope=tik.scope_ubuf)
            ti.data_move(ub, x, 0, 1, n // 8, 0, 0)
            ti.vec_adds(8, ub, ub, 1.0, n // 8, 1, 1)
            ti.data_move(y, ub, 0, 1, n // 8, 0, 0)
            ti.BuildCCE(kernel_name="rebuilt", inputs=[x], outputs=[y])
            return ti

        for size in (8, 16, 24):
            build(size).tikdb.start_debug({"x": np.arange(size, dtype=np.float32)}, False)
        '''))
    seen = []
    real = migrate.check_round_trip
    monkeypatch.setattr(migrate, "check_round_trip", lambda tik, run, **kw: seen.append(
        (run.tik is tik, run.inputs["x"].size)) or real(tik, run, **kw))
    assert main(["--check", "-o", str(tmp_path / "r.pto"), str(p)]) == 0
    assert seen == [(True, 8), (True, 16), (True, 24)]
    assert "kernel rebuilt: PTO-AS outputs equal all 3 start_debug runs (of 3 builds) bit for bit (y)" in \
        capsys.readouterr().err
    assert "pto.shape = [24]" in (tmp_path / "r.pto").read_text()     # -o: the last build


def test_check_fails_when_the_last_build_of_a_kernel_name_never_ran(tmp_path, capsys):
    """Builds 8 (run) then 16 (never run): the listed / -o text is the 16 build, which --check could not compare.
    It reported 'equal its start_debug run' with status 0 (the earlier build's run); before the per-build
    replay it said 'no start_debug run' with status 1."""
    p = tmp_path / "lastnorun.py"
    p.write_text(textwrap.dedent('''\
        import numpy as np
        from tbe import tik

        def build(n):
            ti = tik.Tik()
            x = ti.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
            y = ti.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
            ub = ti.Tensor("float32", (n,), name="ub", scope=tik.scope_ubuf)
            ti.data_move(ub, x, 0, 1, n // 8, 0, 0)
            ti.vec_adds(8, ub, ub, 1.0, n // 8, 1, 1)
            ti.data_move(y, ub, 0, 1, n // 8, 0, 0)
            ti.BuildCCE(kernel_name="lastnorun", inputs=[x], outputs=[y])
            return ti

        build(8).tikdb.start_debug({"x": np.arange(8, dtype=np.float32)}, False)
        build(16)
        '''))
    assert main(["--check", str(p)]) == 1
    err = capsys.readouterr().err
    assert "kernel lastnorun: its last build (the text listed / written) has no start_debug run" in err
    assert "PTO-AS outputs equal its start_debug run" not in err


def test_check_round_trip_keeps_the_reason_of_an_undefined_scalar_array_read(tmp_path):
    # tik.all(i < 4, arr[i] > 6) reads arr[i] with i == 4 (outside the ScalarArray) on the last trip: the value is
    # undefined with a reason (SCALAR_ARRAY_RUNTIME_INDEX), an error only where it is used, and the short-circuit
    # never uses it. The printed ub.poison keeps the reason, so the parsed text runs the same (it raised).
    body = """
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    arr = ti.ScalarArray("int32", 4, name="arr", init_value=[5, 7, 9, 3])
    cnt = ti.Scalar("int32", name="cnt", init_value=0)
    with ti.for_range(0, 5) as i:
        with ti.if_scope(tik.all(i < 4, arr[i] > 6)):
            cnt.set_as(cnt + 1)
    ub[0].set_as(cnt)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    """
    assert _check_script(tmp_path, body, "{'x': np.arange(8, dtype=np.int32)}") == []


def test_save_io_pto_run_command_of_a_debug_print_kernel_runs(tmp_path, capsys):
    """The printed pto-run command of a kernel with tikdb.debug_print allows its pto.debug_eval (the user's own
    script, DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED); one without keeps the default."""
    body = ("import numpy as np\nfrom tbe import tik\nti = tik.Tik()\n"
            "x = ti.Tensor('float32', (8,), name='x', scope=tik.scope_gm)\n"
            "y = ti.Tensor('float32', (8,), name='y', scope=tik.scope_gm)\n"
            "ub = ti.Tensor('float32', (8,), name='ub', scope=tik.scope_ubuf)\n"
            "ti.data_move(ub, x, 0, 1, 1, 0, 0)\n"
            "with ti.for_range(0, 2) as i:\n    PRINT\n"
            "ti.data_move(y, ub, 0, 1, 1, 0, 0)\n"
            "ti.BuildCCE(kernel_name='dbg', inputs=[x], outputs=[y])\n"
            "ti.tikdb.start_debug({'x': np.arange(8, dtype=np.float32)}, False)\n")
    for line, allowed in (("ti.tikdb.debug_print('i, ub.sum()')", True), ("ti.vec_adds(8, ub, ub, 0.0, 1, 8, 8)", False)):
        p = tmp_path / f"k{allowed}.py"
        p.write_text(body.replace("PRINT", line))
        assert main(["--save-io", str(tmp_path / f"io{allowed}"), str(p)]) == 0
        argv, = _pto_run_commands(capsys.readouterr().err)
        assert ("--allow-debug-eval" in argv) is allowed
        assert pto_run_main(argv) == 0
        assert np.array_equal(np.load(argv[-1].split("=", 1)[1]), np.arange(8, dtype=np.float32))
        assert capsys.readouterr().out.endswith("(0, np.float32(28.0))\n(1, np.float32(28.0))\n") is allowed


def test_hand_written_set_flag_and_wait_flag_rows_say_why_they_record_nothing(tmp_path):
    """TIK_USER_FLAGS_NO_EFFECT: the listing's note for tik.set_flag / wait_flag names the choice and that
    auto-sync's pairs order the ops (it said only 'records no PTO statement')."""
    extra = textwrap.dedent('''
        ti = tik.Tik()
        x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
        with ti.new_stmt_scope(disable_sync=True):
            ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
            ti.data_move(ub, x, 0, 1, 8, 0, 0)
            ti.set_flag("PIPE_MTE2", "PIPE_MTE3", 1)
            ti.wait_flag("PIPE_MTE2", "PIPE_MTE3", 1)
            ti.data_move(y, ub, 0, 1, 8, 0, 0)
        ti.BuildCCE(kernel_name="flags", inputs=[x], outputs=[y])
    ''')
    trace = migrate.trace_script(_script(tmp_path, names=(), extra=extra))
    rows = migrate.listing(trace.kernels["flags"])
    notes = {r.api: r.note for r in rows if r.api in ("tik.set_flag", "tik.wait_flag")}
    assert len(notes) == 2
    assert all("TIK_USER_FLAGS_NO_EFFECT" in n and "auto-sync" in n for n in notes.values())


def test_cli_an_unwritable_output_path_is_refused_before_the_script_runs(tmp_path, capsys):
    """`-o missing/k.pto` ran the script and printed the whole listing before the error (user404); pto-run
    checks its --out folders before the run too."""
    script = tmp_path / "side_effect.py"
    script.write_text("open(__file__ + '.ran', 'w').close()\n" + open(_script(tmp_path, names=("k1",))).read())
    for bad, why in ((tmp_path / "no" / "k.pto", "does not exist"), (tmp_path, "it is a folder")):
        assert main([str(script), "-o", str(bad)]) == 2
        captured = capsys.readouterr()
        assert why in captured.err and "Fix: give a file path in an existing folder" in captured.err
        assert captured.out == "" and not (tmp_path / "side_effect.py.ran").exists()


@pytest.mark.parametrize("empty", ["", " "])
def test_cli_an_empty_output_path_is_refused_not_ignored(tmp_path, capsys, empty):
    """`-o ""` listed the kernel, wrote no file and said nothing (review410)."""
    assert main([_script(tmp_path, names=("k1",)), "-o", empty]) == 2
    captured = capsys.readouterr()
    assert "names no file" in captured.err and "Fix: give a file path after -o" in captured.err
    assert captured.out == ""


def test_cli_output_path_dash_or_the_script_itself_is_refused(tmp_path, capsys):
    """review414: `-o -` wrote a file named '-' (not stdout), and `-o k.py k.py` replaced the TIK script by the
    PTO-AS. Both are refused before the script runs; the script is unchanged."""
    script = _script(tmp_path, names=("k1",))
    before = open(script).read()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main([script, "-o", "-"]) == 2
        captured = capsys.readouterr()
        assert "-o - would write a file named '-'" in captured.err and "Fix: give a file path" in captured.err
        assert not (tmp_path / "-").exists() and captured.out == ""
        assert main([script, "-o", os.path.relpath(script)]) == 2
        captured = capsys.readouterr()
        assert "is the script itself" in captured.err and ".pto" in captured.err, captured.err
        assert open(script).read() == before and captured.out == ""
    finally:
        os.chdir(cwd)


def test_cli_output_paths_are_the_users_even_when_the_script_changes_folder(tmp_path, capsys):
    """review414: a script that calls os.chdir (to find its data) made `-o k.pto` and `--save-io io` land in the
    script's new folder, while they were checked in, and the printed pto-run command pointed into, the user's."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    script = _script(tmp_path, names=("k1",), extra=f"\nimport os\nos.chdir({str(other)!r})\n")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main([script, "-o", "k.pto", "--save-io", "io"]) == 0
        err = capsys.readouterr().err
        assert (tmp_path / "k.pto").is_file() and (tmp_path / "io" / "k1.pto").is_file(), err
        assert not os.listdir(other) and os.getcwd() == str(tmp_path)
        assert "pto-run io/k1.pto" in err, err
    finally:
        os.chdir(cwd)


def test_flatten_and_change_shape_rows_name_their_own_api_and_call(tmp_path):
    """Tensor.flatten() / change_shape() were listed as `tik.Tensor.reshape` with the whole statement as their
    source (no `reshape` call on the line): each row now names the API called, its call, and the view note."""
    extra = textwrap.dedent('''
        ti = tik.Tik()
        x = ti.Tensor("float16", (4, 16), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (64,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float16", (4, 16), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x, 0, 1, 4, 0, 0)
        flat = ub.flatten()
        flat.change_shape((2, 32))
        ti.data_move(y, flat, 0, 1, 4, 0, 0)
        ti.BuildCCE(kernel_name="views", inputs=[x], outputs=[y])
    ''')
    trace = migrate.trace_script(_script(tmp_path, names=(), extra=extra))
    rows = {r.api: r for r in migrate.listing(trace.kernels["views"])}
    assert rows["tik.Tensor.flatten"].source == "ub.flatten()"
    assert rows["tik.Tensor.change_shape"].source == "flat.change_shape((2, 32))"
    assert all("a view" in rows[a].note for a in ("tik.Tensor.flatten", "tik.Tensor.change_shape"))
