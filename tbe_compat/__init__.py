"""tbe_compat: the TIK facade. It traces TIK calls into PTO ops (with the user's
file:line as provenance) and never computes results itself; `pto_core` does.
"""
__version__ = "0.1.0"
