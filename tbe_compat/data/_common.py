"""Dtype strings that many SoC tables share (spelled exactly as in the CANN inis)."""

HF = "float16,float32"
HFIS = "float16,float32,int32,int16"       # v200/v220 add/sub/mul/max/min/...
HFI = "float16,float32,int32"
I16 = "int16,uint16"
AXPY5 = "f16f16f16,f32f32f32,f32f16f16,float16,float32"
AXPY3 = "f16f16f16,f32f32f32,f32f16f16"
SCALAR_F = "int64,float32"
U64 = "uint64"
B32SET6 = "int16,uint16,float16,float32,int32,uint32"
SCAT4 = "float16,int32,int16,float32"
MULCONV = "u8f16f16,s8f16f16"
DM8 = "u8,s8,f16,u16,s16,f32,s32,u32"            # data_move_* rows
L0C2UB = "f16,u16,s16,f32,s32,u32"
SET_L = "f16,u16,s16,f32,s32,u32"
TRANS16 = "uint16,int16,float16"
EMPTY = '""'                                      # ini value `""`: present, no dtype list
GATHERB = "u16u16,s16s16,f16f16,u32u32,s32s32,f32f32"

#: v200 AI-core vconv list (Ascend310P1/P3, Ascend610, BS9SX1AA AICoreintrinsicDtypeMap).
V200_AIC_VCONV = ("f322f16,f162f32,f322f16o,f162s8,f162s8a,f162s8f,f162s8c,f162s8z,f162u8,f162u8a,"
                  "f162u8f,f162u8c,f162u8z,deq,s322f32,f162s32r,f162s32a,f162s32f,f162s32c,f162s32z,"
                  "f322s32r,f322s32a,f322s32f,f322s32c,f322s32z,u82f16,s82f16,s322f16,s162u8,s162s8,"
                  "f162s4,s162f16,f162s16r")
#: v200 vector-core vconv list (Ascend310P1/P3, Ascend610 VectorCoreintrinsicDtypeMap).
V200_AIV_VCONV = ("f322f16,f162f32,f162s8,f162u8,f162s4,s322f16,s162u8,s162s8,s322f32,u82f16,s82f16,"
                  "s162f16,s162f32,f162s32r,f322s32r,f162s16r,f322s16r,f162s8f,f162u8f,f162s32f,"
                  "f322s32f,f162s8c,f162u8c,f162s32c,f322s32c,f162s8a,f162u8a,f162s32a,f322s32a,"
                  "f162s8z,f162u8z,f162s32z,f322s32z,f322s16z,f322f16o")
#: scatter_vconv list shared by v200 and v300 inis.
SCATTER_VCONV = ("f322f16,f162f32,f162s8,f162u8,s322f16,s322f32,u82f16,s82f16,f162s32r,f162s8f,"
                 "f162u8f,f162s32f,f322s32f,f162s8c,f162u8c,f162s32c,f322s32c,f162s8a,f162u8a,"
                 "f162s32a,f322s32a,f162s8z,f162u8z,f162s32z,f322s32z,f322f16o")
#: v220 vconv list (Ascend910B1..B4, both core types).
V220_VCONV = ("f322f32r,f322f32f,f322f32c,deq,f322f32a,f322f32z,f322f16,f322f16r,f322f16f,f322f16c,"
              "f322f16a,f322f16z,f322f16o,f322s64r,f322s64f,f322s64c,f322s64a,f322s64z,f322s32r,"
              "f322s32f,f322s32c,f322s32a,f322s32z,f322s16r,f322s16f,f322s16c,f322s16a,f322s16z,"
              "f162f32,f162s32r,f162s32f,f162s32c,f162s32a,f162s32z,f162s16r,f162s16f,f162s16c,"
              "f162s16a,f162s16z,f162s8,f162s8r,f162s8f,f162s8c,f162s8a,f162s8z,f162u8,f162u8r,"
              "f162u8f,f162u8c,f162u8a,f162u8z,u82f16,s82f16,s162f16,s162f16r,s162f16f,s162f16c,"
              "s162f16a,s162f16z,s162f32,s162s8,s162u8,s322f32,s322f32r,s322f32f,s322f32c,s322f32a,"
              "s322f32z,s322f16,s322s64,s322s16,s642s32,s642f32r,s642f32f,s642f32c,s642f32a,s642f32z,"
              "f322bf16r,f322bf16f,f322bf16c,f322bf16a,f322bf16z,bf162f32,bf162s32r,bf162s32f,"
              "bf162s32c,bf162s32a,bf162s32z")
#: vcbd list of the register-era vector cores (BS9SX1AA VectorCore, Ascend310B1).
VCBD15 = ("u82u16,u82u32,s82s16,s82s32,u162u8,u162u32,s162u8,s162u32,s162s32,u322u8,u322u16,"
          "u322s16,s322u8,s322u16,s322s16")


def rows(value: str, *names: str) -> dict:
    """``{name: value for name in names}``: several intrinsics sharing one dtype string."""
    return {name: value for name in names}
