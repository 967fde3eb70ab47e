"""stemma.storage."""
