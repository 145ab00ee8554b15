"""Pure numpy metrics."""
