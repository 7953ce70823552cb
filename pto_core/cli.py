"""Command-line tools of pto_core.

``pto-run KERNEL.pto --in NAME=FILE.npy ... --out NAME=FILE.npy [--alias OUT=IN] [--target A2A3] [--cores N] [--block-dim N]``
parses a PTO-AS kernel, runs it on the simulator and saves the requested outputs. ``--alias OUT=IN``
places output OUT on input IN's memory (an in-place operator, as ``start_debug(inplace=)``).
Scalar arguments are given inline: ``--in n=128`` (or ``--in scale=0.5``).
"""
from __future__ import annotations

import argparse
import os
import sys
import zipfile
from typing import Optional

import numpy as np

from .errors import ConfigError, PtoError, UnknownName
from .targets import get_target


def _pairs(items, what: str) -> list:
    out = []
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ConfigError(f"{what} {item!r} is not NAME=VALUE", operand=what, value=item,
                              hint=f"write {what} x=x.npy")
        out.append((name, value))
    return out


def _scalar(text: str):
    try:
        return int(text, 0)
    except ValueError:
        return float(text)


def _load_inputs(prog, pairs) -> dict:
    from .program import GmArg
    inputs = {}
    for name, value in pairs:
        try:
            arg = prog.arg(name)
        except UnknownName as e:                    # a usage error: the command line names no such argument
            raise ConfigError(e.message, operand="--in", value=name, limit=e.limit,
                              hint=f"give --in NAME=FILE.npy with NAME one of the kernel's arguments: "
                                   f"{e.limit}") from None
        if name in inputs:
            raise ConfigError(f"input {name!r} given twice", operand="--in", value=name,
                              hint=f"give --in {name}=... once")
        if isinstance(arg, GmArg):
            if not os.path.exists(value):
                raise ConfigError(f"input file {value!r} for {name!r} does not exist", operand="--in", value=value,
                                  hint=f"pass the path of an existing .npy file: --in {name}=FILE.npy")
            inputs[name] = _load_array(name, value)
        else:
            try:
                inputs[name] = _scalar(value)
            except ValueError:
                raise ConfigError(f"scalar argument {name!r} needs a number, got {value!r}", operand="--in",
                                  value=value,
                                  hint=f"pass an int or float literal: --in {name}=3 or --in {name}=0.5") from None
    return inputs


def _load_array(name: str, path: str) -> np.ndarray:
    """The array of ``--in NAME=PATH``: one ``.npy`` file (``numpy.save``), without pickled objects."""
    fix = f"write it with numpy.save({path!r}, array) (one .npy file per input, numeric dtype)"
    if not path.endswith(".npy"):       # numpy.save appends .npy to such a name: say which file to pass then
        npy = os.path.splitext(path)[0] + ".npy"
        fix = (f"write it with numpy.save({npy!r}, array) and pass --in {name}={npy} (one .npy file per input, "
               f"numeric dtype)")
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        why = getattr(e, "strerror", None) or e
        if isinstance(e, zipfile.BadZipFile):   # starts like a zip (an .npz, .xlsx ...): numpy's zip reader gave up
            why = "it starts like a zip archive (.npz) but is not a readable one, nor a .npy file"
        if isinstance(e, ValueError) and "allow_pickle" in str(e):
            # numpy's words for any file that is not .npy/.npz: it falls back to unpickling, which
            # allow_pickle=False refuses, and its message advises allow_pickle=True -- wrong for a text
            # file and unsafe for a file one does not trust (user404)
            why = _not_npy_reason(path)
        raise ConfigError(f"cannot read input file {path!r} for {name!r}: {why}",
                          operand="--in", value=path, hint=fix) from None
    if not isinstance(arr, np.ndarray):          # an .npz archive: np.load gives the archive, not an array
        arr.close()
        raise ConfigError(f"input file {path!r} for {name!r} is an .npz archive, not one array", operand="--in",
                          value=path, hint=fix)
    return arr


#: The first bytes of every ``.npy`` file (``numpy.lib.format.MAGIC_PREFIX``).
NPY_MAGIC = b"\x93NUMPY"


def _not_npy_reason(path: str) -> str:
    """Why numpy refused ``path`` as unpickling: an ``.npy`` holding an object array (its header says
    so), or no ``.npy``/``.npz`` file at all."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(NPY_MAGIC))
    except OSError as e:
        return e.strerror or str(e)
    if head == NPY_MAGIC:
        return "it holds an object array (pickled Python objects), not numbers"
    return f"it is not a .npy file (it does not start with the .npy magic bytes {NPY_MAGIC!r})"


def _check_writable(path: str) -> None:
    """``--out NAME=PATH``: PATH's folder exists and PATH is not a folder (checked before the run; as
    ``numpy.save``, a PATH not ending in ``.npy`` is written to PATH.npy)."""
    if not path.endswith(".npy"):
        path += ".npy"
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(folder):
        what = "is a folder" if os.path.isdir(path) else f"is in folder {folder!r}, which does not exist"
        raise ConfigError(f"output file {path!r} {what}", operand="--out", value=path,
                          hint="give a file path in an existing folder (create the folder first)")


def _unwritten_output_reports(exe) -> list:
    """One line per output with bytes the kernel did not write (`Executable.unwritten_outputs`: never
    stored, or stored from an undefined value such as x / 0 or from memory nothing wrote). Named
    choice REPORT_UNWRITTEN_OUTPUTS: pto-run says so on stderr (exit status unchanged), as TIK's
    start_debug warns; the saved array holds the launch fill there, a device stale memory. Outputs
    with ``pto.fill`` or ``pto.init`` start with defined contents the host sets (TIK is_atomic_add,
    init_value), so bytes the kernel leaves are expected there and not reported."""
    out = []
    filled = {a.name for a in exe.program.gm_args if a.fill is not None or a.init is not None}
    for name, (missing, total, first) in exe.unwritten_outputs.items():
        if name in filled:
            continue
        out.append(f"output {name!r}: {missing} of {total} bytes hold no data the kernel wrote (first at byte "
                   f"{first:#x}); they hold the launch fill (0xFF bytes) here, stale memory on a device. Fix: store "
                   f"every output element, or use only the elements the kernel writes")
    return out


#: Named choice NOTE_UNSAVED_OUTPUTS: a run with neither ``--out`` nor ``--print`` computes the kernel's
#: outputs and drops them; pto-run says so on stderr (exit status unchanged: a run only for its checks is
#: legitimate). Without it a forgotten ``--out`` looked like a successful run that wrote nothing (user404).
NOTE_UNSAVED_OUTPUTS = True
_NO_OUTPUT_NOTE = ("the kernel's outputs ({names}) were computed but not saved (no --out or --print) "
                   "Fix: add --out NAME=FILE.npy for each output you need, or --print")


def pto_run_main(argv: Optional[list] = None) -> int:
    """Entry point of ``pto-run``; returns the process exit code (0 ok, 1 kernel error, 2 usage)."""
    ap = argparse.ArgumentParser(prog="pto-run", description="Run a PTO-AS kernel (.pto) on the simulator.")
    ap.add_argument("kernel", help="PTO-AS text file")
    ap.add_argument("--in", dest="inputs", action="append", metavar="NAME=FILE.npy|NUMBER",
                    help="a GM tensor argument from a .npy file, or a scalar argument's value")
    ap.add_argument("--out", dest="outputs", action="append", metavar="NAME=FILE.npy",
                    help="save an output tensor to a .npy file")
    ap.add_argument("--alias", dest="aliases", action="append", metavar="OUT=IN",
                    help="an output placed on an input's GM memory (an in-place operator's output: it starts "
                         "with the input's data)")
    ap.add_argument("--target", help="chip (overrides the module's pto.target_arch), e.g. A2A3, A5, Ascend910B1")
    ap.add_argument("--cores", type=int, help="number of cores (default: the kernel's pto.block_num, else 1)")
    ap.add_argument("--block-dim", dest="block_dim", type=int,
                    help="launch only blocks 0..N-1 of the kernel's pto.block_num (a host's tiling block_dim)")
    ap.add_argument("--kernel-name", help="which func.func to run when the module has several")
    ap.add_argument("--order", choices=("sequential", "random"), default="sequential",
                    help="core scheduling: sequential (default) or seeded random interleaving")
    ap.add_argument("--seed", type=int, default=0, help="seed for --order random")
    ap.add_argument("--print", dest="show", action="store_true", help="print outputs and checker reports")
    ap.add_argument("--allow-debug-eval", dest="allow_debug_eval", action="store_true",
                    help="run pto.debug_eval ops (TIK debug_print: Python expressions); only for files you trust")
    args = ap.parse_args(argv)
    from .asm import parse_file
    try:
        if not os.path.exists(args.kernel):
            raise ConfigError(f"kernel file {args.kernel!r} does not exist", operand="kernel", value=args.kernel,
                              hint="pass the path of an existing PTO-AS file (a relative path starts at the current "
                                   "directory)")
        if args.target is not None:                 # a bad option is a usage error (exit 2), as --soc of tik-run
            try:
                get_target(args.target)
            except UnknownName as e:
                raise ConfigError(e.message, operand="--target", value=args.target, limit=e.limit,
                                  hint=e.hint or f"pass --target as one of {e.limit}") from None
        prog = parse_file(args.kernel, target=args.target, kernel=args.kernel_name,
                          allow_debug_eval=args.allow_debug_eval)
        inputs = _load_inputs(prog, _pairs(args.inputs, "--in"))
        outs = _pairs(args.outputs, "--out")
        outputs = [a.name for a in prog.gm_args if a.io in ("out", "inout")]      # what `Executable.run` returns
        for name, _ in outs:                        # checked before the run, which may take a while
            if name not in outputs:
                named = ", ".join(outputs)
                raise ConfigError(f"{name!r} is not an output of kernel {prog.name!r} "
                                  f"({'its outputs: ' + named if named else 'it has no outputs'})",
                                  operand="--out", value=name, limit=named or "(no outputs)",
                                  hint=(f"write --out NAME=FILE.npy with NAME one of {named}" if named
                                        else "drop --out: the kernel writes no GM output"))
        for _, path in outs:
            _check_writable(path)
        exe = prog.compile()
        alias = {}
        for out_name, in_name in _pairs(args.aliases, "--alias"):
            if out_name in alias:                   # a dict would keep the last one silently
                raise ConfigError(f"output {out_name!r} aliased twice (onto {alias[out_name]!r} and {in_name!r})",
                                  operand="--alias", value=out_name,
                                  hint="give one --alias per output: an output lives on one input's memory")
            alias[out_name] = in_name
        results = exe.run(inputs, cores=args.cores, order=args.order, seed=args.seed, alias=alias,
                          block_dim=args.block_dim)
        for name, path in outs:
            try:
                np.save(path, results[name], allow_pickle=False)
            except OSError as e:
                raise ConfigError(f"cannot write output file {path!r}: {e.strerror or e}", operand="--out",
                                  value=path, hint="give a writable file path") from None
        for kind, msg in exe.reports:
            print(f"pto-run: {kind}: {msg}", file=sys.stderr)
        for msg in _unwritten_output_reports(exe):
            print(f"pto-run: uninitialized: {msg}", file=sys.stderr)
        if args.show:
            for name, arr in results.items():
                print(f"{name} {arr.dtype} {arr.shape}\n{arr}")
        elif NOTE_UNSAVED_OUTPUTS and not outs and results:
            print(f"pto-run: note: {_NO_OUTPUT_NOTE.format(names=', '.join(results))}", file=sys.stderr)
    except ConfigError as e:
        print(f"pto-run: error: {e}", file=sys.stderr)
        return 2
    except PtoError as e:
        print(f"pto-run: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pto_run_main())
