"""v200-family SoC tables (Ascend310P1/P3, Ascend610, BS9SX1AA, Hi3796CV300ES/CS, SD3403).

Ascend310P1/P3, Ascend610 and BS9SX1AA are transcribed from CANN 8.1.RC1
``aarch64-linux/data/platform_config/<SoC>.ini`` (public mirror ``leideng/CANN-8.1.RC1``);
register-ISA ``Intrinsic_vectorized_*`` rows are not tabulated (see ``OMITTED``).
The public release ships no ini for Hi3796CV300ES/CS or SD3403: their sizes come from
tik_api.md §1.3 and they carry no intrinsic map (queries that need one raise).
"""
from ._common import (AXPY3, AXPY5, B32SET6, DM8, EMPTY, HF, HFI, HFIS, I16, L0C2UB, MULCONV,
                      SCALAR_F, SCAT4, SCATTER_VCONV, TRANS16, U64, V200_AIC_VCONV, V200_AIV_VCONV,
                      VCBD15, rows)

SOURCE = "CANN 8.1.RC1 data/platform_config/{Ascend310P1,Ascend310P3,Ascend610,BS9SX1AA}.ini"

_V200_MMAD = ("s32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,s32u8u2,f16f16u2,s32s4s4,u8,s8,f162f16,"
              "f162f32,f16u2,u8s8,b8u2,s4,u32u8u8")
_VNCHW8 = "int16,uint16,int8,uint8,int32,uint32,float16,float32"
_SCATTER_VNCHW = "int16,uint16,int8,uint8,float16,uint32,int32,float32"
_V4DTRANS = "int8,uint8,int16,uint16,float16,float32,int32,uint32"
_RELUCONV = "s162s8,f162s8,f322f16"
_VCBD_310P_AIV = ("u82u16,u82s16,u82u32,u82s32,u162u8,u162u32,u162s32,s162u8,s162u32,s162s32,u322u8,"
                  "u322u16,u322s16,s322u8,s322u16,s322s16")

#: Ascend310P3 [AICoreintrinsicDtypeMap] (120 rows).
_P3_AIC = {
    **rows(HFIS, "vadd", "vadds", "vsub", "vmul", "vmax", "vmaxs", "vmin", "vmins", "vmuls"),
    **rows(HF, "vrec", "vdiv", "vrsqrt", "vln", "vexp", "vabs", "vcmax", "vcgmax", "vcmin", "vcgmin",
           "vcadd", "vcgadd", "vcpadd", "vsqrt", "vmadd", "vmaddrelu", "vsel", "vcmp",
           "vcmpv_ne", "vcmpv_eq", "vcmpv_gt", "vcmpv_ge", "vcmpv_lt", "vcmpv_le",
           "vcmpvs_ne", "vcmpvs_eq", "vcmpvs_gt", "vcmpvs_ge", "vcmpvs_lt", "vcmpvs_le",
           "vrpac", "vaadd", "viou", "vbitsort", "vextract", "vconcat", "vmrgsort4",
           "scatter_vabs", "scatter_vexp", "scatter_vrec", "scatter_vln", "scatter_vrsqrt",
           "scatter_vsqrt", "scatter_vsel", "scatter_vcmp", "scatter_vdiv", "scatter_vmadd",
           "scatter_vmaddrelu", "vlrelu"),
    **rows(I16, "vor", "vand", "vnot"),
    **rows(AXPY5, "vaxpy", "vmla"),
    **rows(AXPY3, "scatter_vaxpy", "scatter_vmla"),
    **rows(HFI, "vrelu", "broadcast_ub_to_cc"),
    **rows(SCALAR_F, "sqrt", "abs", "max", "min"),
    **rows(U64, "bcnt0", "bcnt1", "clz"),
    **rows(SCAT4, "scatter_vadds", "scatter_vmuls", "scatter_vmaxs", "scatter_vmins", "scatter_vadd",
           "scatter_vsub", "scatter_vmul", "scatter_vmax", "scatter_vmin"),
    **rows(B32SET6, "vgather", "vpadding", "vscatter", "vreduce"),
    **rows(MULCONV, "vmulconv", "scatter_vmulconv"),
    **rows("int16,float16,float32", "vaddrelu", "vsubrelu"),
    **rows(_RELUCONV, "vaddreluconv", "vsubreluconv"),
    **rows(DM8, "data_move_out2l1", "data_move_out2l0a", "data_move_out2l0b", "data_move_l12l0a",
           "data_move_l12l0b", "data_move_l12ub", "data_move_ub2l1", "data_move_ub2out",
           "data_move_out2ub", "data_move_ub2ub"),
    **rows(EMPTY, "rpn_cor", "rpn_cor_diag"),
    "vconv": V200_AIC_VCONV,
    "mmad": _V200_MMAD,
    "depthwise_conv": "f16f16f16,f32f16f16,s32u8s8,s32s8s8,s32u8u8",
    "vtranspose": TRANS16,
    "v4dtrans": _V4DTRANS,
    "vmergech": "int8,uint8,float16",
    "vadddeqrelu": "f16s32s32",
    "scatter_vector_mov": "int16,uint16,float16",
    "scatter_vrelu": "float16,int32,,float32",
    "scatter_vconv": SCATTER_VCONV,
    "vbi": "float16",
    "vnchwconv": _VNCHW8,
    "vcbd": "s322s16",
    "scatter_vnchwconv": _SCATTER_VNCHW,
    "data_move_l0c2ub": L0C2UB,
}

#: Ascend310P3 [VectorCoreintrinsicDtypeMap] (110 rows).
_P3_AIV = {
    **rows(HF, "vcmpv_ne", "vcmpv_eq", "vcmpv_gt", "vcmpv_ge", "vcmpv_lt", "vcmpv_le", "vsel",
           "vcmpvs_ne", "vcmpvs_eq", "vcmpvs_gt", "vcmpvs_ge", "vcmpvs_lt", "vcmpvs_le",
           "vrpac", "vaadd", "viou", "vbitsort", "vextract", "vconcat", "vmrgsort4",
           "vexp", "vln", "vrec", "vsqrt", "vrsqrt", "vdiv", "vmadd", "vmaddrelu",
           "scatter_vexp", "scatter_vrec", "scatter_vln", "scatter_vrsqrt", "scatter_vsqrt",
           "scatter_vsel", "vcadd", "vcgmin", "vcgadd", "vcgmax", "vcpadd", "scatter_vdiv",
           "scatter_vmadd", "scatter_vmaddrelu", "vlrelu"),
    **rows(SCALAR_F, "sqrt", "abs", "max", "min"),
    **rows(U64, "bcnt0", "bcnt1", "clz"),
    **rows(HFIS, "vadd", "vsub", "vmax", "vmin", "vmul", "vadds", "vmuls", "vmaxs", "vmins"),
    **rows(I16, "vand", "vor", "vnot"),
    **rows("float16,float32,int16", "vabs", "vcmp", "scatter_vabs", "scatter_vcmp", "vcmax", "vcmin"),
    **rows(AXPY3, "vaxpy", "vmla", "scatter_vaxpy", "scatter_vmla"),
    **rows(B32SET6, "vpadding", "vscatter", "vgather", "vreduce"),
    **rows(MULCONV, "vmulconv", "scatter_vmulconv"),
    **rows(SCAT4, "scatter_vadds", "scatter_vmuls", "scatter_vmaxs", "scatter_vmins", "scatter_vadd",
           "scatter_vsub", "scatter_vmul", "scatter_vmax", "scatter_vmin"),
    **rows("int16,float16,float32", "vaddrelu", "vsubrelu"),
    **rows(_RELUCONV, "vaddreluconv", "vsubreluconv"),
    **rows(EMPTY, "rpn_cor", "rpn_cor_diag"),
    "vrelu": HFI,
    "vtranspose": TRANS16,
    "v4dtrans": _V4DTRANS,
    "vmergech": "int8,uint8,float16",
    "vadddeqrelu": "f16s32s32",
    "vconv": V200_AIV_VCONV,
    "scatter_vector_mov": "int16,uint16,float16",
    "scatter_vrelu": "float16,int32,float32",
    "scatter_vconv": SCATTER_VCONV,
    "vnchwconv": _VNCHW8,
    "vcbd": _VCBD_310P_AIV,
    "vshl": "uint16,int16,float16,uint32,int32,float32",
    "vshr": "uint16,int16,uint32,int32",
    "vdp": "int16",
    "vci": "float16,float32,int16,int32",
    "vbi": "float16",
    "scatter_vnchwconv": _SCATTER_VNCHW,
}

_P1_OVERRIDES = {"vmergech": "int8,uint8,int16,uint16,float16",
                 "vaddreluconv": _RELUCONV + ",vdeqs162b8", "vsubreluconv": _RELUCONV + ",vdeqs162b8"}

_V200_AIC_SPEC = {
    "cube_m_size": "16", "cube_n_size": "16", "cube_k_size": "16", "vec_calc_size": "128",
    "l0_a_size": "65536", "l0_b_size": "65536", "l0_c_size": "262144", "l1_size": "1048576",
    "smask_buffer": "256", "ub_size": "262144", "ubblock_size": "32", "ubbank_size": "4096",
    "ubbank_num": "64", "ubburst_in_one_block": "32", "ubbank_group_num": "16",
    "unzip_engines": "4", "unzip_max_ratios": "64", "unzip_channels": "2", "unzip_is_tight": "1",
    "load3d_constraints": "1",
}
_V200_MEM_RATES = {
    "ddr_rate": "17", "ddr_read_rate": "17", "ddr_write_rate": "17", "l2_rate": "114",
    "l2_read_rate": "114", "l2_write_rate": "114", "l1_to_l0_a_rate": "512", "l1_to_l0_b_rate": "256",
    "l1_to_ub_rate": "128", "l0_c_to_ub_rate": "512", "ub_to_l2_rate": "114", "ub_to_ddr_rate": "17",
    "ub_to_l1_rate": "256",
}
_V200_VEC_SPEC = {
    "vec_freq": "1000", "vec_calc_size": "128", "smask_buffer": "0", "ub_size": "262144",
    "ubblock_size": "32", "ubbank_size": "4096", "ubbank_num": "64", "ubburst_in_one_block": "32",
    "ubbank_group_num": "16",
}
_CPU_CACHE = {"AICPUSyncBySW": "0", "TSCPUSyncBySW": "0"}
_AIC_AIV = ("AiCore", "VectorCore")


def _version(soc, short, aic, ccec_aic, ccec_aiv, arch_type):
    return {"SoC_version": soc, "Short_SoC_version": short, "AIC_version": aic, "CCEC_AIC_version": ccec_aic,
            "CCEC_AIV_version": ccec_aiv, "Compiler_aicpu_support_os": "true", "Arch_type": arch_type}


def _p_soc_info(aic, aiv, mix, cpus, vir):
    return {"ai_core_cnt": aic, "vector_core_cnt": aiv, "mix_vector_core_cnt": mix, "ai_cpu_cnt": cpus,
            "memory_type": "0", "memory_size": "24000000000", "l2_type": "0", "l2_size": "16777216",
            "l2PageNum": "64", "prefetch_num": "10", "max_stream_num": "1024",
            "max_hardware_eventid_num": "1024", "max_notifyid_num": "1024", "max_modelid_num": "1024",
            "core_type_list": "AICore,VectorCore", "support_vector_engine": "1", "vir_type_list": vir}


ASCEND310P3 = {
    "source": "CANN 8.1.RC1 data/platform_config/Ascend310P3.ini",
    "core_types": _AIC_AIV,
    "version": _version("Ascend310P3", "Ascend310P", "AIC-M-200", "dav-m200", "dav-m200-vec", "1"),
    "SoCInfo": _p_soc_info("8", "7", "15", "16", "1,2,4"),
    "AICoreSpec": {"cube_freq": "1060", **_V200_AIC_SPEC, "pipev2_constraints": "1"},
    "AICoreMemoryRates": _V200_MEM_RATES,
    "CPUCache": _CPU_CACHE,
    "VectorCoreSpec": _V200_VEC_SPEC,
    "AICoreintrinsicDtypeMap": _P3_AIC,
    "VectorCoreintrinsicDtypeMap": _P3_AIV,
}

ASCEND310P1 = {
    **ASCEND310P3,
    "source": "CANN 8.1.RC1 data/platform_config/Ascend310P1.ini",
    "version": _version("Ascend310P1", "Ascend310P", "AIC-M-200", "dav-m200", "dav-m200-vec", "1"),
    "SoCInfo": _p_soc_info("10", "8", "18", "8", "1,2,4,8"),
    "AICoreintrinsicDtypeMap": {**_P3_AIC, **_P1_OVERRIDES},
    "VectorCoreintrinsicDtypeMap": {**_P3_AIV, **_P1_OVERRIDES, "vrelu": "float16,float32,int16,int32",
                                    "vshl": "uint16,int16,uint32,int32"},
}

_AUTO_SOC_INFO = {"ai_core_cnt": "10", "vector_core_cnt": "8", "ai_cpu_cnt": "2", "memory_type": "0",
                  "memory_size": "", "l2_type": "0", "l2_size": "16777216", "l2PageNum": "64", "task_num": "0",
                  "core_type_list": "AICore,VectorCore", "support_vector_engine": "1"}

ASCEND610 = {
    "source": "CANN 8.1.RC1 data/platform_config/Ascend610.ini",
    "core_types": _AIC_AIV,
    "version": _version("Ascend610", "Ascend610", "AIC-M-200", "dav-m200", "dav-m200-vec", "6"),
    "SoCInfo": _AUTO_SOC_INFO,
    "AICoreSpec": {"cube_freq": "960", **_V200_AIC_SPEC},
    "AICoreMemoryRates": _V200_MEM_RATES,
    "CPUCache": _CPU_CACHE,
    "VectorCoreSpec": _V200_VEC_SPEC,
    "AICoreintrinsicDtypeMap": {**_P3_AIC, "vnchwconv": "int16,uint16,int8,uint8,int32,uint32,float32,float16"},
    "VectorCoreintrinsicDtypeMap": _P3_AIV,
}

#: BS9SX1AA [AICoreintrinsicDtypeMap] (117 rows): the 310P3 table without depthwise_conv,
#: v4dtrans, vgather, vpadding, vscatter, vmergech and scatter_vnchwconv, plus four rows.
_BS9_AIC = {k: v for k, v in _P3_AIC.items()
            if k not in ("depthwise_conv", "v4dtrans", "vgather", "vpadding", "vscatter", "vmergech",
                         "scatter_vnchwconv")}
_BS9_AIC.update({
    "mmad": "s32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,s32u8u2,f16f16u2,u8,s8,f162f16,f162f32,f16u2,u8s8,"
            "b8u2,u32u8u8",
    "scatter_vrelu": "float16,int32,float32",
    "winograd_conv": "s32s8s8",
    "load_cbuf_to_cb_winograd_v2": "int8",
    "load_cbuf_to_ca_winograd_v2": "uint8,int8,int16",
    "get_ub_virtual_address": "uint8,int8,uint16,int16,int32,uint32,float16,float32,uint64",
})

#: BS9SX1AA [VectorCoreintrinsicDtypeMap] without the Intrinsic_vectorized_* rows (74 rows).
_BS9_AIV = {
    **rows(SCALAR_F, "abs", "sqrt", "max", "min"),
    **rows(U64, "bcnt0", "bcnt1", "clz"),
    **rows(HF, "vexp", "vcmpv_ne", "vcmpv_gt", "vcmpv_ge", "vcmpv_lt", "vcmpv_le", "vln", "vabs", "vrec",
           "vrsqrt", "vsqrt", "vdiv", "vbi", "vmadd", "vmaddrelu", "vlrelu", "vcmp", "vsel",
           "vcmpvs_ne", "vcmpvs_gt", "vcmpvs_ge", "vcmpvs_lt", "vcmpvs_le", "vcadd", "vcmax", "vcmin",
           "vcgadd", "vcgmax", "vcgmin", "vcpadd", "vbitsort32", "vmrgsort4v2"),
    **rows(HFI, "vrelu", "vcmpv_eq", "vcmpvs_eq"),
    **rows(HFIS, "vadds", "vadd", "vsub", "vmul", "vmax", "vmin", "vmuls", "vmaxs", "vmins"),
    **rows(I16, "vnot", "vand", "vor"),
    **rows("int16,uint16,int32,uint32", "vshl", "vshr"),
    **rows("f16f16f16,f32f32f32", "vmla", "vaxpy"),
    **rows(B32SET6, "vreduce", "vreducev2", "vscatter", "vgather", "vgatherb", "vcopy"),
    "vmulconv": MULCONV,
    "vconv": ("f162f32,f322f16r,f322f16,f322f16o,u82f16,s82f16,f162u8,f162u8r,f162u8a,f162u8f,f162u8c,"
              "f162u8z,f162s8,f162s8r,f162s8a,f162s8f,f162s8c,f162s8z,f162s16,f162s32r,f162s32a,f162s32f,"
              "f162s32c,f162s32z,s162f16,s162f32,f322s16r,f322s16z,f322s32r,f322s32a,f322s32f,f322s32c,"
              "f322s32z,s322f32,u82u16,s82s16,u162u8,u162u32,s162u32,s162s32,u322u16,u322s16,s322u16,"
              "s322s16"),
    "vcbd": VCBD15,
    "vtranspose": TRANS16,
    "vnchwconv": "float16,float32,int32,int16,uint32,uint16,int8,uint8",
    "vci": "int8,int16,int32,float16,float32",
    "data_move_gather": "uint8,int8,uint16,int16,float16,int32,float32,uint32,uint64,int64",
    "vector_filter1d": "u8s16,s8s16,u16s16,s16s16",
    "data_move_pad": "uint8,int8,uint16,int16,float16,int32,float32,uint32",
    "get_ub_virtual_address": "uint8,int8,uint16,int16,int32,uint32,float16,float32,uint64",
}

BS9SX1AA = {
    "source": "CANN 8.1.RC1 data/platform_config/BS9SX1AA.ini",
    "core_types": _AIC_AIV,
    "version": _version("BS9SX1AA", "BS9SX1A", "AIC-M-210", "dav-m201", "dav-m210-vec", "7"),
    "SoCInfo": _AUTO_SOC_INFO,
    "AICoreSpec": {"cube_freq": "1230", **{k: v for k, v in _V200_AIC_SPEC.items() if k != "load3d_constraints"},
                   "unzip_max_ratios": "32"},
    "AICoreMemoryRates": _V200_MEM_RATES,
    "CPUCache": _CPU_CACHE,
    "VectorCoreSpec": {**_V200_VEC_SPEC, "vector_reg_width": "256", "predicate_reg_width": "32",
                       "wide_reg_width": "768"},
    "AICoreintrinsicDtypeMap": _BS9_AIC,
    "VectorCoreintrinsicDtypeMap": _BS9_AIV,
    "omitted_intrinsic_prefixes": {"VectorCore": ("vectorized_",)},
}


def _hisi(soc, l1_size):
    """A small-hisi SoC known only by the tik_api.md §1.3 sizes (no public ini)."""
    return {
        "source": "tik_api.md §1.3 (no ini in the public CANN 8.1 release; no intrinsic map)",
        "core_types": ("AiCore",),
        "version": {"SoC_version": soc, "Short_SoC_version": soc},
        "SoCInfo": {"ai_core_cnt": "1", "vector_core_cnt": "0", "core_type_list": "AICore"},
        "AICoreSpec": {"cube_m_size": "16", "cube_n_size": "16", "cube_k_size": "16",
                       "l0_a_size": "32768", "l0_b_size": "32768", "l0_c_size": "131072",
                       "l1_size": l1_size, "ub_size": "196608", "ubblock_size": "32"},
        "AICoreintrinsicDtypeMap": None,
        "VectorCoreintrinsicDtypeMap": None,
    }


HI3796CV300ES = _hisi("Hi3796CV300ES", "524288")
HI3796CV300CS = _hisi("Hi3796CV300CS", "524288")
SD3403 = _hisi("SD3403", "1048576")

SOCS = {t["version"]["SoC_version"]: t for t in
        (ASCEND310P1, ASCEND310P3, ASCEND610, BS9SX1AA, HI3796CV300ES, HI3796CV300CS, SD3403)}
