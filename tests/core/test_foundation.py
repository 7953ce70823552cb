"""Foundation: errors, dtypes, targets, memory model, op registry."""
import numpy as np
import pytest

from pto_core import (Machine, MachineOptions, Ptr, dtype, get_target, target_names)
from pto_core.errors import (ConfigError, IllegalOperand, Misaligned, OutOfBounds, PtoError, Provenance,
                             UninitializedRead, UnknownName)
from pto_core.ops import registry
from pto_core.ops.registry import Clause, Operand, OpSpec
from pto_core.targets import BufferSizes, dprofile_target, space_name
from pto_core import pto


# ----------------------------------------------------------------------------- errors

def test_error_message_names_location_op_operand_limit_and_fix():
    e = IllegalOperand("value 5000 is outside [1, 4095]", op="pto.mad", operand="%m", value=5000,
                       limit="[1, 4095]", hint="tile the matmul", where=Provenance("k.py", 12, "tik.matmul"))
    text = str(e)
    assert text.startswith("k.py:12 in `tik.matmul`: pto.mad operand %m: value 5000")
    assert text.endswith("Fix: tile the matmul")
    assert isinstance(e, ValueError) and isinstance(e, PtoError)
    e.add_context(core=1, i=3)
    assert "[at core=1, i=3]" in str(e)


def test_error_message_names_the_op_once_when_the_call_is_the_op():
    e = IllegalOperand("bad", op="pto.mad", operand="%m", where=Provenance("k.py", 3, "pto.mad"))
    assert str(e) == "k.py:3 in `pto.mad`: operand %m: bad"
    assert str(IllegalOperand("bad", op="tik.vec_add", where=Provenance("k.py", 3, "tik.vec_add"))) == \
        "k.py:3 in `tik.vec_add`: bad"
    assert str(IllegalOperand("bad", op="pto.mad")) == "pto.mad: bad"


def test_error_message_shows_the_limit_once():
    assert "(limit:" not in str(IllegalOperand("x = 300 is outside [1, 255]", limit="[1, 255]"))
    assert str(IllegalOperand("x = 300 is too large", limit="[1, 255]")).startswith(
        "x = 300 is too large (limit: [1, 255])")


def test_error_classes_derive_from_matching_builtins():
    assert issubclass(OutOfBounds, IndexError)
    assert issubclass(UnknownName, LookupError)
    assert issubclass(UninitializedRead, RuntimeError)


# ----------------------------------------------------------------------------- dtypes

@pytest.mark.parametrize("spelling,canon", [
    ("float16", "f16"), ("half", "f16"), ("f16", "f16"), ("bfloat16", "bf16"), ("int8", "s8"), ("si8", "s8"),
    ("i8", "s8"), ("ui8", "u8"), ("uint8", "u8"), ("f8E4M3FN", "e4m3"), ("f8E5M2", "e5m2"), ("uint1", "u1"),
    ("int32", "s32"), ("float32", "f32"), ("f4E2M1x2", "e2m1x2"), ("int4", "s4"), ("hifloat8", "hif8"),
    (np.float16, "f16"), (np.dtype(np.int32), "s32"), ("FLOAT16", "f16"),
])
def test_dtype_lookup_by_any_spelling(spelling, canon):
    assert dtype(spelling).name == canon


def test_dtype_table_sizes_and_c0():
    assert dtype("f16").c0 == 16 and dtype("f32").c0 == 8 and dtype("s8").c0 == 32 and dtype("s4").c0 == 64
    assert dtype("s4").nbytes(3) == 2 and dtype("e2m1x2").packed == 2 and dtype("u1").nbytes(9) == 2
    assert dtype("f16").pto_name == "f16" and dtype("s8").pto_name == "i8" and dtype("u8").pto_name == "ui8"
    assert dtype("s16").min == -32768 and dtype("u8").max == 255 and dtype("f16").max == 65504.0
    assert dtype("e4m3").max == 448.0
    with pytest.raises(ValueError):
        dtype("s4").itemsize


def test_unknown_dtype_lists_valid_names():
    with pytest.raises(UnknownName, match="unknown dtype 'float17'") as ei:
        dtype("float17")
    assert "f16" in str(ei.value) and "e4m3" in str(ei.value)


# ----------------------------------------------------------------------------- targets

def test_pto_target_capacities_match_buffer_limits():
    expect = {  # pto_spec.md §1.2 (KiB)
        "A2A3": (192, 512, 64, 64, 128, 1, 2, 0, 0),
        "A5": (256, 512, 64, 64, 256, 4, 4, 4, 4),
        "Kirin9030": (128, 512, 32, 32, 64, 1, 7, 0, 0),
        "KirinX90": (128, 1024, 64, 64, 128, 1, 6, 0, 0),
    }
    for name, (ub, l1, l0a, l0b, l0c, bt, fb, sa, sb) in expect.items():
        s = get_target(name).sizes
        assert (s.ub, s.l1, s.l0a, s.l0b, s.l0c, s.bt, s.fb, s.l0a_scale, s.l0b_scale) == tuple(
            v * 1024 for v in (ub, l1, l0a, l0b, l0c, bt, fb, sa, sb)), name
        assert get_target(name).alignment == 32


def test_legacy_socs_and_aliases():
    assert get_target("ascend910") is get_target("Ascend910A")
    assert get_target("Ascend310").sizes.ub == 253952 and get_target("Ascend310").aic_cores == 2
    assert get_target("Ascend910B1").sizes.l0c == 128 * 1024
    assert ("f16", "f16", "f16") in get_target("Ascend310").mad_dtypes
    assert ("f16", "f16", "f16") not in get_target("A2A3").mad_dtypes
    assert get_target("A5").mad_mx_dtypes and not get_target("A2A3").mad_mx_dtypes
    assert get_target("Ascend310").overflow_mode == "saturation" and get_target("A2A3").overflow_mode == "inf_nan"
    assert dprofile_target("v100", "cloud").name == "Ascend910A"
    assert dprofile_target("V200", "SD3403").name == "SD3403"
    assert set(target_names("pto")) == {"A2A3", "A5", "Kirin9030", "KirinX90"}
    for name in ("Ascend310", "Ascend910A", "Ascend310P1", "Ascend310P3", "Ascend610", "Ascend910B1",
                 "Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend310B1", "Hi3796CV300ES", "Hi3796CV300CS",
                 "SD3403", "BS9SX1AA"):
        assert get_target(name).kind == "soc"


def test_profiles_are_frozen():
    t = get_target("A2A3")
    with pytest.raises(Exception):
        t.alignment = 64  # type: ignore[misc]
    with pytest.raises(Exception):
        BufferSizes(1, 1, 1, 1, 1).l1 = 5  # type: ignore[misc]


def test_unknown_target_lists_valid_names():
    with pytest.raises(UnknownName) as ei:
        get_target("Ascend999")
    assert "A2A3" in str(ei.value) and "Ascend310" in str(ei.value)
    with pytest.raises(UnknownName, match="Dprofile"):
        dprofile_target("v900", "x")


def test_space_names():
    assert space_name("Mat") == "l1" and space_name("cbuf") == "l1" and space_name("Acc") == "l0c"
    assert space_name("scaling") == "fb" and space_name("local.UB") == "ub"
    with pytest.raises(UnknownName, match="unknown memory space"):
        space_name("l2")


# ----------------------------------------------------------------------------- memory

def test_machine_buffers_follow_the_profile_and_start_with_the_fill_pattern():
    m = Machine("A5", cores=2)
    core = m.cores[1]
    assert core.buffer("l0a_scale").size == 4096 and len(core.ubs) == 2
    assert (core.buffer("l1").data == 0x55).all() and not core.buffer("l1").written.any()   # finite on-chip fill
    y = m.gm_alloc((4,), "f32", name="y")
    assert np.isnan(m.read(y, 4)).all()                                   # NaN-like GM fill (0xFF bytes)
    with pytest.raises(IllegalOperand, match="does not exist on A2A3"):
        Machine("A2A3").ptr("l0a_scale", "e8m0", 0)
    assert (Machine("A2A3", options=MachineOptions(fill="zero")).cores[0].buffer("ub").data == 0).all()


def test_gm_regions_are_separated_by_guard_gaps():
    m = Machine("A2A3")
    x = m.gm_tensor(np.arange(8, dtype=np.float32), name="x")
    y = m.gm_alloc((4,), "f16", name="y")
    assert y.addr - x.addr >= 32 + 4096
    ctx = m.context(0)
    ctx.begin_op("test.read", "MTE2", None)
    assert np.array_equal(ctx.view(x, 8).astype(np.float32), np.arange(8, dtype=np.float32))
    with pytest.raises(OutOfBounds, match="run past the end of region 'x'"):
        ctx.read(x + 6, 16, operand="%src")
    with pytest.raises(OutOfBounds, match=r"GM bytes \[40, 44\) run past the end of region 'x'"):
        ctx.read(x.byte_offset(40), 4)
    with pytest.raises(OutOfBounds, match="not inside any allocated region"):
        ctx.read(x.byte_offset(-4096), 4)
    with pytest.raises(OutOfBounds, match=r"GM bytes \[-8, 4\) of region 'y': the access starts 8 B before"):
        ctx.read(y.byte_offset(-8), 12)                    # 12 bytes from y - 8: a negative offset into y
    with pytest.raises(OutOfBounds, match=r"not inside any allocated region \(16 B before region 'y' and \d+ B past "
                                          r"the end of region 'x'\)"):
        ctx.read(y.byte_offset(-16), 4)                    # in the guard gap, reaching no region: nearer one first
    with pytest.raises(IllegalOperand, match="already used"):
        m.gm_alloc((1,), "f32", name="x")


def test_on_chip_bounds_and_alignment_errors_name_the_operand():
    m = Machine("A2A3")
    ctx = m.context(0)
    ctx.begin_op("pto.test", "MTE1", None)
    with pytest.raises(OutOfBounds) as ei:
        ctx.read(m.ptr("l0a", "f16", 65536 - 16), 32, operand="%lhs")
    assert ei.value.operand == "%lhs" and "capacity 65536 B on A2A3" in str(ei.value)
    with pytest.raises(Misaligned, match="not 32-byte aligned"):
        ctx.check_aligned(m.ptr("l1", "f16", 48), 32, "%src")


def test_written_map_and_uninitialised_reads():
    m = Machine("A2A3", options=MachineOptions(uninitialized="raise"))
    ctx = m.context(0)
    p = m.ptr("ub", "f32", 64)
    ctx.begin_op("pto.test", "V", None)
    ctx.view(p, 4, write=True)[:] = [1, 2, 3, 4]
    assert ctx.view(p, 4).tolist() == [1, 2, 3, 4]
    with pytest.raises(UninitializedRead, match="which nothing wrote"):
        ctx.view(p, 5)
    rec = Machine("A2A3")
    rec.context(0).read(rec.ptr("ub", "u8", 0), 4)
    assert rec.reports and rec.reports[0][0] == "uninitialized"


def test_ptr_arithmetic_and_types():
    m = Machine("A2A3")
    p = m.ptr("l0c", "f32", 0x400)
    assert (p + 3).addr == 0x40C and (p + 3).byte_offset(-12) == p
    assert p.type_str == "!pto.ptr<f32, l0c>" and p.cast("s32").dtype.name == "s32"
    assert isinstance(p, Ptr)
    with pytest.raises(ConfigError):
        MachineOptions(fill="garbage")


def test_machine_read_write_round_trip_and_copy_semantics():
    m = Machine("Ascend310")
    src = np.arange(12, dtype=np.int16).reshape(3, 4)
    g = m.gm_tensor(src, name="g")
    out = m.read(g, (3, 4))
    out[0, 0] = 99
    assert m.read(g, (3, 4))[0, 0] == 0 and src[0, 0] == 0


# ----------------------------------------------------------------------------- registry

def _register_demo_op():
    if "demo_copy" in registry.OPS:
        return registry.OPS["demo_copy"]

    def execute(ctx, src, dst, n, *, unit_flag=None, loop3=None, sat=None, tag=None):
        count = n * (loop3[0][0] if loop3 else 1)
        ctx.view(dst, count, write=True, operand="%dst")[:] = ctx.view(src, count, operand="%src")

    return registry.register(OpSpec(
        "demo_copy", "test", "MTE1",
        operands=(Operand("%src", "ptr", ("ub",)), Operand("%dst", "ptr", ("ub",)), Operand("%n", "int")),
        clauses=(Clause("unit_flag", "word", values=("check_only", "check_and_clear")),
                 Clause("loop3", "args", params=("%count", "%src_stride3", "%dst_stride3")),
                 Clause("sat", "sat"),
                 Clause("tag", "args", params=("%v",), keys={"mode": ("a", "b")})),
        execute=execute, doc="test op"))


def test_registry_dispatch_eager_with_provenance():
    _register_demo_op()
    m = Machine("A2A3")
    a, b = m.ptr("ub", "f32", 0), m.ptr("ub", "f32", 64)
    m.write(a, np.arange(8, dtype=np.float32))
    pto.demo_copy(a, b, 4, unit_flag="check_only", loop3=(2, 0, 0), sat="preserve_nan")
    assert m.read(b, 8).tolist() == list(range(8))
    with pytest.raises(OutOfBounds) as ei:
        pto.demo_copy(a, m.ptr("ub", "f32", 196608 - 8), 4)
    assert ei.value.where is not None and ei.value.where.file.endswith("test_foundation.py")
    assert ei.value.op == "pto.demo_copy" and ei.value.operand == "%dst"


def test_registry_validates_arity_clause_values_order_and_exclusivity():
    _register_demo_op()
    m = Machine("A2A3")
    a, b = m.ptr("ub", "f32", 0), m.ptr("ub", "f32", 64)
    with pytest.raises(IllegalOperand, match="takes 3 operands"):
        pto.demo_copy(a, b)
    with pytest.raises(IllegalOperand, match="not one of check_only, check_and_clear"):
        pto.demo_copy(a, b, 1, unit_flag="check_and_set")
    with pytest.raises(IllegalOperand, match="out of canonical order"):
        pto.demo_copy(a, b, 1, sat=True, unit_flag="check_only")
    with pytest.raises(UnknownName, match="unknown clause 'bogus'"):
        pto.demo_copy(a, b, 1, bogus=True)
    with pytest.raises(IllegalOperand, match="takes 3..3 parameters"):
        pto.demo_copy(a, b, 1, loop3=(1, 2))
    with pytest.raises(IllegalOperand, match=r"tag\(mode\)"):
        pto.demo_copy(a, b, 1, tag=(1, {"mode": "c"}))
    with pytest.raises(IllegalOperand, match="sat takes True"):
        pto.demo_copy(a, b, 1, sat="maybe")
    with pytest.raises(AttributeError, match="unknown op 'pto.no_such_op'"):
        pto.no_such_op


def test_clause_dict_form_normalises_to_args_and_keys():
    spec = _register_demo_op()
    call = registry.make_call(spec, (1, 2, 3), {"tag": {"%v": 7, "mode": "a"}})
    assert call.clauses["tag"] == ((7,), {"mode": "a"})


def test_active_context_is_per_thread_and_none_in_a_thread_that_made_no_machine():
    """`active_context` reads a per-thread default (None) without a failed attribute lookup; a thread
    that never created or activated a machine has none, and eager ops there still say how to make one."""
    import threading
    from pto_core.memory import active_context, current_context
    m = Machine("A2A3")
    assert active_context() is not None and active_context().machine is m
    seen = {}

    def other():
        seen["ctx"] = active_context()
        try:
            current_context()
        except PtoError as e:
            seen["err"] = str(e)
        Machine("A5")
        seen["own"] = active_context().machine.target.name
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen["ctx"] is None and "no active Machine" in seen["err"] and seen["own"] == "A5"
    assert active_context().machine is m          # the other thread's machine is not this thread's
