#!/usr/bin/env bash
# Refresh the vendored dagre from the npm registry: bash update.sh 3.1.3
set -euo pipefail
version="${1:?usage: update.sh VERSION}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack "@dagrejs/dagre@$version" >/dev/null && tar xzf ./*.tgz)
cp "$work/package/dist/dagre.min.js" "$work/package/LICENSE" "$here/"
echo "integrity: $(npm view "@dagrejs/dagre@$version" dist.integrity)"
echo "sha256(dagre.min.js): $(sha256sum "$here/dagre.min.js" | cut -d' ' -f1)"
