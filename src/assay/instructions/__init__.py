"""Deterministic checks of verifiable instructions."""
