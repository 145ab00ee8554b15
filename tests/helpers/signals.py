"""Children that take Ctrl-C the way a terminal delivers it."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` for a child the test interrupts: SIGINT back at its default.

    A test process started in the background of a non-interactive shell (``cmd &``, as CI
    runners and ``nohup`` scripts do) inherits SIGINT ignored, and every child it starts would
    inherit that too and never see the test's SIGINT. A user's Ctrl-C reaches a foreground run
    with SIGINT at its default, which is what these tests are about.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
