#!/bin/sh
# The live-view page in headless Chromium against a real `shutter run` (Tests/Browser/test-browser.py).
# Builds nothing: SHUTTER (default .build/debug/shutter) must be built. Without chromium,
# chromium-driver or python3-selenium it skips (exit 0) on a workstation, and fails under CI.
set -eu
cd "$(dirname "$0")/../.."
SHUTTER="${SHUTTER:-.build/debug/shutter}"
export SHUTTER

missing=""
[ -x /usr/bin/chromium ] || missing="$missing chromium"
[ -x /usr/bin/chromedriver ] || missing="$missing chromium-driver"
# Debian's python3 (python3 on PATH may be another one, without Debian's selenium).
if [ ! -x /usr/bin/python3 ] || ! /usr/bin/python3 -c 'import selenium' 2>/dev/null; then
    missing="$missing python3-selenium"
fi
if [ -n "$missing" ]; then
    if [ -z "${CI:-}" ]; then
        echo "browser: skipped, not installed:$missing (sudo apt-get install -y chromium chromium-driver python3-selenium)"
        exit 0
    fi
    echo "browser: not installed under CI:$missing" >&2
    exit 1
fi
if [ ! -x "$SHUTTER" ]; then
    echo "browser: $SHUTTER is not built (swift build --product shutter)" >&2
    exit 1
fi
exec /usr/bin/python3 Tests/Browser/test-browser.py "$@"
