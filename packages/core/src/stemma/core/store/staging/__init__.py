"""Staging: how a unit's result waits, whole or not at all, until a commit makes it visible.

The one staging protocol both stores use (docs/design/0019-one-staging-protocol.md): where a
bundle goes (:mod:`.tree`), how it is written (:mod:`.writing`), whether it is whole
(:mod:`.visibility`), the worker log noted beside it (:mod:`.worker_logs`), a dead worker's
pack found by content (:mod:`.pack_reading`), what recovery does with what a dead process left
(:mod:`.recovery`), retiring and quarantine (:mod:`.removal`), and what a commit reports
(:mod:`.problems`, :mod:`.notes`). A store supplies its :class:`~.bundle_format.BundleFormat`
(how rows are written as files) and its side of recovery (:class:`~.recovery.Recovering`).
"""
