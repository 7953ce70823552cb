"""Checkers: the pipe hazard verifier and the sync-protocol checks.

* ``flags``: the set/wait flag table of a core (one bit per src/dst/event; double
  set, deadlocked wait, flags left at kernel end). Always on.
* ``hazards``: `HazardTracker`, the RAW/WAW/WAR verifier over pipes (on unless
  ``MachineOptions(check_hazards=False)``), built from
* ``vector_clock``: per-pipe epochs and happens-before knowledge, and
* ``shadow``: per-buffer, per-32-byte-block last writer / latest readers.

Semantics and sources: migration_guide/pto_sync.md.
"""
