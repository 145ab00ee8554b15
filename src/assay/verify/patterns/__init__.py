"""Verifier patterns: one module each, one shared interface."""
