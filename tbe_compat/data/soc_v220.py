"""v220-family SoC tables (Ascend910B1..B4), transcribed from CANN 8.1.RC1
``aarch64-linux/data/platform_config/Ascend910B{1,2,3,4}.ini``.

The four inis differ only in ``SoC_version``, core counts, ``vir_type_list``,
``cube_freq``, ``memory_size`` and ``l2_size``; the intrinsic maps are identical.
"""
from ._common import (AXPY5, B32SET6, DM8, GATHERB, HF, HFI, HFIS, I16, MULCONV, SCALAR_F, SET_L,
                      TRANS16, U64, V220_VCONV, rows)

SOURCE = "CANN 8.1.RC1 data/platform_config/Ascend910B{1,2,3,4}.ini"

_FP_OUT = "f32,s32,f16"
_PAD9 = "uint8,int8,uint16,int16,float16,int32,float32,uint32,bfloat16"
_VNCHW = "int16,uint16,int8,uint8,float16,int32,uint32,float32"

#: rows shared by [AICoreintrinsicDtypeMap] and [VectorCoreintrinsicDtypeMap].
_COMMON = {
    **rows(HF, "vrec", "vdiv", "vrsqrt", "vln", "vexp", "vabs", "vcmax", "vcgmax", "vcmin", "vcgmin",
           "vcadd", "vcgadd", "vcpadd", "vsqrt", "vmadd", "vmaddrelu", "vsel",
           "vcmpv_ne", "vcmpv_gt", "vcmpv_ge", "vcmpv_lt", "vcmpv_le", "vlrelu",
           "vcmpvs_ne", "vcmpvs_gt", "vcmpvs_ge", "vcmpvs_lt", "vcmpvs_le", "vbi", "vbitsort32",
           "vmrgsort4v2"),
    **rows(HFI, "vcmpv_eq", "vcmpvs_eq", "vrelu"),
    **rows(HFIS, "vadd", "vadds", "vsub", "vmul", "vmax", "vmin", "vmuls", "vmaxs", "vmins"),
    **rows(I16, "vor", "vand", "vnot"),
    **rows(AXPY5, "vaxpy", "vmla"),
    **rows(SCALAR_F, "sqrt", "abs", "max", "min"),
    **rows(U64, "bcnt0", "bcnt1", "clz"),
    **rows("float16", "vbitsort", "vmrgsort4"),
    **rows(B32SET6, "vgather", "vreduce", "vreducev2", "vcopy"),
    **rows(GATHERB, "vgatherb", "vbrcb"),
    "vconv": V220_VCONV,
    "vtranspose": TRANS16,
    "vmulconv": MULCONV,
    "vnchwconv": _VNCHW,
    "vshr": "uint16,int16,uint32,int32",
    "vshl": "int16,uint16,int32,uint32",
    "data_move_pad": _PAD9,
    "fix_pipe_l0c2out": _FP_OUT,
    "vaddrelu": "int16,float16,float32",
}

#: [AICoreintrinsicDtypeMap] (102 distinct rows; the ini lists vmaddrelu twice).
_AIC = {
    **_COMMON,
    "vcmp": "float16,float32,int16",
    "mmad": "u32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,f16f16u2,u8,s8,f162f16,f162f32,f16u2,u8s8,h322f32,"
            "f32f32f32,f322f32",
    **rows(DM8, "data_move_out2l1", "data_move_out2l0a", "data_move_out2l0b", "data_move_l12l0a",
           "data_move_l12l0b", "data_move_l12out", "data_move_l12bt", "data_move_transpose_l12l0a",
           "data_move_transpose_l12l0b", "fix_pipe_l12fb"),
    **rows(SET_L, "set_l1", "set_l0a", "set_l0b"),
    "fix_pipe_l0c2l1": _FP_OUT,
    "fix_pipe_support_multiple_output": "true",
    "fix_pipe_unit_list": "pre_conv,pre_act,post_transform",
    "fix_pipe_pre_conv_func_list": "requant,dequant,quant,cast",
    "fix_pipe_pre_conv_requant": "s322s8,s322u8,s322s4",
    "fix_pipe_pre_conv_dequant": "s322f16",
    "fix_pipe_pre_conv_quant": "f322s8,f322u8,f322s4",
    "fix_pipe_pre_conv_cast": "f322f16,f322bf16",
    "fix_pipe_pre_act_func_list": "normal_relu,scalar_relu,vector_relu",
    "fix_pipe_pre_act_normal_relu": "f32,f16,bf16,s8,u8,s4,s32",
    "fix_pipe_pre_act_scalar_relu": "f16,s8,u8,s4",
    "fix_pipe_pre_act_vector_relu": "f16,s8,u8,s4",
    "fix_pipe_post_transform_func_list": "nz2nd",
    "fix_pipe_post_transform_nz2nd": "f32,f16,bf16,s8,u8,s4,s32",
    "data_move_out2l1_nd2nz": "u8,s8,f16,bf16,u16,s16,f32,s32,u32",
}

_MMAD12 = "u32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,f16f16u2,u8,s8,f162f16,f162f32,f16u2,u8s8"

#: [VectorCoreintrinsicDtypeMap] (74 rows).
_AIV = {**_COMMON, "vcmp": HF, "mmad": _MMAD12}

_SPEC = {
    "cube_m_size": "16", "cube_n_size": "16", "cube_k_size": "16", "vec_calc_size": "128",
    "l0_a_size": "65536", "l0_b_size": "65536", "l0_c_size": "131072", "l1_size": "524288",
    "fb0_size": "2048", "fb1_size": "1024", "fb2_size": "2048", "fb3_size": "2048", "bt_size": "1024",
    "smask_buffer": "0", "ub_size": "196608", "ubblock_size": "32", "ubbank_size": "4096",
    "ubbank_num": "64", "ubburst_in_one_block": "32", "ubbank_group_num": "16", "unzip_engines": "4",
    "unzip_max_ratios": "64", "unzip_channels": "2", "unzip_is_tight": "1", "support_fixpipe": "1",
    "sparsity": "1",
}
_RATES = {
    "ddr_rate": "32", "ddr_read_rate": "32", "ddr_write_rate": "32", "l2_rate": "110", "l2_read_rate": "110",
    "l2_write_rate": "86", "l1_to_l0_a_rate": "512", "l1_to_l0_b_rate": "256", "l1_to_ub_rate": "128",
    "l0_c_to_ub_rate": "256", "ub_to_l2_rate": "64", "ub_to_ddr_rate": "64", "ub_to_l1_rate": "128",
}


def _soc(name, cores, vir, freq, memory_size, l2_size):
    return {
        "source": f"CANN 8.1.RC1 data/platform_config/{name}.ini",
        "core_types": ("AiCore", "VectorCore"),
        "version": {"SoC_version": name, "Short_SoC_version": "Ascend910B", "AIC_version": "AIC-C-220",
                    "CCEC_AIC_version": "dav-c220-cube", "CCEC_AIV_version": "dav-c220-vec",
                    "CCEC_CUBE_version": "dav-c220-cube", "CCEC_VECTOR_version": "dav-c220-vec",
                    "Compiler_aicpu_support_os": "true", "Arch_type": "4"},
        "SoCInfo": {"ai_core_cnt": str(cores), "cube_core_cnt": str(cores), "vector_core_cnt": str(2 * cores),
                    "ai_cpu_cnt": "4", "memory_type": "", "memory_size": memory_size, "l2_type": "0",
                    "l2_size": l2_size, "l2PageNum": "64", "prefetch_num": "8", "ffts_mode": "ffts-plus",
                    "core_type_list": "CubeCore,VectorCore", "cube_vector_combine": "split",
                    "hardware_sync_betweencore": "1", "vir_type_list": vir},
        "AICoreSpec": {"cube_freq": freq, **_SPEC},
        "AICoreMemoryRates": _RATES,
        "CPUCache": {"AICPUSyncBySW": "0", "TSCPUSyncBySW": "0"},
        "AICoreintrinsicDtypeMap": _AIC,
        "VectorCoreintrinsicDtypeMap": _AIV,
        "CUBECoreintrinsicDtypeMap": {"mmad": _MMAD12},
    }


ASCEND910B1 = _soc("Ascend910B1", 24, "2,3,6,12,24", "1850", "68719476736", "201326592")
ASCEND910B2 = _soc("Ascend910B2", 24, "2,3,6,12,24", "1800", "68719476736", "201326592")
ASCEND910B3 = _soc("Ascend910B3", 20, "4,5,10,20", "1800", "68719476736", "201326592")
ASCEND910B4 = _soc("Ascend910B4", 20, "4,5,10,20", "1500", "34359738368", "100663296")

SOCS = {t["version"]["SoC_version"]: t for t in (ASCEND910B1, ASCEND910B2, ASCEND910B3, ASCEND910B4)}
