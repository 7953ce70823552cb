"""Migrating a TIK conv2d + fixpipe kernel to PTO in three steps (a mixed kernel at each).

A 3 x 3 convolution of a float16 feature map ``[C1, H, W, C0]`` = ``[2, 8, 8, 16]`` with
weights ``[C1, Kh, Kw, Cout, C0]`` = ``[2, 3, 3, 32, 16]`` (stride 1, padding 1), the
float32 result in L0C ``[Cout/16, howo, 16]`` = ``[2, 64, 16]``, written to GM as
float16 with ReLU by ``fixpipe``, on Ascend910B1 (a chip with the FIXPIPE unit).
``conv_relu(step)`` builds the kernel after ``step`` steps; every step runs, and its
outputs must equal step 0's bit for bit (and the numpy reference):

0. the TIK kernel as written;
1. ``conv2d`` becomes the three PTO ops it lowers to (``tik-migrate`` shows them):
   ``pto.img2col`` (the im2col matrix of the feature map, ``howo x K`` with
   ``K = C1*Kh*Kw*C0 = 288``, into L0A), ``pto.mte_l1_l0b`` (the weights
   ``[K/16, Cout, 16]`` as ``K/16 x Cout/16`` fractals into L0B) and ``pto.mad``
   (``howo x Cout x K``) -- the L0A/L0B tiles are now declared TIK tensors;
2. ``fixpipe`` becomes one ``pto.mte_l0c_gm`` (FIXPIPE): ``m = howo``, ``n = 16*cburst_num``,
   source row stride ``round16(howo)`` L0C rows, destination stride ``howo*16`` elements,
   ``fp322fp16`` -> ``pre_quant(mode = f32_f16)``, ``relu`` -> ``pre_relu(mode = normal_relu)``;
3. the two ``data_move`` GM -> L1 become ``pto.mte_gm_l1`` (bytes instead of 32-byte
   blocks): no TIK data or compute call is left.

    tik-run examples/migrate_conv2d_fixpipe.py
    tik-migrate examples/migrate_conv2d_fixpipe.py --kernel conv_relu_step0
"""
import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from pto_core import pto

FM = [2, 8, 8, 16]                       # C1, H, W, C0
KERNEL = [2, 3, 3, 32, 16]               # C1, Kh, Kw, Cout, C0
STRIDE, PAD, DILATION, PAD_VALUE = [1, 1], [1, 1, 1, 1], [1, 1], 0.0
C1, H, W, C0 = FM
KH, KW, COUT = KERNEL[1], KERNEL[2], KERNEL[3]
HO, WO = H, W                            # stride 1, padding 1, 3 x 3
HOWO = HO * WO                           # 64 output pixels: a whole number of 16-row fractals
K = C1 * KH * KW * C0                    # 288
FM_BYTES = C1 * H * W * C0 * 2           # 4096
W_BYTES = C1 * KH * KW * COUT * C0 * 2   # 18432
STEPS = 4


def conv_relu(step=0):
    """The kernel after ``step`` migration steps (BuildCCE name ``conv_relu_step<step>``)."""
    set_current_compile_soc_info("Ascend910B1")
    tik_instance = tik.Tik()
    fm_gm = tik_instance.Tensor("float16", FM, name="fm_gm", scope=tik.scope_gm)
    w_gm = tik_instance.Tensor("float16", KERNEL, name="w_gm", scope=tik.scope_gm)
    out = tik_instance.Tensor("float16", (COUT // 16, HOWO, 16), name="out", scope=tik.scope_gm)
    fm = tik_instance.Tensor("float16", FM, name="fm", scope=tik.scope_cbuf)
    weight = tik_instance.Tensor("float16", KERNEL, name="weight", scope=tik.scope_cbuf)
    acc = tik_instance.Tensor("float32", (COUT // 16, HOWO, 16), name="acc", scope=tik.scope_cbuf_out)
    if step < 3:
        tik_instance.data_move(fm, fm_gm, 0, 1, FM_BYTES // 32, 0, 0)
        tik_instance.data_move(weight, w_gm, 0, 1, W_BYTES // 32, 0, 0)
    else:
        pto.mte_gm_l1(fm_gm.pto_ptr(), fm.pto_ptr(), FM_BYTES, nburst=(1, FM_BYTES, FM_BYTES))
        pto.mte_gm_l1(w_gm.pto_ptr(), weight.pto_ptr(), W_BYTES, nburst=(1, W_BYTES, W_BYTES))
    if step < 1:
        tik_instance.conv2d(acc, fm, weight, FM, KERNEL, STRIDE, PAD, DILATION, PAD_VALUE)
    else:
        a_l0 = tik_instance.Tensor("float16", (HOWO, K), name="a_l0", scope=tik.scope_ca)
        b_l0 = tik_instance.Tensor("float16", (K, COUT), name="b_l0", scope=tik.scope_cb)
        # rows [0, 64), columns [0, 288) of the im2col matrix; 18 = K / C0 fractal columns
        pto.img2col(fm.pto_ptr(), a_l0.pto_ptr(), H, W, C1 * C0, 0, K, 0, HOWO, K // C0,
                    stride=tuple(STRIDE), filter=(KH, KW), dilation=tuple(DILATION), pad=tuple(PAD),
                    pad_value=(PAD_VALUE,))
        # full control: fractal block (0, 0), 2 x 18 fractals (Cout/16 x K/16), strides 2 and 2
        pto.mte_l1_l0b(weight.pto_ptr(), b_l0.pto_ptr(), 0, 0, COUT // 16, K // 16, COUT // 16, COUT // 16)
        pto.mad(a_l0.pto_ptr(), b_l0.pto_ptr(), acc.pto_ptr(), HOWO, COUT, K, disable_gemv=True)
    if step < 2:
        tik_instance.fixpipe(out, acc, COUT // 16, HOWO * 16 * 4 // 32, 0, 0, extend_params={
            "quantize_params": {"mode": "fp322fp16", "mode_param": None}, "relu": True})
    else:
        # m, n, src_stride (L0C rows), dst_stride (elements), sid, l2_cache_ctrl
        pto.mte_l0c_gm(acc.pto_ptr(), out.pto_ptr(), HOWO, COUT, HOWO, HOWO * 16, 0, 0,
                       pre_quant=(0.0, {"mode": "f32_f16"}), pre_relu={"mode": "normal_relu"})
    tik_instance.BuildCCE(kernel_name=f"conv_relu_step{step}", inputs=[fm_gm, w_gm], outputs=[out])
    return tik_instance


def reference(fm_gm, w_gm):
    """``max(f16(conv), 0)`` as ``[Cout/16, howo, 16]`` (the convolution in float64: exact here)."""
    x = fm_gm.transpose(0, 3, 1, 2).reshape(C1 * C0, H, W).astype(np.float64)
    wt = w_gm.transpose(3, 0, 4, 1, 2).reshape(COUT, C1 * C0, KH, KW).astype(np.float64)
    pl, pr, pt, pb = PAD
    xp = np.full((C1 * C0, H + pt + pb, W + pl + pr), PAD_VALUE)
    xp[:, pt:pt + H, pl:pl + W] = x
    conv = np.zeros((COUT, HO, WO))
    for i in range(KH):
        for j in range(KW):
            conv += np.einsum("chw,oc->ohw", xp[:, i:i + HO, j:j + WO], wt[:, :, i, j])
    y = np.maximum(conv.astype(np.float32).astype(np.float16), np.float16(0))
    return np.ascontiguousarray(y.reshape(COUT // 16, 16, HOWO).transpose(0, 2, 1))


def inputs(seed=3):
    """Multiples of 1/8: every float32 partial sum of the convolution is exact."""
    rng = np.random.default_rng(seed)
    return {"fm_gm": (rng.integers(-16, 17, FM) / 8).astype(np.float16),
            "w_gm": (rng.integers(-8, 9, KERNEL) / 8).astype(np.float16)}


if __name__ == "__main__":
    feed = inputs()
    outputs = [conv_relu(step).tikdb.start_debug(dict(feed), interactive=False)[0] for step in range(STEPS)]
    ok = np.array_equal(outputs[0], reference(**feed)) and outputs[0].any()
    for step, y in enumerate(outputs):
        same = y.tobytes() == outputs[0].tobytes()
        ok = ok and same
        print(f"conv_relu step {step}: {'identical to step 0' if same else 'DIFFERENT'}")
    print("migrate_conv2d_fixpipe:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
