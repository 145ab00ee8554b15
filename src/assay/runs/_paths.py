"""File names made from ids that come from user data."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..errors import RunError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_filename(identifier: str, *, max_length: int = 80) -> str:
    """A file name that cannot leave its directory, stays readable, and stays unique.

    Anything but letters, digits, dot, dash and underscore becomes ``_``; leading dots go; when
    the id had to change, a short hash of the original keeps two different ids apart.
    """
    cleaned = _UNSAFE.sub("_", identifier).lstrip(".") or "_"
    if cleaned == identifier and len(cleaned) <= max_length:
        return cleaned
    digest = hashlib.sha256(identifier.encode("utf-8")).hexdigest()[:10]
    return f"{cleaned[: max_length - 11]}-{digest}"


def inside(root: Path, *parts: str) -> Path:
    """``root / parts`` with every part sanitised, refusing anything that escapes ``root``."""
    path = root.joinpath(*(safe_filename(p) for p in parts))
    resolved_root = root.resolve()
    if not path.resolve().is_relative_to(resolved_root):
        raise RunError(f"refusing to write outside the run directory: {path}")
    return path
