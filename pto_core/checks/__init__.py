"""Checkers: the pipe hazard verifier, the sync-protocol checks and the cross-core GM race checker.

* ``flags``: the set/wait flag table of a core (one bit per src/dst/event; double
  set, deadlocked wait, flags left at kernel end). Always on.
* ``hazards``: `HazardTracker`, the RAW/WAW/WAR verifier over pipes (on unless
  ``MachineOptions(check_hazards=False)``), built from
* ``vector_clock``: per-pipe epochs and happens-before knowledge, and
* ``shadow``: per-buffer, per-32-byte-block last writer / latest readers;
* ``races``: `GmRaceTracker`, the cross-core GM race checker (accesses of different cores to
  the same GM bytes with no ``pto.sync_all`` between them; ``MachineOptions.gm_races``).

Semantics and sources: migration_guide/pto_sync.md.
"""
