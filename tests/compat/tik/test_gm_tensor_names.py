"""GM tensors sharing a name (fix451): what CANN TIK refuses is refused (WORKSPACE_NAMES_UNIQUE at the declaration,
INTERNAL_GM_NAMES_APART at BuildCCE, as CANN 8.1 ``Tik._check_non_inputs_outputs_tensor`` / te.tik 2019
``Tik.Tensor_``); the rest stay apart in messages (``'w@file:line'``)."""
import inspect
import os
import warnings

import numpy as np
import pytest

from pto_core.errors import GmOverreadWarning, IllegalOperand, UnknownName
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik import build as tik_build
from tbe_compat.tik import container

from .helpers import build, raises_tik, run

HERE = os.path.basename(__file__)


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


def test_a_second_workspace_of_one_name_is_refused_at_its_line_naming_the_first():
    """te.tik 2019: "Workspace's name: w is already used before". The simulator took both; the refused declaration
    changes nothing (a workspace of another name is declared after it and the kernel runs)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    first = _line() + 1
    ti.Tensor("int32", (8,), name="w", scope=tik.scope_gm, is_workspace=True)
    with raises_tik(IllegalOperand, match=rf"workspace name 'w' is taken by the workspace declared at .*{HERE}:{first} "
                                          r"\(TIK: \"Workspace's name: w is already used before\"\).*Fix: give each "
                                          r"workspace its own name=, e.g. name='w_1'"):
        ti.Tensor("int32", (8,), name="w", scope=tik.scope_gm, is_workspace=True)
    assert [st.name for st in ti._gm_tensors] == ["w"]
    ti.Tensor("int32", (8,), name="w_1", scope=tik.scope_gm, is_workspace=True)
    assert [st.name for st in ti._gm_tensors] == ["w", "w_1"]


@pytest.mark.parametrize("kind,kw,listed,words", [
    ("workspace (is_workspace=True)", dict(is_workspace=True), "inputs[0]", "Workspace's name is used"),
    ("global tensor (is_global_tensor=True)", dict(is_global_tensor=True), "outputs[0]", "global tensor's name is used"),
    ("init_value tensor", dict(init_value=[1] * 8), "outputs[0]", "init value tensor's name is used"),
])
def test_an_internal_gm_tensor_named_like_an_argument_is_refused_at_buildcce(kind, kw, listed, words):
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    name = listed.startswith("inputs") and "x" or "y"
    line = _line() + 1
    ti.Tensor("int32", (8,), name=name, scope=tik.scope_gm, **kw)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    kind_re = kind.replace("(", r"\(").replace(")", r"\)")
    with raises_tik(IllegalOperand, match=rf"{kind_re} '{name}' \(declared at .*{HERE}:{line}\) has the name of "
                                          rf"BuildCCE's {listed.replace('[', '.').replace(']', '.')} \(TIK: \"{words}"):
        build(ti, "k", [x], [y])


def test_an_internal_gm_tensor_named_like_another_shows_its_declaration(monkeypatch):
    """A workspace and an unlisted GM tensor (no TIK check known) both named 'w': messages named both 'w'; now the
    one read past its allocation is 'w@<file>:<line>'. With both choices off the old behaviour is back."""
    def kernel():
        set_current_compile_soc_info("Ascend910")
        ti = tik.Tik()
        y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
        ws = ti.Tensor("int32", (8,), name="w", scope=tik.scope_gm, is_workspace=True)
        ti.Tensor("int32", (8,), name="w", scope=tik.scope_gm)
        ub = ti.Tensor("int32", (24,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, ws, 0, 1, 3, 0, 0)             # 96 B from a 64-byte allocation: a GmOverreadWarning
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
        build(ti, "same_name", [], [y])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            run(ti)
        return [str(w.message) for w in rec if w.category is GmOverreadWarning]
    ws_line = inspect.getsourcelines(kernel)[1] + 4
    over = kernel()
    assert len(over) == 1 and f"of tensor 'w@{HERE}:{ws_line}' (8 elements, 32 B;" in over[0], over
    monkeypatch.setattr(tik_build, "INTERNAL_GM_NAMES_APART", False)
    monkeypatch.setattr(container, "WORKSPACE_NAMES_UNIQUE", False)
    over = kernel()
    assert len(over) == 1 and "of tensor 'w' (8 elements, 32 B;" in over[0], over


def test_both_choices_off_build_what_they_refuse(monkeypatch):
    monkeypatch.setattr(tik_build, "INTERNAL_GM_NAMES_APART", False)
    monkeypatch.setattr(container, "WORKSPACE_NAMES_UNIQUE", False)
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm, is_workspace=True)
    ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm, is_workspace=True)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(8, ub, 3, 1, 1, 8)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "off", [], [y])
    assert np.array_equal(run(ti)[0], np.full(8, 3, np.int32))


def test_unlisted_gm_tensors_declared_at_one_line_are_numbered():
    """Two unlisted GM tensors 'tmp' declared by one line in a Python loop were both shown 'tmp@<file>:<line>',
    so a report on one did not say which (review462); they are numbered in declaration order."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    tmp = []
    for _ in range(2):
        line = _line() + 1
        tmp.append(ti.Tensor("float32", (4,), name="tmp", scope=tik.scope_gm))
    ti.data_move(tmp[1], ub, 0, 1, 1, 0, 0)         # 8 floats into 4: past its end, into its last block
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "twins", [x], [y])
    run(ti, {"x": np.arange(8, dtype=np.float32)})
    tails = [m for kind, m in ti.tikdb.reports if kind == "gm-tail"]
    assert len(tails) == 1 and f"past the end of tensor 'tmp@{HERE}:{line}#2' (4 elements, 16 B)" in tails[0], tails


# ----------------------------------------------------------------------------- feed_dict keys size tensors, not names


def _through(ti, x, y, t):
    """x -> UB -> t -> UB -> y: the kernel writes and reads back GM tensor ``t``."""
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.data_move(t, ub, 0, 1, 1, 0, 0)
    ti.vector_dup(8, ub, 0, 1, 1, 8)
    ti.data_move(ub, t, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)


def test_a_workspace_named_like_an_input_does_not_take_the_inputs_feed_as_its_size(monkeypatch):
    """With INTERNAL_GM_NAMES_APART off such a workspace builds; start_debug took feed_dict['x'] (the input's array)
    as the workspace's size too and refused it ("must be the workspace's element count"). The workspace's size is
    now looked up by the tensor: the key is the input's, the workspace keeps its declared size."""
    monkeypatch.setattr(tik_build, "INTERNAL_GM_NAMES_APART", False)
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ws = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm, is_workspace=True)
    _through(ti, x, y, ws)
    build(ti, "ws_like_input", [x], [y])
    xs = np.arange(8, dtype=np.int32) - 3
    assert np.array_equal(run(ti, {"x": xs})[0], xs)


def test_a_runtime_sized_gm_tensor_named_like_an_input_is_not_sized_by_the_inputs_array():
    """An unlisted runtime-sized GM tensor (MAX_INT32 elements) named 'x' like the input took len(feed_dict['x']) as
    its size, silently. Its size has no key of its own: start_debug refuses it, naming its declaration, with a Fix
    to rename it; under its own name it is fed by that name."""
    def kernel(name):
        set_current_compile_soc_info("Ascend910")
        ti = tik.Tik()
        x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
        t = ti.Tensor("int32", (2 ** 31 - 1,), name=name, scope=tik.scope_gm)
        _through(ti, x, y, t)
        build(ti, "rt_like_input", [x], [y])
        return ti
    line = inspect.getsourcelines(kernel)[1] + 5
    xs = np.arange(8, dtype=np.int32) + 5
    with raises_tik(UnknownName, match=rf"GM tensor 'x' \(declared at .*{HERE}:{line}\) is declared with 2147483647 "
                                       r"elements .*Fix: give it a name= of its own and feed that: feed_dict\['x'\] "
                                       r"is the entry of BuildCCE input 'x', not this tensor's size"):
        run(kernel("x"), {"x": xs})
    assert np.array_equal(run(kernel("t"), {"x": xs, "t": 8})[0], xs)


def test_one_feed_key_for_two_same_named_gm_tensors_is_refused(monkeypatch):
    """Two workspaces named 'w' (both choices off): feed_dict['w'] sized both; now it is refused (it would size two
    tensors), and unfed both keep their declared size."""
    monkeypatch.setattr(tik_build, "INTERNAL_GM_NAMES_APART", False)
    monkeypatch.setattr(container, "WORKSPACE_NAMES_UNIQUE", False)
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    w1 = ti.Tensor("int32", (8,), name="w", scope=tik.scope_gm, is_workspace=True)
    ti.Tensor("int32", (16,), name="w", scope=tik.scope_gm, is_workspace=True)
    _through(ti, x, y, w1)
    build(ti, "two_w", [x], [y])
    xs = np.arange(8, dtype=np.int32) * 7
    with raises_tik(UnknownName, match=r"feed_dict\['w'\] would size 2 GM tensors named 'w' .*Fix: give each"):
        run(ti, {"x": xs, "w": 8})
    assert np.array_equal(run(ti, {"x": xs})[0], xs)
