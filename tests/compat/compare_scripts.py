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

#: builds two such kernels, ``k_one`` (inputs x_a, x_b) and ``k_two`` (y_a, y_b), never runs them, and raises
#: ValueError after building when run with the argument ``fail``
TWO_KERNELS = textwrap.dedent('''
    import sys
    from tbe import tik

    def build(name, pre):
        ti = tik.Tik()
        a_gm = ti.Tensor("float16", (2, 16, 16), name=pre + "a", scope=tik.scope_gm)
        b_gm = ti.Tensor("float16", (2, 32, 16), name=pre + "b", scope=tik.scope_gm)
        out = ti.Tensor("float16", (2, 16, 16), name="out", scope=tik.scope_gm)
        a = ti.Tensor("float16", (2, 16, 16), name="a", scope=tik.scope_cbuf)
        b = ti.Tensor("float16", (2, 32, 16), name="b", scope=tik.scope_cbuf)
        c = ti.Tensor("float32", (2, 16, 16), name="c", scope=tik.scope_cbuf_out)
        ti.data_move(a, a_gm, 0, 1, 32, 0, 0)
        ti.data_move(b, b_gm, 0, 1, 64, 0, 0)
        ti.matmul(c, a, b, 16, 32, 32)
        ti.fixpipe(out, c, 2, 32, 0, 0, extend_params={
            "quantize_params": {"mode": "fp322fp16", "mode_param": None}, "relu": True})
        ti.BuildCCE(kernel_name=name, inputs=[a_gm, b_gm], outputs=[out])

    build("k_one", "x_")
    build("k_two", "y_")
    if "fail" in sys.argv:
        raise ValueError("boom")
''')
