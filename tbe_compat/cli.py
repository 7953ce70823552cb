"""Command-line tools of tbe_compat.

``tik-run [--soc SOC[:CORE_TYPE]] [--kernels] SCRIPT.py [ARGS ...]`` runs an unmodified
TIK script the way ``python SCRIPT.py ARGS`` would -- ``sys.argv`` is the script and its
arguments, the script's folder is first on ``sys.path``, ``__name__ == "__main__"`` --
with the legacy import names (``tbe``, ``te``, ``topi``) made importable even where the
package's alias packages are not installed.

Options (before the script name):

* ``--soc Ascend910B1`` (or ``Ascend610:VectorCore``): select the chip before the
  script runs (the script may still select another one itself);
* ``--soc-names cann20``: ``get_soc_spec("SOC_VERSION")`` spells chips as CANN 20.x did
  (``"Ascend910"`` for Ascend910A), for 2019-2020 kernels that compare against those names
  (``platform.set_soc_version_naming``; the environment variable
  ``TBE_COMPAT_SOC_VERSION_NAMING=cann20`` does the same for every tool and plain ``python``);
* ``--kernels``: after the script, list every kernel it built (``BuildCCE``) with its
  inputs and outputs -- useful for entry functions that return ``None``.
* ``--reports summary|all|none``: what to print (on stderr, after the script) of the checker
  reports of the kernels it ran with ``start_debug`` -- a set_flag never waited for, a read of
  data nothing wrote, a GM write dropped in the allocation's padding ... (``tikdb.reports``).
  ``summary`` (default): per kernel with reports, their count by kind and the first
  `REPORTS_SHOWN`; ``all``: every one; ``none``: nothing. Reports already shown as a Python
  warning (``GmRaceWarning``, ``GmOverreadWarning`` ...) are left out; a kernel with no other
  report prints nothing (`ReportSummary`).

Exit status: the script's own (``sys.exit``), 0 when it ends normally, 1 when it raises
(a TIK error prints its one-paragraph report, anything else a traceback), 2 for usage
errors.

``tik-migrate [OPTIONS] SCRIPT.py [OPTIONS] [-- ARGS ...]`` runs a script the same way and
shows the PTO ops every TIK call became (`tbe_compat.migrate`).

``tik-compare-fixpipe SCRIPT.py`` / ``tik-compare-fixpipe --sweep``: legacy ``fixpipe`` against
the PTO FIXPIPE lowering and the new FIXPIPE (`tik_compare_fixpipe_main`,
migration_guide/fixpipe_compare.md).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import traceback
import types
from typing import Optional


def _select_soc(spec: str) -> None:
    """The ``--soc SOC[:CORE_TYPE]`` option: select the chip; a bad value is a `ConfigError` about the option
    (not about a line of the command's launcher, which the platform call would name)."""
    from pto_core.errors import ConfigError, PtoError
    from . import platform
    soc, _, core = spec.partition(":")
    try:
        platform.set_current_compile_soc_info(soc, core or "AiCore")
    except PtoError as e:
        raise ConfigError(e.message, operand="--soc", value=spec,
                          hint=e.hint if e.hint is not None else None) from None


def script_path_error(path: str) -> Optional[str]:
    """Why ``path`` cannot be run as a TIK script (None if it is a file): the one-line usage error of
    ``tik-run``, ``tik-migrate`` and ``tik-compare-fixpipe`` (a folder is named as one, not as missing)."""
    if os.path.isfile(path):
        return None
    if os.path.isdir(path):
        return f"script {path!r} is a folder, not a file. Fix: give the path of the TIK script (.py)"
    if os.path.exists(path):                    # a device or a pipe: it exists, so "does not exist" misleads
        return f"script {path!r} is not a regular file. Fix: give the path of the TIK script (.py)"
    return f"script {path!r} does not exist"


def _describe_kernels(out) -> None:
    from .tik.registry import kernels
    ks = kernels()
    if not ks:
        print("tik-run: no kernel was built (no BuildCCE call)", file=out)
        return
    for name, tik in ks.items():
        info = tik.build
        ins = ", ".join(f"{x.name}:{getattr(x, 'dtype', '')}{list(x.shape) if hasattr(x, 'shape') else ''}"
                        for x in info.inputs)
        outs = ", ".join(f"{x.name}:{x.dtype}{list(x.shape)}" for x in info.outputs)
        print(f"tik-run: kernel {name} on {info.soc.soc_version}: inputs [{ins}] outputs [{outs}]", file=out)


#: How many checker reports per kernel ``tik-run`` prints by default (``--reports summary``): the first report
#: of each kind, in the order the kinds first appeared, then the next ones, up to this many.
REPORTS_SHOWN = 3


class ReportSummary:
    """``tik-run``'s summary of the checker reports of every kernel the script runs (`tik-run --reports`).

    A callable of `tbe_compat.tik.debug.REPORT_OBSERVERS`: it collects, per Tik instance, the reports of each
    completed ``start_debug`` run that were not also emitted as a Python warning (`Machine.warned_reports`),
    without repeats across runs, and how many were dropped past ``max_reports`` (the most of one run; those
    that were warnings, `Machine.warned_dropped`, with the warnings). `format` is the text
    ``tik-run`` prints after the script ends."""

    def __init__(self):
        # id(tik) -> [tik, runs, {message: kind} (ordered), dropped, {warned message}, warned dropped]
        self._kernels: dict = {}

    def __call__(self, tik, exe) -> None:
        entry = self._kernels.setdefault(id(tik), [tik, 0, {}, 0, set(), 0])
        entry[1] += 1
        warned = getattr(exe, "warned_reports", set())
        for kind, msg in exe.reports:
            if msg in warned:
                entry[4].add(msg)
            else:
                entry[2].setdefault(msg, kind)
        # Dropped reports are only counted (their messages are unknown): the most of one run, as the kept ones
        # are counted once over runs; those that were warnings are counted with the warnings
        warned_dropped = getattr(exe, "warned_dropped", 0)
        entry[3] = max(entry[3], exe.reports_dropped - warned_dropped)
        entry[5] = max(entry[5], warned_dropped)

    def format(self, shown: Optional[int] = REPORTS_SHOWN) -> str:
        """The summary (empty when no kernel made a report that was not a warning); ``shown``: how many
        reports to print per kernel (None: all)."""
        lines = []
        for tik, runs, found, dropped, warned_msgs, warned_dropped in self._kernels.values():
            warned = len(warned_msgs) + warned_dropped
            if not found and not dropped:
                continue
            name = tik.build.kernel_name if tik.build is not None else "?"
            counts: dict = {}
            for kind in found.values():
                counts[kind] = counts.get(kind, 0) + 1
            n = len(found)
            by_kind = ", ".join(f"{k} {c}" for k, c in counts.items())
            run_text = f" ({runs} start_debug runs)" if runs > 1 else ""
            lines.append(f"tik-run: kernel {name!r}{run_text}: {n} checker report{'s' if n != 1 else ''} "
                         f"({by_kind or 'none kept'})" + (f", {warned} more shown as warnings above" if warned else "")
                         + (f", {dropped} more not recorded (MachineOptions.max_reports)" if dropped else "") + ":")
            items = list(found.items())
            if shown is not None and n > shown:
                firsts = {}
                for i, (_, kind) in enumerate(items):
                    firsts.setdefault(kind, i)
                order = sorted(firsts.values())[:shown]
                order += [i for i in range(n) if i not in firsts.values()][:shown - len(order)]
                items = [items[i] for i in sorted(order)]
            for msg, kind in items:
                lines.append(f"  [{kind}] {msg}")
            if shown is not None:
                more = f"... {n - len(items)} more; " if n > len(items) else ""
                lines.append(f"  {more}all of them: tik-run --reports all, or tik_instance.tikdb.reports after "
                             f"start_debug (its last run's, warnings included); none: tik-run --reports none")
        return "\n".join(lines)


def _hide_launcher(frame, script: Optional[str] = None) -> None:
    """The console-script launcher (``venv/bin/tik-run``, ``tik-migrate``, ``tik-compare-fixpipe``) whose frame
    ``frame`` called the entry point is not the user's code: keep it out of TIK call stacks. (tik-migrate and
    tik-compare-fixpipe did not, so their errors' stacks started at ``venv/bin/tik-migrate:8``; h_user453.)"""
    from pto_core.ops.registry import add_internal_package
    launcher = os.path.abspath(frame.f_code.co_filename)
    if launcher != script and os.path.isfile(launcher):
        add_internal_package(launcher)


def tik_run_main(argv: Optional[list] = None) -> int:
    """Entry point of ``tik-run``; returns the exit status."""
    ap = argparse.ArgumentParser(prog="tik-run", description="Run an unmodified TIK script on the simulator.")
    ap.add_argument("--soc", help="select this chip before the script runs (SOC or SOC:CORE_TYPE)")
    ap.add_argument("--soc-names", choices=("current", "cann20"), default=None,
                    help="how get_soc_spec('SOC_VERSION') spells chips: current CANN names (default) or CANN "
                         "20.x names ('Ascend910' for Ascend910A)")
    ap.add_argument("--kernels", action="store_true", help="list the kernels the script built")
    ap.add_argument("--reports", choices=("summary", "all", "none"), default="summary",
                    help="after the script, print the checker reports (tikdb.reports: flags left set, reads of "
                         "unwritten data ...) of the kernels it ran that were not shown as warnings: a summary "
                         "(default), all of them, or none")
    ap.add_argument("script", nargs="?", help="the TIK script (.py)")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    ns = ap.parse_args(argv)
    if ns.script is None:              # (a required positional before REMAINDER makes argparse call `args` required too)
        ap.error("the following argument is required: script (the TIK script to run). Fix: give the path of the "
                 "TIK script (.py): tik-run SCRIPT.py [ARGS ...]")
    script = os.path.abspath(ns.script)
    problem = script_path_error(ns.script)
    if problem:
        print(f"tik-run: error: {problem}", file=sys.stderr)
        return 2
    from pto_core.errors import PtoError
    from .aliases import install
    try:
        install()
        if ns.soc_names:
            from . import platform
            platform.set_soc_version_naming(ns.soc_names)
        if ns.soc is not None:         # --soc "" is an unknown chip, not "no --soc"
            _select_soc(ns.soc)
    except PtoError as e:
        print(f"tik-run: error: {e}", file=sys.stderr)
        return 2
    if argv is None:
        _hide_launcher(sys._getframe(1), script)
    from .tik.debug import REPORT_OBSERVERS
    summary = ReportSummary()
    if ns.reports != "none":
        REPORT_OBSERVERS.append(summary)
    try:
        status = run_script(script, ns.args, display_name=ns.script)
    finally:
        if summary in REPORT_OBSERVERS:
            REPORT_OBSERVERS.remove(summary)
    sys.stdout.flush()                 # the script's own output first
    text = summary.format(None if ns.reports == "all" else REPORTS_SHOWN)
    if text:
        print(text, file=sys.stderr)
    if ns.kernels:
        _describe_kernels(sys.stderr)
    sys.stdout.flush()
    return status


def run_script(script: str, args=(), *, display_name: Optional[str] = None,
               namespace: Optional[dict] = None, errors: Optional[list] = None) -> int:
    """Run ``script`` the way ``python SCRIPT ARGS`` would (``sys.argv``, ``sys.path[0]`` = the script's
    folder, ``__name__ == "__main__"`` in a fresh module that is ``sys.modules["__main__"]`` while it
    runs), in this process; returns the exit status (0 ok, the ``sys.exit`` code, 1 after printing
    the traceback of an exception). ``namespace``: a dict that receives the script's globals
    (also when it ended with ``sys.exit`` or an exception). ``errors``: a list that receives the
    traceback of an exception, or the report of a TIK error (a ``SystemExit``, as in CANN). The
    legacy import names must be installed first (`tbe_compat.aliases.install`)."""
    from pto_core.errors import PtoError
    from .aliases import ALIAS_ROOT
    script = os.path.abspath(script)
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_main = sys.modules.get("__main__")
    sys.argv = [display_name or script] + list(args)
    # like `python SCRIPT`: the script's folder replaces the runner's own entry at the front
    # (the alias root that install() put first stays on the path, right behind it)
    if sys.path and sys.path[0] != ALIAS_ROOT:
        sys.path.pop(0)
    sys.path.insert(0, os.path.dirname(script))
    module = types.ModuleType("__main__")
    module.__file__ = script
    module.__cached__ = None
    module.__loader__ = None
    module.__package__ = None
    status = 0
    try:
        with io.open_code(script) as f:
            code = compile(f.read(), script, "exec")
        sys.modules["__main__"] = module
        exec(code, module.__dict__)
    except SystemExit as e:
        status = _exit_status(e)
        if errors is not None and isinstance(e, PtoError):
            errors.append(str(e))
    except KeyboardInterrupt:
        status = 130
    except BaseException as e:  # noqa: BLE001 - report like the interpreter does
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:      # the runner's own frames
            tb = tb.tb_next
        text = "".join(traceback.format_exception(type(e), e, tb))
        print(text, end="", file=sys.stderr)
        if errors is not None:
            errors.append(text)
        status = 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        if namespace is not None:
            namespace.update(module.__dict__)
    return status


#: The exit statuses, in ``tik-compare-fixpipe --help`` (user456: a CI author had to find them in the guide).
COMPARE_FIXPIPE_EXIT_HELP = """exit status (SCRIPT.py):
  0  every executed fixpipe call matched the legacy model bit for bit
  1  a difference, or a call the legacy model refused
  2  usage error (also a --feed array that does not fit the kernel)
  3  the script or a kernel run failed
  4  no fixpipe call ran
  several kernels: the most serious of 3, 1, 2, 0. --new-fixpipe results do not change it,
  except with --strict: then a replacement that is not an exact match (differs, rejected,
  not run) is a difference too: exit status 1 (the verdict's STRICT line counts them).
exit status (--sweep): 0 every difference explained by a documented reason, 1 an unexplained one, 2 usage error.
details: migration_guide/fixpipe_compare.md"""


def tik_compare_fixpipe_main(argv: Optional[list] = None) -> int:
    """Entry point of ``tik-compare-fixpipe``; returns the exit status.

    ``tik-compare-fixpipe [--new-fixpipe] [--feed inputs.npz] [--kernel NAME] [--soc SOC] [--seed N] [--format F]
    SCRIPT.py [ARGS ...]`` compares every ``fixpipe`` call the script's kernels execute with the
    legacy reference model (`tbe_compat.fixpipe_compare`; ``--new-fixpipe``: also the replacing
    ``pto.mte_l0c_gm`` call on each call's L0C data, `tbe_compat.fixpipe_new`, exit status unchanged unless
    ``--strict``: then a replacement that is not an exact match exits 1); exit status 0 all equal, 1 a difference, 2 usage
    error, 3 the script or a kernel failed, 4 no fixpipe call ran. The script's own output goes to
    stderr, the report to stdout (or ``--output``).

    ``tik-compare-fixpipe --sweep [--full] [--chip SOC ...] [--summary] [--format F]`` runs the
    legacy-vs-new-FIXPIPE grid (`tbe_compat.fixpipe_sweep`); exit status 1 when a difference is not
    explained by a known, documented reason.
    """
    from .fixpipe_compare import DEFAULT_SEED, FORMATS
    ap = argparse.ArgumentParser(prog="tik-compare-fixpipe",
                                 description="Compare legacy TIK fixpipe with the PTO FIXPIPE lowering / new FIXPIPE.",
                                 epilog=COMPARE_FIXPIPE_EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", action="store_true", help="run the legacy-vs-new-FIXPIPE configuration grid")
    ap.add_argument("--full", action="store_true", help="with --sweep: the complete grid (more chips, shapes, scales)")
    ap.add_argument("--chip", action="append", help="with --sweep: only this SoC (repeatable)")
    ap.add_argument("--summary", action="store_true",
                    help="with --sweep: one row per (legacy feature, new option) instead of per configuration")
    ap.add_argument("--new-fixpipe", action="store_true",
                    help="with a script: also run the new FIXPIPE call (pto.mte_l0c_gm) that replaces each fixpipe "
                         "call on the call's own L0C data and print it, copy-pasteable, with how it differs")
    ap.add_argument("--strict", action="store_true",
                    help="with --new-fixpipe: exit status 1 when a new FIXPIPE replacement is not an exact match "
                         "(differs, rejected or not run), for CI")
    ap.add_argument("--feed", help="inputs.npz: arrays by kernel input name, for kernels the script only builds")
    ap.add_argument("--kernel", help="compare only the kernel with this kernel_name")
    ap.add_argument("--soc", help="select this chip before the script runs (SOC or SOC:CORE_TYPE)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of generated inputs (default %(default)s)")
    ap.add_argument("--format", choices=FORMATS, default="table", help="report format (default %(default)s)")
    ap.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    ap.add_argument("script", nargs="?", help="the TIK script (.py)")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    ns = ap.parse_args(argv)
    if argv is None:
        _hide_launcher(sys._getframe(1), os.path.abspath(ns.script) if ns.script else None)
    from pto_core.errors import PtoError
    prog = "tik-compare-fixpipe"
    if ns.sweep:
        if ns.script or ns.feed or ns.kernel or ns.new_fixpipe or ns.strict:
            print(f"{prog}: error: --sweep takes no script, --feed, --kernel, --new-fixpipe or --strict (the sweep "
                  f"already exits 1 on an unexplained difference). Fix: run --sweep on its own, or drop --sweep to "
                  f"compare a script", file=sys.stderr)
            return 2
        from .fixpipe_sweep import format_sweep, sweep, unexplained
        try:
            rows = sweep(full=ns.full, chips=ns.chip)
        except PtoError as e:
            print(f"{prog}: error: {e}", file=sys.stderr)
            return 2
        if not _emit(format_sweep(rows, ns.format, summarize=ns.summary), ns.output, prog):
            return 2
        return 1 if unexplained(rows) else 0
    if ns.full or ns.chip or ns.summary:
        print(f"{prog}: error: --full, --chip and --summary go with --sweep. Fix: add --sweep, or drop them to "
              f"compare a script", file=sys.stderr)
        return 2
    if ns.strict and not ns.new_fixpipe:
        print(f"{prog}: error: --strict judges the new FIXPIPE replacements. Fix: add --new-fixpipe, or drop "
              f"--strict", file=sys.stderr)
        return 2
    if not ns.script:
        print(f"{prog}: error: no script given. Fix: give a SCRIPT.py to compare (or --sweep)", file=sys.stderr)
        return 2
    problem = script_path_error(ns.script)
    if problem:
        print(f"{prog}: error: {problem}", file=sys.stderr)
        return 2
    from .fixpipe_compare import compare_script, format_comparisons, load_feed
    try:
        feed = load_feed(ns.feed) if ns.feed else None
        with contextlib.redirect_stdout(sys.stderr):
            res = compare_script(ns.script, feed=feed, kernel=ns.kernel, args=ns.args, soc=ns.soc, seed=ns.seed,
                                 feed_name=f"--feed {ns.feed}" if ns.feed else None, new_fixpipe=ns.new_fixpipe,
                                 strict=ns.strict)
    except PtoError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    if not _emit(format_comparisons(res, ns.format), ns.output, prog):
        return 2
    return res.exit_status


def _emit(text: str, path: Optional[str], prog: str = "tik-compare-fixpipe") -> bool:
    """Write the report to ``path`` (``-o``) or stdout; False (after a one-line error) if ``path`` cannot be
    written. The file is written all or nothing (`migrate.write_text_atomic`): a failed write leaves an
    existing report as it was (it was truncated, k419)."""
    if path:
        from .migrate import write_text_atomic
        try:
            write_text_atomic(path, text)
        except (OSError, UnicodeError) as e:
            print(f"{prog}: error: cannot write the report to {path!r}: {getattr(e, 'strerror', None) or e} (the "
                  f"file was left as it was). Fix: give a file path in an existing folder", file=sys.stderr)
            return False
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return True


def _exit_status(e: SystemExit) -> int:
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


__all__ = ["tik_run_main", "tik_migrate_main", "tik_compare_fixpipe_main", "run_script"]


def tik_migrate_main(argv: Optional[list] = None) -> int:
    """Entry point of ``tik-migrate`` (see `tbe_compat.migrate`)."""
    from .migrate import main
    if argv is None:
        _hide_launcher(sys._getframe(1))
    return main(argv)


if __name__ == "__main__":  # pragma: no cover - python -m tbe_compat.cli
    sys.exit(tik_run_main())
