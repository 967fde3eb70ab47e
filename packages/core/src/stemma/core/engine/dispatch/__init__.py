"""Dispatch: a step's units planned, packed, sent to the backend, and their outcomes taken back."""
