"""Assembling one self-contained HTML file: no network, no external files, nothing executable
in the data.

Three rules keep untrusted text (model outputs, dataset text) inert:

1. Data travels as JSON inside ``<script type="application/json">`` blocks, which browsers never
   execute, with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped so that no string can close the
   block or start a comment.
2. The page script puts every string into the page with ``textContent``, never as markup.
3. A Content-Security-Policy allows only this page's own script and style (by hash), images from
   ``data:`` URLs, and nothing else: no network, no injected script even if rule 2 were broken.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..json_safe import displayable
from ._html_script import SCRIPT
from ._html_style import STYLE

_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def finite_json(value: Any) -> Any:
    """``value`` with NaN and infinities as strings, since JSON (and JSON.parse) has no such
    numbers but Python's ``json`` writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """Compact JSON that ``JSON.parse`` accepts (non-finite numbers become strings)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or an infinity somewhere: rare, so converted only then
        return json.dumps(finite_json(value), ensure_ascii=False, separators=(",", ":"))


def embed_json(value: Any) -> str:
    """JSON text that is safe inside a ``<script type="application/json">`` element."""
    return to_json(value).translate(_JSON_ESCAPES)


def gzip_base64(value: Any) -> str:
    """``value`` as JSON, gzip-compressed and base64-encoded (decoded lazily by the page)."""
    # a lone surrogate a model answered with: UTF-8 cannot hold it, a browser could not show it
    raw = displayable(to_json(value)).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode()


def png_data_uri(path: Path) -> str | None:
    """A ``data:`` URL for a PNG file, or None when the file is not a PNG."""
    data = path.read_bytes()
    if not data.startswith(_PNG_MAGIC):
        return None
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class DataBlock:
    """One JSON block of the page: the main payload or a lazily read chunk of details."""

    block_id: str
    text: str  # already safe: from embed_json, or base64 (which has no markup characters)


def _sha256_source(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy() -> str:
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {_sha256_source(SCRIPT)}",
            f"style-src {_sha256_source(STYLE)}",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def render_page(title: str, blocks: Sequence[DataBlock]) -> str:
    """The whole HTML document. ``blocks[0]`` must be the main payload (id ``assay-data``)."""
    if "</script" in SCRIPT.lower() or "</style" in STYLE.lower():
        raise AssertionError("the page script or style contains a closing tag")
    data = "\n".join(
        f'<script type="application/json" id="{html.escape(b.block_id)}">{b.text}</script>'
        for b in blocks
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{STYLE}</style>\n"
        "</head>\n<body>\n"
        "<noscript>This report is drawn by JavaScript; the data is in the JSON blocks of "
        "this file.</noscript>\n"
        '<div id="app"><p class="loading">Loading report…</p></div>\n'
        f"{data}\n"
        f"<script>{SCRIPT}</script>\n"
        "</body>\n</html>\n"
    )
