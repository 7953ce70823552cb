"""Every TIK API name written after ``pto.`` / ``pto.ub.`` gets a Fix that names its PTO op(s) or says it is no PTO
op and what to write instead (`pto_core.ops.registry.TIK_API_OPS`, `TIK_API_NO_OP`, `TIK_APIS_NOT_MODELLED`, the
rules of `unknown_op_hint`) -- never a closest-name guess (review457: ``set_l0a`` -> pto.set_flag, ``ub.set_l1`` ->
pto.ub.vsel, ``ub.vec_dp`` -> pto.ub.vector_dup; k464: ``pto.ub.scalar_max`` -> pto.ub.scatter_vmax, ``pto.for_range``
-> "see the API reference"). The names come from the facade, not from a list in the test."""
import inspect

import pytest

from pto_core import pto
from pto_core.ops import registry
from tbe_compat.tik.bridge import BridgeAPI
from tbe_compat.tik.container import Tik, known_tik_apis


def facade_apis() -> list:
    """The TIK APIs the facade implements: public attributes of `tik.Tik`, less its own additions (`BridgeAPI`:
    pto_ptr, record) and its introspection properties (program, fixpipe_calls)."""
    own = set(vars(BridgeAPI))
    return sorted(n for n in dir(Tik) if not n.startswith("_") and n not in own
                  and not isinstance(inspect.getattr_static(Tik, n), property))


def _fix(key: str) -> str:
    obj = pto
    with pytest.raises(AttributeError) as e:
        for part in key.split("."):
            obj = getattr(obj, part)
    return str(e.value)


def test_the_facade_list_is_the_tik_api():
    apis = facade_apis()
    assert len(apis) > 200 and {"data_move", "vec_add", "for_range", "BuildCCE", "h_add", "vsel"} <= set(apis)
    assert not {"pto_ptr", "record", "program", "fixpipe_calls"} & set(apis)


@pytest.mark.parametrize("prefix", ["", "ub."])
def test_every_tik_api_of_the_facade_names_its_pto_op_or_says_there_is_none(prefix):
    fuzzy = []
    for name in facade_apis():
        key = prefix + name
        if key in registry.OPS:
            continue                                    # the TIK name is the PTO op's own name
        hint = registry._tik_name_hint(key)
        if hint is None or f"TIK's {name} " not in hint and "under pto.ub" not in hint:
            fuzzy.append((key, registry.unknown_op_hint(key)))
    assert fuzzy == []


def test_every_known_tik_api_name_gets_a_fix_too():
    """The names of CANN's TIK tables the facade does not implement (tik.<name> raises for them) as well."""
    missing = [n for n in sorted(known_tik_apis()) if n not in registry.OPS and registry._tik_name_hint(n) is None]
    assert missing == []


@pytest.mark.parametrize("key,fix", [
    ("set_l0a", "TIK's set_l0a has no PTO op and is not modelled"),
    ("ub.set_l1", "TIK's set_l1 has no PTO op and is not modelled"),
    ("ub.vec_dp", "TIK's vec_dp has no PTO op and is not modelled"),
    ("ub.scalar_max", "TIK's scalar_max is no PTO op: it is a scalar expression (arith.maxsi / maxnumf"),
    ("for_range", "TIK's for_range is no PTO op: it is a loop: k.for_(lo, hi)"),
    ("BuildCCE", "TIK's BuildCCE is no PTO op: it is the kernel's signature"),
    ("ub.set_flag", "TIK's set_flag is pto.set_flag (not under pto.ub"),
    ("ub.col2img", "TIK's col2img is pto.col2img"),
    ("broadcast_ub_to_l0c", "TIK's broadcast_ub_to_l0c is pto.broadcast_ub_to_cc"),
    ("ub.vreducev2", "pto.ub.vreduce (pattern 1..7) / pto.ub.vreduce_bits"),
    ("block_barrier", "TIK's block_barrier is pto.sync_all"),
    ("printf", "TIK's printf is pto.debug_print"),
    ("data_move_l12l0a", "is one path of data_move"),
])
def test_the_names_the_closest_match_got_wrong(key, fix):
    assert fix in _fix(key)
