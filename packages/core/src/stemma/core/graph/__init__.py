"""The lazy model: handles, their specs and keys, and what lowering and explaining need (pure)."""
