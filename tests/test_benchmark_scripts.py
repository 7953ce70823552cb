"""Benchmark scripts run with small sizes (the docs quote their commands; a size option must not
break the script's own correctness check)."""
import os
import runpy
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script: str, *args: str, monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", [script, *args])
    runpy.run_path(os.path.join(ROOT, "benchmarks", script), run_name="__main__")


@pytest.mark.parametrize("moves", ["100", "7"])
def test_bench_tik_checks_its_output_for_any_move_count(moves, monkeypatch, capsys):
    """Fewer than 128 moves used to leave y partly unwritten and fail the script's own check."""
    _run("bench_tik.py", "--moves", moves, "--repeat", "1", monkeypatch=monkeypatch)
    assert f"{moves} data_moves" in capsys.readouterr().out


def test_bench_tik_refuses_fewer_than_two_moves(monkeypatch, capsys):
    with pytest.raises(SystemExit) as info:
        _run("bench_tik.py", "--moves", "1", monkeypatch=monkeypatch)
    assert info.value.code == 2 and "at least 2" in capsys.readouterr().err
