"""Run-time checks a front end can place in a program: ``pto.assert_in_bounds``,
``pto.assert_in_range``, ``pto.assert_multiple``, ``pto.unmodelled``, and the checker bookkeeping
``pto.mark_unwritten``.

A front end that knows the extent of an allocation (TIK's tensor "original shape") but
not, at trace time, the offset or repeat count an instruction will use records::

    pto.assert_in_bounds %first, %end, %size {what = "dst of tik.vec_add: tensor 'x_ub'"}

which raises `OutOfBounds` when the run-time element range ``[first, end)`` is not
inside ``[0, size)``; an empty range (``end <= first``, e.g. zero repeats) always
passes. Units are whatever the front end counts in (TIK: elements of the view's
dtype). The op runs on the scalar unit and touches no memory, so it needs no
synchronisation. It is a simulator check (like the TIK debugger's ``AccessViolation``
test), not a hardware instruction; the PTO-AS text keeps it so listings show where
the check sits.
"""
from __future__ import annotations

from ..errors import IllegalOperand, OutOfBounds, UnsupportedOp
from .registry import Clause, OpSpec, Operand, register

#: ``pto.mark_unwritten %ptr, %nbytes``: the front end frees storage it used for its own scratch (TIK's
#: lowerings of fixpipe / matmul on chips without the unit); the uninitialised-read checker forgets that
#: those bytes were written, so a user tensor placed there later and read before the user writes it is
#: reported (on the device it holds whatever the lowering left). The bytes keep their values; it is no
#: memory access (no hazard, no race, no sync); scalar pipe like the other checks here.


def _assert_in_bounds(ctx, first, end, size, *, what=None, hint=None):
    first, end, size = int(first), int(end), int(size)
    if end <= first:
        return
    if first < 0 or end > size:
        where = what or "an access"
        if first < 0:
            msg = f"tensor overflow: {where} starts {-first} elements before the tensor (of {size} elements)"
        elif size < 0:      # a bound computed at run time from a start past the room's end: no negative room
            msg = (f"tensor overflow: {where} needs elements [{first}, {end}) but the tensor has no room: it "
                   f"starts {-size} elements past the end of the space it may use")
        else:
            msg = (f"tensor overflow: {where} needs elements [{first}, {end}) but the tensor has only {size} "
                   f"elements")
        raise OutOfBounds(msg, op="pto.assert_in_bounds", value=end, limit=size,
                          hint=hint or "check the offsets, repeat counts and strides computed at run time")


#: Bind ``assert_in_bounds`` / ``assert_in_range`` in compiled programs (`OpSpec.bind`, `OpSpec.bind_holes`):
#: a run-time check whose values are plain ints and pass returns after two comparisons; any other value (a
#: failing check, a bool, a numpy or float value) goes to the general function, so errors are the same.
ASSERT_BIND = True


def _fill(args, indices):
    """``fn(*values) -> args`` with the run-time ``values`` put at ``indices`` of ``args``."""
    def fill(values):
        a = list(args)
        for i, v in zip(indices, values):
            a[i] = v
        return a
    return fill


def _static_ints(args, indices) -> bool:
    return all(type(a) is int for i, a in enumerate(args) if i not in indices)


def _bind_in_bounds_holes(args, indices, clauses):
    """`OpSpec.bind_holes` of ``assert_in_bounds``: passing plain-int ranges return at once."""
    if not ASSERT_BIND or not _static_ints(args, indices):
        return None
    run = _assert_in_bounds
    if indices == (0, 1):                       # the common case: run-time first and end, static size
        size = args[2]

        def check(ctx, first, end):
            if type(first) is int and type(end) is int and (end <= first or (first >= 0 and end <= size)):
                return
            run(ctx, first, end, size, **clauses)
        return check
    fill = _fill(args, indices)

    def check_any(ctx, *values):
        first, end, size = a = fill(values)
        if type(first) is int and type(end) is int and type(size) is int and (
                end <= first or (first >= 0 and end <= size)):
            return
        run(ctx, *a, **clauses)
    return check_any


def _bind_in_bounds(args, clauses):
    """`OpSpec.bind` of ``assert_in_bounds``: a check of constants that passes does nothing (one that fails
    keeps the general function, which raises when the op runs)."""
    if not ASSERT_BIND or not _static_ints(args, ()):
        return None
    first, end, size = args
    if end <= first or (first >= 0 and end <= size):
        return _pass
    return None


def _pass(ctx):
    return None


register(OpSpec(
    name="assert_in_bounds", family="assertions", pipe="S",
    operands=(Operand("first", "int", doc="first element accessed"),
              Operand("end", "int", doc="one past the last element accessed (<= first: nothing accessed)"),
              Operand("size", "int", doc="elements of the allocation")),
    clauses=(Clause("what", "attr", doc="what is accessed, for the error message"),
             Clause("hint", "attr", doc="what to do, when the front end knows more than the generic advice"),),
    execute=_assert_in_bounds, bind=_bind_in_bounds, bind_holes=_bind_in_bounds_holes,
    doc="raise OutOfBounds unless [first, end) lies in [0, size) (empty ranges pass)"))


def _assert_in_range(ctx, value, lo, hi, *, what=None, hint=None):
    value, lo, hi = int(value), int(lo), int(hi)
    if not lo <= value <= hi:
        # one allowed value (e.g. a run-time length that must equal another): "must be", not "outside [n, n]"
        rule = f", but it must be {lo}" if lo == hi else f" is outside [{lo}, {hi}]"
        raise IllegalOperand(f"{what or 'a run-time value'} = {value}{rule}", op="pto.assert_in_range",
                             value=value, limit=str(lo) if lo == hi else f"[{lo}, {hi}]",
                             hint=hint or "check the value the kernel computed (e.g. the tiling data it read)")


def _bind_in_range_holes(args, indices, clauses):
    """`OpSpec.bind_holes` of ``assert_in_range``: passing plain-int values return at once."""
    if not ASSERT_BIND or not _static_ints(args, indices):
        return None
    run = _assert_in_range
    if indices == (0,):                         # the common case: a run-time value, static bounds
        lo, hi = args[1], args[2]

        def check(ctx, value):
            if type(value) is int and lo <= value <= hi:
                return
            run(ctx, value, lo, hi, **clauses)
        return check
    fill = _fill(args, indices)

    def check_any(ctx, *values):
        value, lo, hi = a = fill(values)
        if type(value) is int and type(lo) is int and type(hi) is int and lo <= value <= hi:
            return
        run(ctx, *a, **clauses)
    return check_any


def _bind_in_range(args, clauses):
    """`OpSpec.bind` of ``assert_in_range``: a passing check of constants does nothing."""
    if not ASSERT_BIND or not _static_ints(args, ()):
        return None
    value, lo, hi = args
    return _pass if lo <= value <= hi else None


register(OpSpec(
    name="assert_in_range", family="assertions", pipe="S",
    operands=(Operand("value", "int", doc="the run-time value"),
              Operand("lo", "int", doc="smallest allowed value"),
              Operand("hi", "int", doc="largest allowed value")),
    clauses=(Clause("what", "attr", doc="what the value is, for the error message"),
             Clause("hint", "attr", doc="what to do, when the front end knows more than the generic advice"),),
    execute=_assert_in_range, bind=_bind_in_range, bind_holes=_bind_in_range_holes,
    doc="raise IllegalOperand unless lo <= value <= hi (e.g. a core count read from tiling data)"))


def _divisor_not_positive(divisor: int, what) -> IllegalOperand:
    """The error of an ``assert_multiple`` divisor <= 0: the divisor is wrong, not the value (was: "8 is not a
    multiple of -4", which is false, and "8 is not a multiple of 0", which blamed the value)."""
    return IllegalOperand(f"the divisor of {what or 'a run-time value'} is {divisor}, but it must be > 0",
                          op="pto.assert_multiple", operand="divisor", value=divisor, limit="> 0",
                          hint="pass the positive number the value must be a multiple of (e.g. an element size)")


def _verify_multiple(call, target):
    """`OpSpec.verify` of ``assert_multiple``: a constant divisor <= 0 is refused when the op is recorded."""
    divisor = call.operands[1]
    if type(divisor) is int and divisor <= 0:
        raise _divisor_not_positive(divisor, call.clauses.get("what"))


def _assert_multiple(ctx, value, divisor, *, what=None, unit=None, rule=None, operand=None, hint=None):
    value, divisor = int(value), int(divisor)
    if divisor <= 0:
        raise _divisor_not_positive(divisor, what)
    if value % divisor == 0:
        return
    shown = f"{value} {unit}" if unit else str(value)
    raise IllegalOperand(f"{what or 'a run-time value'} {shown} is not {rule or f'a multiple of {divisor}'}",
                         op="pto.assert_multiple", operand=operand, value=value,
                         limit=None if rule else f"multiple of {divisor}",
                         hint=hint or "check the value the kernel computed (e.g. the tiling data it read)")


def _bind_multiple_holes(args, indices, clauses):
    """`OpSpec.bind_holes` of ``assert_multiple``: a passing plain-int value returns after one modulo."""
    if not ASSERT_BIND or indices != (0,) or type(args[1]) is not int or args[1] <= 0:
        return None
    divisor = args[1]
    run = _assert_multiple

    def check(ctx, value):
        if type(value) is int and value % divisor == 0:
            return
        run(ctx, value, divisor, **clauses)
    return check


def _bind_multiple(args, clauses):
    """`OpSpec.bind` of ``assert_multiple``: a passing check of constants does nothing."""
    if not ASSERT_BIND or not _static_ints(args, ()):
        return None
    value, divisor = args
    return _pass if divisor > 0 and value % divisor == 0 else None


register(OpSpec(
    name="assert_multiple", family="assertions", pipe="S",
    operands=(Operand("value", "int", doc="the run-time value (the argument itself, so the error shows it)"),
              Operand("divisor", "int", doc="what it must be a multiple of (> 0)")),
    clauses=(Clause("what", "attr", doc="what the value is (the argument's name), for the error message"),
             Clause("unit", "attr", doc="the value's unit (\"B\"), shown after it"),
             Clause("rule", "attr", doc="the rule as words (\"a multiple of the element size 2 B\"); default "
                                        "\"a multiple of <divisor>\""),
             Clause("operand", "attr", doc="the argument's name, for the error's operand field"),
             Clause("hint", "attr", doc="what to do")),
    execute=_assert_multiple, bind=_bind_multiple, bind_holes=_bind_multiple_holes, verify=_verify_multiple,
    doc="raise IllegalOperand unless value is a multiple of divisor, naming the value itself (a check of a "
        "derived remainder, assert_in_range of value mod divisor, could only show the remainder)"))


def _unmodelled(ctx, *, what=None, why=None, hint=None):
    raise UnsupportedOp(f"{what or 'an instruction'} is not modelled: {why or 'its result is not specified'}",
                        op="pto.unmodelled", hint=hint)


register(OpSpec(
    name="unmodelled", family="assertions", pipe="S",
    operands=(),
    clauses=(Clause("what", "attr", doc="the front-end instruction that is not modelled"),
             Clause("why", "attr", doc="why its result cannot be computed bit for bit"),
             Clause("hint", "attr", doc="what to use instead")),
    execute=_unmodelled,
    doc="raise UnsupportedOp when executed: a front end records it for an instruction it does not model "
        "inside a branch that may not run (e.g. a TIK tiling-key branch), so the kernel's other branches "
        "still run"))


def _mark_unwritten(ctx, ptr, nbytes):
    ctx.forget_written(ptr, int(nbytes), operand="%ptr")


register(OpSpec(
    name="mark_unwritten", family="assertions", pipe="S",
    operands=(Operand("%ptr", "ptr", doc="first byte of the freed storage"),
              Operand("%nbytes", "int", doc="bytes freed")),
    clauses=(),
    execute=_mark_unwritten,
    doc="forget that bytes [ptr, ptr + nbytes) were written (the uninitialised-read check reports a later read "
        "of them that no op wrote first); no memory access, values unchanged"))
