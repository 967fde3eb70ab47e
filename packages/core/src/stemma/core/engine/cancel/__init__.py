"""Cancellation: three presses of escalating force, signal presses, and fail-fast's stop."""
