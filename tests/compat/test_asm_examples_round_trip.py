"""Every example kernel prints as PTO-AS, parses back and runs bit-identically to its ``start_debug`` run:
in the printed form (FIXPIPE / frac clauses after commas, `pto_core.asm.COMMA_CLAUSE_OPS`) and in the
form printed before it (clauses after spaces), which files users saved earlier still have."""
import os
import re

import numpy as np
import pytest

from pto_core import asm
from pto_core.ops import registry
from tbe_compat import migrate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(f for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py") and f != "pto_tassign_demo.py")


def spaced(text: str) -> str:
    """``text`` with each comma before a clause of a `COMMA_CLAUSE_OPS` op turned into a space."""
    out = []
    for line in text.split("\n"):
        m = re.match(r"\s*pto\.(\w+) ", line)
        if m and m.group(1) in asm.COMMA_CLAUSE_OPS:
            clauses = registry.OPS[m.group(1)].clauses
            names = "|".join([c.name for c in clauses] + ["no" + c.name for c in clauses if c.form == "sat"])
            line = re.sub(rf", (?=({names})\b)", " ", line)
        out.append(line)
    return "\n".join(out)


def _run(text, tik, run):
    from tbe_compat.tik.debug import tik_machine_options
    prog = asm.parse(text, source_name="k.pto", allow_debug_eval=True)
    return prog, prog.compile().run(dict(run.inputs), options=tik_machine_options(), alias=run.alias,
                                    block_dim=run.block_dim)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_kernels_round_trip_through_both_clause_spellings(example, monkeypatch, capsys):
    monkeypatch.chdir(os.path.join(ROOT, "examples"))
    trace = migrate.trace_script(os.path.join(ROOT, "examples", example))
    assert trace.status == 0 and trace.runs, example
    for name, runs in trace.runs.items():
        tik = trace.kernels[name]
        run = runs[-1]
        text = migrate.kernel_asm(tik, runs=[run])
        assert migrate.check_round_trip(tik, run) == []
        old = spaced(text)
        if example == "tik_matmul_tiled.py":        # its fixpipe lowers to pto.mte_l0c_gm: both forms are tested
            assert ", pre_quant(" in text and ", pre_quant(" not in old
        prog, got = _run(old, tik, run)
        assert asm.print_program(prog, locations=True) == text
        for out, expected in run.results.items():
            np.testing.assert_array_equal(np.asarray(got[out]).view(np.uint8), np.asarray(expected).view(np.uint8))


def test_the_spaced_form_differs_where_the_printer_writes_commas():
    text = ("    pto.mte_l0c_gm %1, %g, %c16_i64, %c16_i64, %c16_i64, %c16_i64, %c0_i64, %c0_i64, "
            "pre_quant(%cst, mode = f32_f16), nz2nd, nosat : !pto.ptr<f32, l0c>\n"
            "    pto.mte_gm_l1_frac %a, %0, nd2nz, shape(%c16_i64, %c32_i64), src_layout(%c64_i64) : x")
    assert spaced(text) == ("    pto.mte_l0c_gm %1, %g, %c16_i64, %c16_i64, %c16_i64, %c16_i64, %c0_i64, %c0_i64 "
                            "pre_quant(%cst, mode = f32_f16) nz2nd nosat : !pto.ptr<f32, l0c>\n"
                            "    pto.mte_gm_l1_frac %a, %0 nd2nz shape(%c16_i64, %c32_i64) src_layout(%c64_i64) : x")
