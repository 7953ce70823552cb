"""TIK scripts written to temporary files by the tik-compare-fixpipe tests."""
import textwrap

#: builds one f16 matmul + fixpipe(fp322fp16, relu) kernel and never runs it
BUILD_ONLY = textwrap.dedent('''
    from tbe import tik

    def build(chip_relu):
        ti = tik.Tik()
        a_gm = ti.Tensor("float16", (2, 16, 16), name="a_gm", scope=tik.scope_gm)
        b_gm = ti.Tensor("float16", (2, 32, 16), name="b_gm", scope=tik.scope_gm)
        out = ti.Tensor("float16", (2, 16, 16), name="out", scope=tik.scope_gm)
        a = ti.Tensor("float16", (2, 16, 16), name="a", scope=tik.scope_cbuf)
        b = ti.Tensor("float16", (2, 32, 16), name="b", scope=tik.scope_cbuf)
        c = ti.Tensor("float32", (2, 16, 16), name="c", scope=tik.scope_cbuf_out)
        ti.data_move(a, a_gm, 0, 1, 32, 0, 0)
        ti.data_move(b, b_gm, 0, 1, 64, 0, 0)
        ti.matmul(c, a, b, 16, 32, 32)
        ti.fixpipe(out, c, 2, 32, 0, 0, extend_params={
            "quantize_params": {"mode": "fp322fp16", "mode_param": None}, "relu": chip_relu})
        ti.BuildCCE(kernel_name="built_only", inputs=[a_gm, b_gm], outputs=[out])

    build(True)
    print("built")
''')
