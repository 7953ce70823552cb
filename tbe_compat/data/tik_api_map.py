"""TIK's own API support table and its API -> instruction name translation.

Transcribed from CANN 8.1.RC1 ``tbe/tik/common/tik_api_map.py`` (``ONLY_TIK_API_MAP``) and
``tbe/tik/tik_lib/tik_params.py`` (``TRANS_TIK_API_TO_INSTR_MAP``) and the ``h_*`` rename
table of ``tbe/tik/common/common_util.py``. Keys of each API row are
``SHORT_SOC_VERSION + core type`` ("Ascend310AiCore"); a row value lists the accepted
dtype strings, an empty list means "any dtype".
"""

SOURCE = "CANN 8.1.RC1 tbe/tik/common/tik_api_map.py, tbe/tik/tik_lib/tik_params.py, tbe/tik/common/common_util.py"

_AIC, _AIV = "AiCore", "VectorCore"
S310, S910, S910B, S910_93 = "Ascend310" + _AIC, "Ascend910" + _AIC, "Ascend910B" + _AIC, "Ascend910_93" + _AIC
V910B, V910_93 = "Ascend910B" + _AIV, "Ascend910_93" + _AIV
ES, CS, SD = "Hi3796CV300ES" + _AIC, "Hi3796CV300CS" + _AIC, "SD3403" + _AIC
A610, V610 = "Ascend610" + _AIC, "Ascend610" + _AIV
A310P, V310P = "Ascend310P" + _AIC, "Ascend310P" + _AIV
ABS9, VBS9 = "BS9SX1A" + _AIC, "BS9SX1A" + _AIV
ABS92, AMC61 = "BS9SX2A" + _AIC, "MC61AM21A" + _AIC
A310B, V310B = "Ascend310B" + _AIC, "Ascend310B" + _AIV
A310M, V310M = "AS31XM1" + _AIC, "AS31XM1" + _AIV
A031, V031 = "Ascend031" + _AIC, "Ascend031" + _AIV
A610L, A035 = "Ascend610Lite" + _AIC, "Ascend035" + _AIC


def _row(dtypes, *keys):
    return {k: list(dtypes) for k in keys}


BASIC_TYPE = _row([], S310, S910, S910B, V910B, S910_93, V910_93, ES, CS, SD, A310P, V310P, A610, V610, ABS9,
                  A310B, A310M)

_U16_32 = ["uint16", "int16", "float16", "uint32", "int32", "float32"]
VECTOR_DUP_V1 = {**_row(_U16_32, S310, S910, ES, CS, SD, A610, V610, A310P, V310P, ABS9, A031, V031, VBS9),
                 **_row(_U16_32 + ["bfloat16"], S910B, V910B, S910_93, V910_93),
                 **_row(["uint16", "int16", "float16"], A035)}
VECTOR_DUP_V300 = _row(["uint8", "int8"] + _U16_32, V310B, A310B, A310M, V310M, A610L, ABS92, AMC61)

_HF = ["float16", "float32"]
_RSQRT_REC_KEYS = (S310, S910, S910B, V910B, S910_93, V910_93, A610, A310P, V310P, V610, ABS9, VBS9, V310B, A310B,
                   A310M, V310M, A610L, ABS92, AMC61)
RSQRT_REC_HIGH_TYPE = _row(_HF, *_RSQRT_REC_KEYS)
VLN_EXPM_REC_HIGH_TYPE = _row(["float16"], *_RSQRT_REC_KEYS)
CONV2D_MATMUL_TYPE = {**_row(["s8s8s32", "f16f16f32"], S310, S910, A310P, A610, ABS9, A610L, ABS92, AMC61),
                      **_row(["s8s8s32", "f16f16f32", "f32f32f32"], S910B, S910_93, A310B, A310M),
                      **_row(["s8s8s32", "f16f16f16"], CS, SD)}
H_SEL_CMPV_TYPE = {**_row(["float16"], S310, ES, CS, SD),
                   **_row(_HF, S910, S910B, V910B, S910_93, V910_93, A610, V610, A310B, V310B, A310P, V310P, ABS9)}

_B8_32 = ["int8", "uint8", "uint16", "int16", "float16", "uint32", "int32", "float32"]
_B8_16 = ["int8", "uint8", "uint16", "int16", "float16"]
_SCALAR_CONV = ["s322f32", "f322s32r", "f322s32a", "f322s32f", "f322s32c", "f322s32z", "f162f32", "f322f16",
                "f322f16o"]
_VNCHW8 = ["int8", "uint8", "uint16", "int16", "float16", "int32", "float32", "uint32"]
_MMAD_V200 = ["u8u8u32", "u8u8s32", "s8s8s32", "u8s8s32", "f16f16f16", "f16f16f32"]
_ATOMIC3 = ["float32", "float16", "int16"]
_FIXPIPE4 = ["f32f16", "f32f32", "s32s32", "s32f16"]

#: ONLY_TIK_API_MAP: TIK APIs whose support TIK decides itself (not via the ini).
ONLY_TIK_API_MAP = {
    "vector_dup_v1": VECTOR_DUP_V1,
    "vector_dup": {**VECTOR_DUP_V1, **VECTOR_DUP_V300},
    "vec_trans_scatter": {**_row(_B8_32, S310, S910, S910B, V910B, S910_93, V910_93, ES, CS, SD, A610, V610, A310P,
                                 V310P, ABS9, VBS9, V310B, A310B, A310M, V310M, A610L, ABS92, AMC61),
                          **_row(_B8_16, A035)},
    "vci": {**_row(["int16", "int32", "float16", "float32"], A610, V610, A310P, V310P),
            **_row(["int8", "int16", "int32", "float16", "float32"], V310B, A310B, A610L, ABS92, AMC61, A310M,
                   V310M)},
    "data_move_v1": BASIC_TYPE,
    "vnchwtrans": _row(["uint16", "int16", "float16"], S310, S910, S910B, V910B, S910_93, V910_93, ES, CS, SD, A610,
                       V610, A310P, V310P, ABS9),
    "scalar_conv": _row(_SCALAR_CONV, S910, S910B, V910B, S910_93, V910_93, ES, CS, SD, A610, V610, A310P, V310P,
                        ABS9, VBS9, V310B, A310B, A310M, V310M, A610L, ABS92, AMC61, A031, V031),
    "mov_rpn_cor_ir_to_scalar": BASIC_TYPE,
    "load2dv1": _row(_B8_16, S310, S910),
    "load2dv2": {**_row(["uint4", "int4"] + _B8_16, ES, CS, SD, A610, A310P, ABS9),
                 **_row(_B8_16 + ["float32"], S910B, S910_93, A310B, A310M),
                 **_row(_B8_16, A610L, ABS92, AMC61)},
    "load2dv3": _row(_B8_16, A610L, ABS92, AMC61),
    "assign": BASIC_TYPE,
    "set_l0_set_value": BASIC_TYPE,
    "load3dv1": _row([], S310, S910, ES, CS, SD, A610, A310P, ABS9),
    "col2img": _row(_HF, S910, A610, A310P, ABS9),
    "mmad_broadcast": {**_row(["f16f16", "f32f32", "s32s32", "f32f16"], S310, S910, S910B, S910_93, A610, A310P,
                              ABS9),
                       **_row(["f32f32", "s32s32"], ES, CS, SD)},
    "mmad": {**_row(["u8u8u32", "s8s8s32", "u8s8s32", "f16f16f16", "f16f16f32"], S310, S910),
             **_row(_MMAD_V200, A610, A310P, ABS9),
             **_row(["u8u8u32", "u8u8s32", "s8s8s32", "u8s8s32", "f16f16f16"], ES, CS, SD),
             **_row(["u8u8s32", "s8s8s32", "u8s8s32", "f16f16f16", "f16f16f32", "f32f32f32"], S910B, S910_93),
             **_row(["s8s8s32", "f16f16f32", "f32f32f32"], A310B, A310M),
             **_row(["s8s8s32", "f16f16f32"], A610L, ABS92, AMC61)},
    "tensor_padding_with_matrix": _row([], S310, S910, S910B, V910B, S910_93, V910_93, ES, CS, SD, A610, A310P,
                                       ABS9),
    "data_move": BASIC_TYPE,
    "data_move_quant": BASIC_TYPE,
    "tensor_mov": BASIC_TYPE,
    "load3dv2": {**_row(["int8", "uint8", "float16"], ES, CS, SD, A610, A310P, ABS9, A610L, ABS92, AMC61),
                 **_row(["int8", "uint8", "float16", "float32"], S910B, S910_93, A310B, A310M)},
    "load3dv2L12L0A": _row(["int8", "uint8", "int16", "uint16", "float16"], A610L, ABS92, AMC61),
    "load3dv2L12L0B": _row(["int16", "uint16", "float16"], A610L, ABS92, AMC61),
    "load_smask": BASIC_TYPE,
    "load_image": _row([], S310, S910, S910B, V910B, S910_93, V910_93, ES, A610, A310P, ABS9),
    "mov_vmrgsort4_sr_to_scalar": BASIC_TYPE,
    "set_rpn_cor_ir": BASIC_TYPE,
    "set_rpn_offset": BASIC_TYPE,
    "mov_atomic_add_to_scalar": BASIC_TYPE,
    "mov_small_channel_to_scalar": BASIC_TYPE,
    "mov_system_cache_to_scalar": BASIC_TYPE,
    "mov_fp2int_mode_to_scalar": BASIC_TYPE,
    "set_atomic_add": {**_row(["float32"], S910),
                       **_row(["float32", "float16", "int16", "int32", "int8", "bfloat16"], S910B, V910B, S910_93,
                              V910_93),
                       **_row(_ATOMIC3, A610, V610, A310P, V310P, ES, CS, SD, VBS9, ABS9, A610L, ABS92, AMC61),
                       **_row(_ATOMIC3 + ["int32"], V310B, A310B, V310M, A310M)},
    "set_small_channel": BASIC_TYPE,
    "set_system_cache": BASIC_TYPE,
    "set_fp2int_mode": _row([], S910, S910B, V910B, S910_93, V910_93, A610, V610, A310P, V310P, ES, CS, SD, ABS9,
                            VBS9, V310B, A310B, V310M, A310M, A610L, ABS92, AMC61),
    "instr_preload": BASIC_TYPE,
    "get_overflow_status": _row([], S910, S910B, V910B, S910_93, V910_93),
    "set_overflow_status": _row([], S910, S910B, V910B, S910_93, V910_93),
    "mov_cmpmask_to_tensor": BASIC_TYPE,
    "mov_tensor_to_cmpmask": BASIC_TYPE,
    "vec_rsqrt_high_preci": RSQRT_REC_HIGH_TYPE,
    "vec_ln_high_preci": VLN_EXPM_REC_HIGH_TYPE,
    "vec_expm1_high_preci": VLN_EXPM_REC_HIGH_TYPE,
    "vec_rec_high_preci": RSQRT_REC_HIGH_TYPE,
    "conv2d": CONV2D_MATMUL_TYPE,
    "fixpipe": {**_row(_FIXPIPE4, S310, S910, S910B, S910_93, A610, A310P, V310P, ABS9, A310B, A310M, A610L, ABS92,
                       AMC61),
                **_row(["s32s32", "s32f16", "f16f16"], CS, SD)},
    "matmul": CONV2D_MATMUL_TYPE,
    "h_cmpv": H_SEL_CMPV_TYPE,
    "h_sel": H_SEL_CMPV_TYPE,
    "h_sin": _row(_HF, S310, S910, A310B, V310B),
    "h_cos": _row(_HF, S310, S910, A310B, V310B),
    "h_quant": _row(["s322f16"], S310, S910, A310B, V310B),
    "vnchwconv": {**_row(_VNCHW8, S310, S910, A031, V031, A310B, V310B, A310M, V310M, A610, V610, A610L, ABS92,
                         AMC61, ABS9, VBS9, A310P, V310P, CS, ES, SD),
                  **_row(_B8_16, A035),
                  **_row(_VNCHW8 + ["bfloat16"], S910B, V910B, S910_93, V910_93)},
    "vmla": _row(["float16"], A035),
    "vmadd": _row(["float16"], A035),
    "vmaddrelu": _row(["float16"], A035),
    "vaxpy": _row(["float16"], A035),
    "set_cond_task_id": _row([], A035),
}

#: TRANS_TIK_API_TO_INSTR_MAP: TIK API names whose instruction has another name.
TRANS_TIK_API_TO_INSTR_MAP = {
    "vcmpv_lt_v1": "vcmpv_lt", "vcmpv_gt_v1": "vcmpv_gt", "vcmpv_ge_v1": "vcmpv_ge", "vcmpv_eq_v1": "vcmpv_eq",
    "vcmpv_ne_v1": "vcmpv_ne", "vcmpv_le_v1": "vcmpv_le", "v_cpadd": "vcpadd", "scalar_sqrt": "sqrt",
    "scalar_abs": "abs", "scalar_countbit0": "bcnt0", "scalar_countbit1": "bcnt1", "scalar_countleading0": "clz",
    "scalar_max": "max", "scalar_min": "min", "v_add": "vadd", "v_sub": "vsub", "v_max": "vmax", "v_min": "vmin",
    "v_mul": "vmul", "v_and": "vand", "v_or": "vor", "v_relu": "vrelu", "v_abs": "vabs", "v_not": "vnot",
    "v_axpy": "vaxpy", "v_adds": "vadds", "vmuls": "vmuls", "v_sel": "vsel", "v_conv": "vconv",
    "vcmp_lt": "vcmp", "vcmp_gt": "vcmp", "vcmp_ge": "vcmp", "vcmp_eq": "vcmp", "vcmp_ne": "vcmp", "vcmp_le": "vcmp",
    "broadcast_ub_to_l0c": "broadcast_ub_to_cc", "vmrgch": "vmergech", "vrpsort16": "vbitsort",
    "vec_reduce_max": "vcmax", "vec_reduce_min": "vcmin", "vec_reduce_add": "vcadd",
}

#: TIK 1.5 (``h_*``) API -> instruction/API name; other ``h_xxx`` names become ``vxxx``.
H_API_MAP = {
    "h_cast": "vconv", "h_reduce_sum": "vcadd", "h_reduce_max": "vcmax", "h_reduce_min": "vcmin",
    "h_reduce_argmax": "vcmax", "h_reduce_argmin": "vcmin", "h_duplicate": "vector_dup", "h_data_move": "data_move",
    "h_sin": "h_sin", "h_cos": "h_cos", "h_quant": "h_quant", "h_cmpv": "h_cmpv",
}
#: dtypes ``h_data_move`` accepts; such a dtype is dropped before the data_move lookup.
H_DATA_MOVE_DTYPES = ("uint8", "int8", "uint16", "int16", "float16", "uint32", "int32", "float32", "uint64", "int64")
