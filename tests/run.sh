#!/usr/bin/env bash
# The whole test suite with what it needs beyond pip: a headless browser and a font for the HTML
# report's tests (Debian's chromium and fonts-dejavu-core), installed here when missing and
# apt-get can (as root, or with passwordless sudo); nothing is installed when they are there.
# (onnxruntime's C API headers are the build's business: `pip install` fetched them.)
# Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        apt=(apt-get)
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        apt=(sudo -n apt-get)
    else
        echo "tests/run.sh: the HTML report's tests need ${need[*]}: run as root, or apt-get install ${need[*]}" >&2
        exit 1
    fi
    echo "tests/run.sh: installing ${need[*]} (apt-get) for the HTML report's tests" >&2
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq "${need[@]}" >/dev/null
fi
exec python -m pytest -q "$@"
