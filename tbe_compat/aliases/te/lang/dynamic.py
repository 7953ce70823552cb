"""``te.lang.dynamic`` (alias onto `tbe_compat`): imported for its side effects by CANN's 2020
dynamic-shape TIK operators (``import te.lang.dynamic`` next to ``@te.op.register_operator``); a TIK
kernel uses nothing from it, so it is empty."""
