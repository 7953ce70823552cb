"""Command-line tools of tbe_compat.

``tik-run [--soc SOC[:CORE_TYPE]] [--kernels] SCRIPT.py [ARGS ...]`` runs an unmodified
TIK script the way ``python SCRIPT.py ARGS`` would -- ``sys.argv`` is the script and its
arguments, the script's folder is first on ``sys.path``, ``__name__ == "__main__"`` --
with the legacy import names (``tbe``, ``te``, ``topi``) made importable even where the
package's alias packages are not installed.

Options (before the script name):

* ``--soc Ascend910B1`` (or ``Ascend610:VectorCore``): select the chip before the
  script runs (the script may still select another one itself);
* ``--kernels``: after the script, list every kernel it built (``BuildCCE``) with its
  inputs and outputs -- useful for entry functions that return ``None``.

Exit status: the script's own (``sys.exit``), 0 when it ends normally, 1 when it raises
(a TIK error prints its one-paragraph report, anything else a traceback), 2 for usage
errors.

``tik-migrate [OPTIONS] SCRIPT.py [OPTIONS] [-- ARGS ...]`` runs a script the same way and
shows the PTO ops every TIK call became (`tbe_compat.migrate`).
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import traceback
import types
from typing import Optional


def _select_soc(spec: str) -> None:
    from . import platform
    soc, _, core = spec.partition(":")
    platform.set_current_compile_soc_info(soc, core or "AiCore")


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


def tik_run_main(argv: Optional[list] = None) -> int:
    """Entry point of ``tik-run``; returns the exit status."""
    ap = argparse.ArgumentParser(prog="tik-run", description="Run an unmodified TIK script on the simulator.")
    ap.add_argument("--soc", help="select this chip before the script runs (SOC or SOC:CORE_TYPE)")
    ap.add_argument("--kernels", action="store_true", help="list the kernels the script built")
    ap.add_argument("script", help="the TIK script (.py)")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    ns = ap.parse_args(argv)
    script = os.path.abspath(ns.script)
    if not os.path.isfile(script):
        print(f"tik-run: error: script {ns.script!r} does not exist", file=sys.stderr)
        return 2
    from pto_core.errors import PtoError
    from .aliases import install
    try:
        install()
        if ns.soc:
            _select_soc(ns.soc)
    except PtoError as e:
        print(f"tik-run: error: {e}", file=sys.stderr)
        return 2
    status = run_script(script, ns.args, display_name=ns.script)
    if ns.kernels:
        _describe_kernels(sys.stderr)
    sys.stdout.flush()
    return status


def run_script(script: str, args=(), *, display_name: Optional[str] = None,
               namespace: Optional[dict] = None) -> int:
    """Run ``script`` the way ``python SCRIPT ARGS`` would (``sys.argv``, ``sys.path[0]`` = the script's
    folder, ``__name__ == "__main__"`` in a fresh module that is ``sys.modules["__main__"]`` while it
    runs), in this process; returns the exit status (0 ok, the ``sys.exit`` code, 1 after printing
    the traceback of an exception). ``namespace``: a dict that receives the script's globals
    (also when it ended with ``sys.exit`` or an exception). The legacy import names must be
    installed first (`tbe_compat.aliases.install`)."""
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
    except KeyboardInterrupt:
        status = 130
    except BaseException:  # noqa: BLE001 - report like the interpreter does
        traceback.print_exc()
        status = 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        if namespace is not None:
            namespace.update(module.__dict__)
    return status


def _exit_status(e: SystemExit) -> int:
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


__all__ = ["tik_run_main", "tik_migrate_main", "run_script"]

def tik_migrate_main(argv: Optional[list] = None) -> int:
    """Entry point of ``tik-migrate`` (see `tbe_compat.migrate`)."""
    from .migrate import main
    return main(argv)


if __name__ == "__main__":  # pragma: no cover - python -m tbe_compat.cli
    sys.exit(tik_run_main())
