"""Commit: a step's staged results made visible as one wave, its events written, its result."""
