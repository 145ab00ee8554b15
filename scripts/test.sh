#!/bin/sh
# Installs everything the test suite needs on a fresh machine, then runs the whole suite.
#   - Debian's chromium + chromium-driver for the browser tests (skipped when present);
#   - a virtual environment .venv with assay, the embedded model and the dev tools;
#   - where node and npm are installed, the pinned promptfoo CLI for the promptfoo tests, once,
#     into ~/.cache/assay-test-tools (scripts/install_promptfoo.sh; without node they skip).
#   - the pinned ragas for the ragas tests, once, in an environment of its own under
#     ~/.cache/assay-test-tools (scripts/install_ragas.sh: ragas cannot share .venv).
#   - then the suite in two parts: the tests that can share the machine, on two pytest-xdist
#     workers (ASSAY_TEST_WORKERS sets how many; each test file runs whole on one worker, see
#     tests/conftest.py), then the tests marked serial, alone. It fails if either part failed.
# Extra arguments go to pytest, in both parts.
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
# pytest's exit status 5 is "no test selected": a part the arguments chose no test from
status=0 empty=0
part() {
    "$@" && return 0
    rc=$?
    if [ "$rc" -eq 5 ]; then empty=$((empty + 1)); else status=$rc; fi
}
part .venv/bin/python -m pytest -n "${ASSAY_TEST_WORKERS:-2}" --dist loadgroup -m "not serial" "$@"
part .venv/bin/python -m pytest -m serial "$@"
[ "$empty" -eq 2 ] && [ "$status" -eq 0 ] && status=5
exit "$status"
