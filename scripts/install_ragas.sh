#!/bin/sh
# Installs the ragas the ragas tests run, once, outside the repository: a virtual environment
# ${XDG_CACHE_HOME:-~/.cache}/assay-test-tools/ragas-VERSION with ragas and assay's own
# dependencies (not assay itself: a test runs it with PYTHONPATH=<checkout>/src, so one install
# serves every checkout), then prints the path of its python. A rerun finds it and installs
# nothing.
#   - ragas has its own environment because it cannot share assay's dev one: ragas 0.3 and
#     later need instructor, whose releases want openai<3 (and jiter<0.15), while the dev
#     tools pin openai 3.x and the embedded model's llm plugin needs openai>3;
#   - the version is pinned: the tests and docs/importers.md were checked against it;
#   - langchain-community is kept below 0.4, which dropped the chat_models.vertexai module that
#     ragas 0.4.3 imports on `import ragas`.
set -eu
VERSION=0.4.3
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/assay-test-tools/ragas-$VERSION"
python="$dir/bin/python"
if [ ! -x "$python" ] || [ ! -f "$dir/installed" ]; then
    # assay's runtime dependencies, read from pyproject.toml so they never drift from it
    deps="$(python3 -c 'import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' \
        "$here/pyproject.toml")"
    # built beside the final directory and moved into place: an interrupted install leaves no
    # half-installed environment under the name a rerun trusts (a venv's scripts name their
    # own directory, so it is made under the final name with a marker written last)
    rm -rf "$dir"
    python3 -m venv "$dir"
    echo "$deps" > "$dir/assay-requirements.txt"
    if ! "$python" -m pip install -q "ragas==$VERSION" "langchain-community<0.4" pandas -r "$dir/assay-requirements.txt" \
            >"$dir/install.log" 2>&1; then
        echo "pip install ragas==$VERSION failed; its log: $dir/install.log" >&2
        exit 1
    fi
    touch "$dir/installed"
fi
echo "$python"
