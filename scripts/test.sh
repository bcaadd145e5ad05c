#!/usr/bin/env bash
# The full test suite, from a fresh machine: installs what the tests need
# (Node.js and the npm package warcio for independent WARC validation,
# Chromium for the dashboard's browser test, nginx for the conditional GET
# test against a real server, the Go modules), then runs go
# vet and every test with the race detector. The browser test's screenshot
# goes to $TRAWL_ARTIFACTS (default: test-artifacts/, not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "== installing nodejs and npm (apt-get)"
	sudo_cmd=""
	[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
	$sudo_cmd apt-get update -qq
	$sudo_cmd apt-get install -y -qq nodejs npm
fi
if ! command -v chromium >/dev/null 2>&1; then
	echo "== installing chromium (apt-get), for the dashboard's browser test"
	sudo_cmd=""
	[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
	$sudo_cmd apt-get update -qq
	$sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
	echo "== installing nginx (apt-get), for the conditional GET test against a real server"
	sudo_cmd=""
	[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
	$sudo_cmd apt-get update -qq
	$sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx
fi
echo "== npm ci tools/warcvalidate (warcio)"
npm ci --prefix tools/warcvalidate --no-audit --no-fund --loglevel=error

echo "== go mod download"
go mod download

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -timeout 25m "$@" ./...
