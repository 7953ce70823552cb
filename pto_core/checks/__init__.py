"""Checkers: the pipe hazard verifier (``hazards``) and other protocol lints.

All are on by default and switched in `pto_core.memory.MachineOptions`.
"""
