"""The TIK kernels of ``benchmarks/run_all.py``: one module per kernel, each with

* ``build(...)`` -> a built ``tik.Tik`` instance (a real TIK script: ``tik.Tik()`` ... ``BuildCCE``),
* ``inputs(...)`` -> the ``start_debug`` feed dict,
* ``baseline(feed)`` -> a zero-argument callable: the best plain-numpy (or plain-Python) code
  for the same math on the same data (what it is: the module docstring),
* ``check(outputs, feed)`` -> raises ``AssertionError`` if the kernel's outputs are wrong.

The modules import ``tbe.tik``; run them with the legacy names installed
(``tbe_compat.aliases.install()``, as ``run_all.py`` does).
"""
