#!/usr/bin/env bash
# board_browser.sh: build the board from the fixtures and drive it in headless
# Chromium (Debian's package) through Playwright (PyPI), pointed at
# /usr/bin/chromium (no `playwright install`). Sorting, aria-sort, escaping,
# a model page; saves $BUILD/board.png. SKIPs only if Chromium cannot be
# installed.
set -u
BUILD=${BUILD:-build}
KA=${KA:-$PWD/$BUILD/ka}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ ! -x /usr/bin/chromium ]; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >"$out/apt.log" 2>&1 ||
			{ apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >"$out/apt.log" 2>&1; }
	else
		sudo -n apt-get install -y chromium >"$out/apt.log" 2>&1
	fi
fi
if [ ! -x /usr/bin/chromium ]; then
	echo "SKIP board_browser: Debian's chromium package could not be installed (see apt-get install chromium)"
	exit 0
fi
if ! python3 -c 'import playwright' 2>/dev/null; then
	python3 -m pip install --quiet playwright >"$out/pip.log" 2>&1 ||
		python3 -m pip install --quiet --break-system-packages playwright >"$out/pip.log" 2>&1
fi
if ! python3 -c 'import playwright' 2>/dev/null; then
	echo "FAIL board_browser: python3 -m pip install playwright failed: $(tail -n 1 "$out/pip.log")"
	exit 1
fi

"$KA" board tests/data/scorecards/good -o "$out/site" >"$out/board.log" 2>&1 || {
	echo "FAIL board_browser: ka board failed: $(cat "$out/board.log")"; exit 1; }
python3 tests/e2e/browser_test.py "$out/site" "$BUILD/board.png"
