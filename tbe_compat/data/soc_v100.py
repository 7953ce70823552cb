"""v100-family SoC tables (Ascend310 "mini", Ascend910A "cloud").

The public CANN 8.1.RC1 release ships no ``Ascend310.ini`` or ``Ascend910A.ini``. What
we carry and where it comes from:

* Sizes and core counts: tik_api.md §1.3 (read from those inis by the spec author),
  cross-checked with MindSpore AKG's ``cceconf.cc`` "mini"/"cloud" tables (UB 248 KiB /
  256 KiB, L2 8 MiB / 32 MiB, 2 / 32 cores, ``dav-m100`` / ``dav-c100``).
* Intrinsic maps: the release does ship ``Ascend910B.ini`` -- a v100 "cloud" part
  (``Short_SoC_version=Ascend910``, ``AIC-C-100``, not the v220 910B1..B4 series). Its
  [AICoreintrinsicDtypeMap] agrees with every Ascend910A row of tik_api.md Appendix A,
  so it is Ascend910A's map (``V100_CLOUD_INTRINSICS``).
* Ascend310's map = that cloud map with every Ascend310 row of tik_api.md Appendix A
  applied (narrower vexp/vln/vsel/vcmp/vcmpv dtypes, no vdiv/vsqrt/vadddeqrelu/
  vmulconv, a shorter vconv list), plus two rules that hold row-for-row in the v100
  cloud ini: every ``scatter_X`` row's dtypes are a subset of the ``X`` row's (so on
  Ascend310 ``scatter_X`` keeps only dtypes its ``X`` still has, and is dropped with
  ``X``), and the six ``vcmpv_*`` rows are equal. Rows Appendix A does not cover
  (proposal ops, scalar-unit and DMA intrinsics) are the cloud rows: a documented
  approximation.
"""
from ._common import AXPY3, AXPY5, DM8, EMPTY, HF, HFI, I16, L0C2UB, MULCONV, TRANS16, U64, rows

SOURCE = ("CANN 8.1.RC1 data/platform_config/Ascend910B.ini (v100 cloud part) + tik_api.md §1.3 and "
          "Appendix A + MindSpore AKG cceconf.cc")

V100_CLOUD_VCONV = ("f322f16,f162f32,f322f16o,f162s8,f162s8a,f162s8f,f162s8c,f162s8z,f162u8,f162u8a,f162u8f,"
                    "f162u8c,f162u8z,deq,s322f32,f162s32r,f162s32a,f162s32f,f162s32c,f162s32z,f322s32r,"
                    "f322s32a,f322s32f,f322s32c,f322s32z,u82f16,s82f16,s322f16")
V100_MINI_VCONV = "f322f16,f162f32,f162s8,f162u8,deq,f162s32f,f162s32c,f162s32r,u82f16,s82f16,s322f16"
_V100_MMAD = "u32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,f16f16u2,u8,s8,f162f16,f162f32,f16u2,u8s8"

#: Ascend910B.ini (v100 cloud) [AICoreintrinsicDtypeMap], 97 rows.
V100_CLOUD_INTRINSICS = {
    **rows(HF, "vrec", "vadds", "vdiv", "vrsqrt", "vln", "vexp", "vmuls", "vabs", "vcadd", "vsqrt", "vmadd",
           "vmaddrelu", "vsel", "vcmp", "vcmpv_ne", "vcmpv_eq", "vcmpv_gt", "vcmpv_ge", "vcmpv_lt", "vcmpv_le",
           "scatter_vabs", "scatter_vexp", "scatter_vrec", "scatter_vln", "scatter_vrsqrt", "scatter_vsqrt",
           "scatter_vadds", "scatter_vmuls", "scatter_vsel", "scatter_vcmp", "scatter_vdiv", "scatter_vmadd",
           "scatter_vmaddrelu"),
    **rows(HFI, "vadd", "vsub", "vmul", "vmax", "vmin", "broadcast_ub_to_cc", "scatter_vadd", "scatter_vsub",
           "scatter_vmul", "scatter_vmax", "scatter_vmin"),
    **rows("float16", "vcmax", "vcgmax", "vcmin", "vcgmin", "vcgadd", "vcpadd", "vrelu", "vrpac", "vaadd", "viou",
           "vbitsort", "vextract", "vconcat", "vmrgsort4", "scatter_vrelu"),
    **rows(I16, "vor", "vand", "vnot"),
    **rows(AXPY5, "vaxpy", "vmla"),
    **rows(AXPY3, "scatter_vaxpy", "scatter_vmla"),
    "sqrt": "int64,float32",
    **rows("int64", "abs", "max", "min"),
    **rows(U64, "bcnt0", "bcnt1", "clz"),
    **rows(V100_CLOUD_VCONV, "vconv", "scatter_vconv"),
    "mmad": _V100_MMAD,
    "vtranspose": TRANS16,
    "vmergech": "int8,uint8,int16,uint16,float16",
    "vadddeqrelu": "f16s32s32",
    **rows(MULCONV, "vmulconv", "scatter_vmulconv"),
    "scatter_vector_mov": "int16,uint16,float16",
    **rows("int16,uint16,int8,uint8,float16", "vnchwconv", "scatter_vnchwconv"),
    **rows(EMPTY, "rpn_cor", "rpn_cor_diag"),
    **rows(DM8, "data_move_out2l1", "data_move_out2l0a", "data_move_out2l0b", "data_move_l12l0a",
           "data_move_l12l0b", "data_move_l12ub", "data_move_ub2l1", "data_move_ub2out", "data_move_out2ub",
           "data_move_ub2ub"),
    "data_move_l0c2ub": L0C2UB,
}

#: Ascend310 rows of tik_api.md Appendix A that differ from the cloud table (None = absent).
_MINI_APPENDIX_A = {"vexp": "float16", "vln": "float16", "vsel": "float16", "vcmp": "float16",
                    "vcmpv_eq": "float16", "vdiv": None, "vsqrt": None, "vadddeqrelu": None, "vmulconv": None,
                    "vconv": V100_MINI_VCONV}


def _mini_intrinsics():
    table = dict(V100_CLOUD_INTRINSICS)
    for name, value in _MINI_APPENDIX_A.items():
        if value is None:
            table.pop(name)
        else:
            table[name] = value
    for cmp in ("vcmpv_ne", "vcmpv_gt", "vcmpv_ge", "vcmpv_lt", "vcmpv_le"):
        table[cmp] = table["vcmpv_eq"]
    for name in [n for n in table if n.startswith("scatter_") and n[len("scatter_"):] in V100_CLOUD_INTRINSICS]:
        base = table.get(name[len("scatter_"):])
        if base is None:
            table.pop(name)
        else:
            kept = set(base.split(","))
            table[name] = ",".join(d for d in table[name].split(",") if d in kept)
    return table


_SPEC_SIZES = {"cube_m_size": "16", "cube_n_size": "16", "cube_k_size": "16", "l0_a_size": "65536",
               "l0_b_size": "65536", "l0_c_size": "262144", "l1_size": "1048576", "ubblock_size": "32"}

ASCEND310 = {
    "source": SOURCE,
    "core_types": ("AiCore",),
    "version": {"SoC_version": "Ascend310", "Short_SoC_version": "Ascend310", "CCEC_AIC_version": "dav-m100",
                "Compiler_aicpu_support_os": "true"},
    "SoCInfo": {"ai_core_cnt": "2", "vector_core_cnt": "0", "l2_size": "8388608", "core_type_list": "AICore"},
    "AICoreSpec": {**_SPEC_SIZES, "ub_size": "253952"},
    "AICoreintrinsicDtypeMap": _mini_intrinsics(),
    "VectorCoreintrinsicDtypeMap": None,
}

ASCEND910A = {
    "source": SOURCE,
    "core_types": ("AiCore",),
    "version": {"SoC_version": "Ascend910A", "Short_SoC_version": "Ascend910", "AIC_version": "AIC-C-100",
                "CCEC_AIC_version": "dav-c100", "Compiler_aicpu_support_os": "true"},
    "SoCInfo": {"ai_core_cnt": "32", "vector_core_cnt": "0", "l2_size": "33554432", "core_type_list": "AICore"},
    # AICoreSpec rows other than sizes/frequency are the v100 cloud values of Ascend910B.ini.
    "AICoreSpec": {**_SPEC_SIZES, "ub_size": "262144", "vec_calc_size": "128", "smask_buffer": "0",
                   "ubbank_size": "4096", "ubbank_num": "64", "ubburst_in_one_block": "32", "ubbank_group_num": "16",
                   "unzip_engines": "4", "unzip_max_ratios": "64", "unzip_channels": "2", "unzip_is_tight": "1",
                   "load3d_constraints": "1"},
    "AICoreintrinsicDtypeMap": V100_CLOUD_INTRINSICS,
    "VectorCoreintrinsicDtypeMap": None,
}

SOCS = {"Ascend310": ASCEND310, "Ascend910A": ASCEND910A}
