"""stemma.core."""
