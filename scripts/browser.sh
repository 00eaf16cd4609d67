#!/usr/bin/env bash
# A real browser for the tests that render HTML (the simulation report's test opens it in
# headless Chromium and checks every plot):
#
#   browser.sh install    install Debian's chromium when no Chromium is on PATH (idempotent;
#                         needs root to install)
#   browser.sh path       print the browser's path (exit 1 when there is none)
#
# make test runs "install" before the Go tests and sets SLUICE_REQUIRE_BROWSER=1, so a test
# that needs the browser fails instead of skipping when it is missing.
set -euo pipefail

log() { echo "browser: $*" >&2; }

find_browser() {
	local name
	for name in "${SLUICE_BROWSER:-}" chromium chromium-browser google-chrome; do
		[[ -n $name ]] || continue
		if command -v "$name" >/dev/null 2>&1; then
			command -v "$name"
			return 0
		fi
	done
	return 1
}

cmd_install() {
	if path=$(find_browser); then
		log "found $path ($("$path" --version 2>/dev/null || echo 'version unknown'))"
		return
	fi
	[[ $(id -u) == 0 ]] || { log "error: installing chromium needs root"; exit 1; }
	log "installing chromium from Debian's packages"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends chromium; then
		apt-get update
		apt-get install -y --no-install-recommends chromium
	fi
	path=$(find_browser) || { log "error: chromium is not on PATH after installing it"; exit 1; }
	log "installed $path ($("$path" --version 2>/dev/null || echo 'version unknown'))"
}

case "${1:-}" in
install) cmd_install ;;
path) find_browser ;;
*)
	echo "usage: $0 install|path" >&2
	exit 2
	;;
esac
