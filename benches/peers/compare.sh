#!/usr/bin/env bash
# Peers comparison: connector vs mobile-mcp (default and legacy adb mode) vs raw adb CLI vs raw
# adb socket, one simulated phone behind one private Google adb 34 server, interleaved.
# Outside cargo test and CI. Usage: bash benches/peers/compare.sh [--realistic usb2|usb3|wifi]
# [--calls N] [--touchscreen NAME]. Needs node >= 20, npm, and the test deps (bash .ci/install-test-deps).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [ ! -d "$here/node_modules/@mobilenext/mobile-mcp" ]; then
  (cd "$here" && npm install --no-audit --no-fund)
fi
echo "mobile-mcp $(node -p "require('$here/node_modules/@mobilenext/mobile-mcp/package.json').version")"
cd "$root"
exec cargo bench --bench peers -- "$@"
