"""Claim checkers: one module each (model-free baseline, model-based)."""
