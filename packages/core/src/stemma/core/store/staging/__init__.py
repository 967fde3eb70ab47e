"""Staging: how a unit's result waits, whole or not at all, until a commit makes it visible."""
