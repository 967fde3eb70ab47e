"""The engine: one scheduler for both front doors, dispatch, packing, commit, cancel.

Nothing here knows which front door a step came through (design note 0008).
"""
