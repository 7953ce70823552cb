"""CANN's ``impl.util.util_select_op_base``: the format-selection and slicing descriptions ops build.

CANN operator files import these helpers at module level for their ``op_select_format`` (which
dtype/format pairs the op accepts, as JSON) and ``get_op_support_info`` (which axes the graph
compiler may slice, as JSON). The simulator never calls either hook, but a kernel file that cannot
import the names never reaches its TIK code, so the names exist and build the same JSON CANN builds
(keys ``name`` / ``dtype`` / ``format`` / ``unknownshape_format`` per ``input0``/``output0`` entry;
``_op_slice_info`` with ``splitMaps`` / ``reduceMaps`` / ``l1FusionEnable`` / ``minTbeL1Space``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional


@dataclass
class Element:
    """One tensor's description in an ``op_select_format`` answer."""
    name: str
    datatype: str
    format: Optional[str]
    unknownshape_format: Optional[str] = None


@dataclass
class ParamItem:
    """An `Element` with its slot (``"input0"``, ``"output0"``, ...)."""
    classify: str
    element: Element


def gen_param(classify, name, datatype, format=None, unknownshape_format=None):  # noqa: A002 (CANN's name)
    """CANN's ``gen_param``: one slot of an ``op_select_format`` answer."""
    return ParamItem(classify, Element(name, datatype, format, unknownshape_format))


def get_dynamic_param_in_json(param_desc_list):
    """The ``op_select_format`` JSON: ``{slot: {"name", "dtype"[, "format"][, "unknownshape_format"]}}``."""
    out = {}
    for item in param_desc_list:
        e = item.element
        d = {"name": e.name, "dtype": e.datatype}
        if e.format is not None:
            d["format"] = e.format
        if e.unknownshape_format is not None:
            d["unknownshape_format"] = e.unknownshape_format
        out[item.classify] = d
    return json.dumps(out, indent=4)


class _Group:
    """A list of per-tensor rows (``SplitInput([idx, axes, head, tail], ...)`` and its relatives)."""

    def __init__(self, *rows):
        self.rows = rows


class SplitInput(_Group):
    """Inputs of one split rule: rows ``[idx, [axis], [head_overlap], [tail_overlap]]``."""

    @property
    def input_array(self):
        return self.rows

    @property
    def input_split_num(self):
        return len(self.rows)


class SplitOutput(_Group):
    """Outputs of one split rule: rows ``[idx, [axis]]``."""

    @property
    def output_array(self):
        return self.rows

    @property
    def output_split_num(self):
        return len(self.rows)


class ReduceInput(_Group):
    """Inputs of one reduce rule: rows ``[idx, [axis]]``."""

    @property
    def reduce_input(self):
        return self.rows

    @property
    def reduce_input_num(self):
        return len(self.rows)


class ReduceOutput(_Group):
    """Outputs of one reduce rule: rows ``[idx, reduce_type, is_atomic]``."""

    @property
    def reduce_output(self):
        return self.rows

    @property
    def reduce_output_num(self):
        return len(self.rows)


def _split_map(rule):
    ins, outs = rule[0], rule[1]
    return {"inputList": [{"idx": r[0], "axis": r[1], "headOverLap": r[2], "tailOverLap": r[3]} for r in ins.rows],
            "outputList": [{"idx": r[0], "axis": r[1]} for r in outs.rows]}


def _reduce_map(rule):
    ins, outs = rule[0], rule[1]
    return {"inputList": [{"idx": r[0], "axis": r[1]} for r in ins.rows],
            "outputList": [{"idx": r[0], "reduceType": r[1], "isAtomic": r[2]} for r in outs.rows]}


def get_op_cal_info(axis_split_list, axis_reduce_list=None, l1FusionEnable=0, minTbeL1Space=0):  # noqa: N803
    """CANN's ``get_op_cal_info``: the ``get_op_support_info`` JSON for split / reduce rules."""
    info = {"splitMaps": [_split_map(r) for r in (axis_split_list or [])],
            "reduceMaps": [_reduce_map(r) for r in (axis_reduce_list or [])],
            "l1FusionEnable": l1FusionEnable, "minTbeL1Space": minTbeL1Space}
    return json.dumps({"_op_slice_info": info})


def get_split_n_info(inputs, outputs):
    """Split rule for axis 0 (N) of the given input and output indices."""
    rows_in = [[i, [0], [-1], [-1]] for i in inputs]
    rows_out = [[i, [0], [-1], [-1]] for i in outputs]
    return get_op_cal_info([[SplitInput(*rows_in), SplitOutput(*rows_out)]], None, 0, 0)
