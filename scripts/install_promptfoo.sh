#!/bin/sh
# Installs the promptfoo CLI the promptfoo tests run, once, outside the repository:
# into ${XDG_CACHE_HOME:-~/.cache}/assay-test-tools/promptfoo-VERSION, then prints the path of
# its `promptfoo` command. A rerun finds it there and installs nothing.
#   - the version is pinned: 0.120.27 is the newest that runs on Node 20 (later ones need
#     Node 22; 0.120.0-0.120.2 cannot find their own database migrations);
#   - optional dependencies (Playwright, cloud SDKs) are left out: the tests use the echo and
#     OpenAI-compatible providers and Python assertions only.
# Needs node and npm; exits 3 without them (the tests then skip, naming what is missing).
set -eu
VERSION=0.120.27
for tool in node npm; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool is not installed" >&2; exit 3; }
done
dir="${XDG_CACHE_HOME:-$HOME/.cache}/assay-test-tools/promptfoo-$VERSION"
bin="$dir/node_modules/.bin/promptfoo"
if [ ! -x "$bin" ]; then
    # installed beside the final directory and moved into place: an interrupted install
    # leaves no half-installed promptfoo under the name a rerun trusts
    partial="$dir.partial.$$"
    rm -rf "$partial"
    mkdir -p "$partial"
    echo '{"private": true}' > "$partial/package.json"
    if ! (cd "$partial" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund \
            --omit=optional --loglevel=error "promptfoo@$VERSION" >install.log 2>&1); then
        echo "npm install promptfoo@$VERSION failed; its log: $partial/install.log" >&2
        exit 1
    fi
    rm -rf "$dir"
    mv "$partial" "$dir"
fi
echo "$bin"
