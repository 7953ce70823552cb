"""v300-family SoC table (Ascend310B1), transcribed from CANN 8.1.RC1
``aarch64-linux/data/platform_config/Ascend310B1.ini``.

The register-ISA ``Intrinsic_vectorized_*`` rows (about 100 per core type) are not
tabulated; see ``omitted_intrinsic_prefixes``.
"""
from ._common import (B32SET6, DM8, GATHERB, HF, HFIS, I16, SCALAR_F, SCATTER_VCONV, SET_L, TRANS16, U64,
                      V220_VCONV, VCBD15, rows)

SOURCE = "CANN 8.1.RC1 data/platform_config/Ascend310B1.ini"

_I8 = "float16,float32,int32,int16,int8,uint8"
_CMP8 = "float16,float32,int8,uint8"
_FP_OUT = "f32,s32,f16"
#: the 310B vconv list is the v220 list without s162s8.
_V300_VCONV = V220_VCONV.replace(",s162s8,", ",")

#: rows shared by both core types.
_COMMON = {
    "vrelu": "float16,float32,int32",
    **rows(HF, "vexp", "vln", "vabs", "vrec", "vrsqrt", "vcadd", "vcmax", "vcmin", "vbi", "vlrelu", "vsqrt",
           "vdiv", "vcgadd", "vcpadd", "vcgmax", "vcgmin", "vbitsort32", "vmrgsort4v2", "vmadd", "vextract"),
    "vnot": I16,
    **rows(_I8, "vadd", "vsub", "vmax", "vadds"),
    **rows(HFIS, "vmul", "vmuls", "vmaxs", "vmins"),
    **rows("int16,uint16,int8,uint8", "vand", "vor"),
    **rows("f16f16f16,f32f32f32,float16,float32", "vaxpy", "vmla"),
    **rows(_CMP8, "vcmpv_ne", "vcmpv_gt", "vcmpv_ge", "vcmpv_lt", "vcmpv_le", "vcmp", "vsel",
           "vcmpvs_ne", "vcmpvs_gt", "vcmpvs_ge", "vcmpvs_lt", "vcmpvs_le"),
    "vcmpv_eq": "float16,float32,int32,int8,uint8",
    "vcmpvs_eq": "int32,float16,float32,int8,uint8",
    "vconv": _V300_VCONV,
    "scatter_vconv": SCATTER_VCONV,
    "vreduce": "int16,uint16,float16,float32,int32,uint32,int8,uint8",
    **rows("int16,uint16,int32,uint32", "vshl", "vshr"),
    "vnchwconv": "float16,float32,int32,int16,uint32,uint16,int8,uint8",
    **rows(B32SET6, "vreducev2", "vcopy", "vscatter", "vgather"),
    **rows(SCALAR_F, "sqrt", "abs", "max", "min"),
    **rows(U64, "bcnt0", "bcnt1", "clz"),
    **rows(GATHERB, "vgatherb", "vbrcb"),
    "vcbd": VCBD15,
    "vtranspose": TRANS16,
    "data_move_pad": "uint8,int8,uint16,int16,float16,int32,float32,uint32",
    "data_move_gather": "uint8,int8,uint16,int16,float16,int32,float32,uint32,uint64,int64",
    "vector_filter1d": "u8s16,s8s16,u16s16,s16s16",
    "vci": "float16,float32,int16,int32",
    "fix_pipe_l0c2out": _FP_OUT,
}

_FIX4 = "f16,s8,u8,s4"

#: [AICoreintrinsicDtypeMap] without Intrinsic_vectorized_* (126 distinct rows).
_AIC = {
    **_COMMON,
    "vmin": HFIS,
    **rows(DM8, "data_move_out2l1", "data_move_out2l0a", "data_move_out2l0b", "data_move_l12l0a",
           "data_move_l12l0b", "data_move_l12out", "data_move_l12ub", "data_move_ub2l1", "data_move_ub2out",
           "data_move_l12bt", "data_move_out2ub", "data_move_ub2ub", "data_move_transpose_l12l0a",
           "data_move_transpose_l12l0b", "fix_pipe_l12fb"),
    **rows(SET_L, "set_l1", "set_l0a", "set_l0b"),
    **rows(_FP_OUT, "fix_pipe_l0c2l1", "fix_pipe_l0c2ub"),
    "fix_pipe_support_multiple_output": "true",
    "fix_pipe_unit_list": "pre_conv,pre_act,post_eltwise,post_act,post_quant,post_transform",
    "fix_pipe_pre_conv_func_list": "requant,dequant,quant,cast",
    "fix_pipe_pre_conv_requant": "s322s8,s322u8,s322s4",
    "fix_pipe_pre_conv_dequant": "s322f16",
    "fix_pipe_pre_conv_quant": "f322s8,f322u8,f322s4",
    "fix_pipe_pre_conv_cast": "f322f16,f322bf16",
    "fix_pipe_pre_act_func_list": "normal_relu,scalar_relu,vector_relu,clip_relu",
    "fix_pipe_pre_act_normal_relu": "f32,f16,bf16,s8,u8,s4,s32",
    **rows(_FIX4, "fix_pipe_pre_act_scalar_relu", "fix_pipe_pre_act_vector_relu", "fix_pipe_pre_act_clip_relu",
           "fix_pipe_post_act_normal_relu", "fix_pipe_post_act_scalar_relu", "fix_pipe_post_act_vector_relu"),
    "fix_pipe_post_eltwise_func_list": "anti_quant_add,anti_quant_sub,add,sub",
    **rows("f16f16s8,f16f16s4", "fix_pipe_post_eltwise_anti_quant_add", "fix_pipe_post_eltwise_anti_quant_sub"),
    **rows("f16", "fix_pipe_post_eltwise_add", "fix_pipe_post_eltwise_sub", "fix_pipe_post_act_clip_relu"),
    "fix_pipe_post_act_func_list": "normal_relu,scalar_relu,vector_relu,clip_relu",
    "fix_pipe_post_quant_func_list": "quant",
    "fix_pipe_post_quant_quant": "f32,f162u8,f162s8,f162s4",
    "fix_pipe_post_transform_func_list": "nz2nd",
    "fix_pipe_post_transform_nz2nd": "f32,f16,bf16,s8,u8,s4,s32",
    **rows("post_eltwise", "fix_pipe_post_act_depend_unit", "fix_pipe_post_quant_depend_unit"),
    "mmad": "s8,f162f32,s4,bf162f32,f322f32,h322f32,s32s8s8,f16f16f16,f32f16f16,s32u8u2,f16f16u2,s32s4s4",
    "mmad_sp": "s8",
    "data_move_out2l1_nd2nz": "u8,s8,f16,bf16,u16,s16,f32,s32,u32",
}

#: [VectorCoreintrinsicDtypeMap] without Intrinsic_vectorized_* (76 distinct rows).
_AIV = {**_COMMON, "vmin": _I8}

ASCEND310B1 = {
    "source": SOURCE,
    "core_types": ("AiCore", "VectorCore"),
    "version": {"SoC_version": "Ascend310B1", "Short_SoC_version": "Ascend310B", "AIC_version": "AIC-M-300",
                "CCEC_AIC_version": "dav-m300", "CCEC_AIV_version": "dav-m300",
                "Compiler_aicpu_support_os": "true", "Arch_type": "2"},
    "SoCInfo": {"ai_core_cnt": "1", "vector_core_cnt": "1", "ai_cpu_cnt": "4", "memory_type": "0",
                "memory_size": "34359738368", "l2_type": "0", "l2_cache_mode": "cmo", "l2_size": "4194304",
                "l2PageNum": "64", "core_type_list": "AICore,VectorCore,CubeCore",
                "cube_vector_combine": "fuse,split"},
    "AICoreSpec": {"cube_freq": "1224", "cube_m_size": "16", "cube_n_size": "16", "cube_k_size": "16",
                   "vec_calc_size": "128", "l0_a_size": "65536", "l0_b_size": "65536", "l0_c_size": "131072",
                   "l1_size": "1048576", "fb0_size": "2048", "fb1_size": "1024", "fb2_size": "1024",
                   "fb3_size": "2048", "bt_size": "1024", "smask_buffer": "0", "ub_size": "253952",
                   "ubblock_size": "32", "ubbank_size": "4096", "ubbank_num": "64", "ubburst_in_one_block": "32",
                   "ubbank_group_num": "16", "unzip_engines": "1", "unzip_max_ratios": "32",
                   "unzip_channels": "4", "unzip_is_tight": "1", "support_fixpipe": "1", "sparsity": "1"},
    "AICoreMemoryRates": {"ddr_rate": "17", "ddr_read_rate": "17", "ddr_write_rate": "17", "l2_rate": "256",
                          "l2_read_rate": "256", "l2_write_rate": "128", "l1_to_l0_a_rate": "512",
                          "l1_to_l0_b_rate": "256", "l1_to_ub_rate": "128", "l0_c_to_ub_rate": "128",
                          "ub_to_l2_rate": "128", "ub_to_ddr_rate": "128", "ub_to_l1_rate": "128"},
    "CPUCache": {"AICPUSyncBySW": "0", "TSCPUSyncBySW": "0"},
    "VectorCoreSpec": {"vec_freq": "1224", "vec_calc_size": "128", "smask_buffer": "0", "ub_size": "262144",
                       "ubblock_size": "32", "ubbank_size": "4096", "ubbank_num": "64",
                       "ubburst_in_one_block": "32", "ubbank_group_num": "16", "vector_reg_width": "256",
                       "predicate_reg_width": "32", "wide_reg_width": "768"},
    "AICoreintrinsicDtypeMap": _AIC,
    "VectorCoreintrinsicDtypeMap": _AIV,
    "omitted_intrinsic_prefixes": {"AiCore": ("vectorized_",), "VectorCore": ("vectorized_",)},
}

SOCS = {"Ascend310B1": ASCEND310B1}
