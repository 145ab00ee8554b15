"""The judge protocol."""
