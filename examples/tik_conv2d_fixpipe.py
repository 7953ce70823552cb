"""A TIK kernel: 3 x 3 convolution (``tik.conv2d``) and two ``tik.fixpipe`` write-backs.

Feature map ``[C1, H, W, C0]`` = ``[4, 14, 14, 16]`` (64 channels) and weights
``[C1, Kh, Kw, Cout, C0]`` = ``[4, 3, 3, 64, 16]`` in float16, stride 1, padding 1 (pad
value 0.25), dilation 1: ``Ho = Wo = 14``, ``howo = 196`` output pixels, the float32 result
in L0C as ``[Cout/16, round_howo, 16]`` = ``[4, 208, 16]``. Then

* ``fixpipe(out, ..., {"bias": bias, "quantize_params": fp322fp16})``: ``f16(conv + bias[cout])``,
  the bias added in float32 before the conversion (the legacy order);
* ``fixpipe(out_relu, ..., {"quantize_params": fp322fp16, "relu": True})``: ``max(f16(conv), 0)``.

``burst_len = howo * 16 * 4 / 32`` (rows of the float32 source in 32-byte units) drops the
12 padding rows of each channel block: the outputs are ``[4, 196, 16]``.

The numpy reference convolves in float64, then applies the hardware's roundings (the bias
sum rounded to float32, the result to float16). The data are multiples of 1/8, so the
convolution itself is exact in float32 and the comparison is bit for bit. Run it with

    tik-run examples/tik_conv2d_fixpipe.py        (or: python examples/tik_conv2d_fixpipe.py)
"""
import numpy as np
from tbe import tik

FM = [4, 14, 14, 16]
KERNEL = [4, 3, 3, 64, 16]
STRIDE, PAD, DILATION, PAD_VALUE = [1, 1], [1, 1, 1, 1], [1, 1], 0.25


def conv2d_fixpipe():
    tik_instance = tik.Tik()
    c1, h, w, c0 = FM
    _, kh, kw, cout, _ = KERNEL
    ho = (h + PAD[2] + PAD[3] - DILATION[0] * (kh - 1) - 1) // STRIDE[0] + 1
    wo = (w + PAD[0] + PAD[1] - DILATION[1] * (kw - 1) - 1) // STRIDE[1] + 1
    howo = ho * wo
    round_howo = -(-howo // 16) * 16
    fm_gm = tik_instance.Tensor("float16", FM, name="fm_gm", scope=tik.scope_gm)
    w_gm = tik_instance.Tensor("float16", KERNEL, name="w_gm", scope=tik.scope_gm)
    bias_gm = tik_instance.Tensor("float32", (cout,), name="bias_gm", scope=tik.scope_gm)
    out = tik_instance.Tensor("float16", (cout // 16, howo, 16), name="out", scope=tik.scope_gm)
    out_relu = tik_instance.Tensor("float16", (cout // 16, howo, 16), name="out_relu", scope=tik.scope_gm)
    fm = tik_instance.Tensor("float16", FM, name="fm", scope=tik.scope_cbuf)
    weight = tik_instance.Tensor("float16", KERNEL, name="weight", scope=tik.scope_cbuf)
    bias = tik_instance.Tensor("float32", (cout,), name="bias", scope=tik.scope_cbuf)
    dst = tik_instance.Tensor("float32", (cout // 16, round_howo, 16), name="dst", scope=tik.scope_cbuf_out)
    tik_instance.data_move(fm, fm_gm, 0, 1, c1 * h * w * c0 * 2 // 32, 0, 0)
    tik_instance.data_move(weight, w_gm, 0, 1, c1 * kh * kw * cout * c0 * 2 // 32, 0, 0)
    tik_instance.data_move(bias, bias_gm, 0, 1, cout * 4 // 32, 0, 0)
    tik_instance.conv2d(dst, fm, weight, FM, KERNEL, STRIDE, PAD, DILATION, PAD_VALUE)
    burst_len = howo * 16 * 4 // 32
    tik_instance.fixpipe(out, dst, cout // 16, burst_len, 0, 0, extend_params={
        "bias": bias, "quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    tik_instance.fixpipe(out_relu, dst, cout // 16, burst_len, 0, 0, extend_params={
        "quantize_params": {"mode": "fp322fp16", "mode_param": None}, "relu": True})
    tik_instance.BuildCCE(kernel_name="conv2d_fixpipe", inputs=[fm_gm, w_gm, bias_gm], outputs=[out, out_relu])
    return tik_instance


def reference(fm_gm, w_gm, bias_gm):
    """(f16(f32(conv + bias)), max(f16(conv), 0)) as ``[Cout/16, howo, 16]`` (parameters named like the
    kernel inputs: the pytest plugin passes them by name)."""
    fm, weight, bias = fm_gm, w_gm, bias_gm
    c1, h, w, c0 = fm.shape
    _, kh, kw, cout, _ = weight.shape
    x = fm.transpose(0, 3, 1, 2).reshape(c1 * c0, h, w).astype(np.float64)
    wt = weight.transpose(3, 0, 4, 1, 2).reshape(cout, c1 * c0, kh, kw).astype(np.float64)
    pl, pr, pt, pb = PAD
    xp = np.full((c1 * c0, h + pt + pb, w + pl + pr), np.float64(np.float16(PAD_VALUE)))
    xp[:, pt:pt + h, pl:pl + w] = x
    ho, wo = h + pt + pb - kh + 1, w + pl + pr - kw + 1
    conv = np.zeros((cout, ho, wo))
    for i in range(kh):
        for j in range(kw):
            conv += np.einsum("chw,oc->ohw", xp[:, i:i + ho, j:j + wo], wt[:, :, i, j])
    conv32 = conv.astype(np.float32)                                   # exact for this data
    with_bias = (conv32 + bias[:, None, None]).astype(np.float16)      # f32 add, then RNE to f16
    relu = np.maximum(conv32.astype(np.float16), np.float16(0))

    def blocks(y):
        return np.ascontiguousarray(y.reshape(cout // 16, 16, ho * wo).transpose(0, 2, 1))
    return blocks(with_bias), blocks(relu)


def inputs(seed=2):
    rng = np.random.default_rng(seed)
    fm = (rng.integers(-16, 17, FM) / 8).astype(np.float16)
    weight = (rng.integers(-8, 9, KERNEL) / 8).astype(np.float16)
    bias = rng.standard_normal(KERNEL[3]).astype(np.float32)
    return fm, weight, bias


if __name__ == "__main__":
    fm, weight, bias = inputs()
    tik_instance = conv2d_fixpipe()
    got, got_relu = tik_instance.tikdb.start_debug(feed_dict={"fm_gm": fm, "w_gm": weight, "bias_gm": bias},
                                                   interactive=False)
    want, want_relu = reference(fm, weight, bias)
    ok = np.array_equal(got, want) and np.array_equal(got_relu, want_relu) and not tik_instance.tikdb.reports
    print("conv2d_fixpipe:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
