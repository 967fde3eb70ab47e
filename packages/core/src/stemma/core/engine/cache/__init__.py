"""The engine's caches: step keys (pure), step-level hits and leases, function steps found built."""
