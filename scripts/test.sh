#!/bin/sh
# Installs everything the test suite needs on a fresh machine, then runs the whole suite.
#   - Debian's chromium + chromium-driver for the browser tests (skipped when present);
#   - a virtual environment .venv with assay, the embedded model and the dev tools;
#   - where node and npm are installed, the pinned promptfoo CLI for the promptfoo tests, once,
#     into ~/.cache/assay-test-tools (scripts/install_promptfoo.sh; without node they skip).
#   - the pinned ragas for the ragas tests, once, in an environment of its own under
#     ~/.cache/assay-test-tools (scripts/install_ragas.sh: ragas cannot share .venv).
# Extra arguments go to pytest.
set -eu
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[local,dev]'
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    sh scripts/install_promptfoo.sh >/dev/null
fi
# a failed install does not stop the suite: the ragas tests then fail, naming why
sh scripts/install_ragas.sh >/dev/null || echo "warning: the ragas environment could not be installed" >&2
exec .venv/bin/python -m pytest "$@"
