#!/usr/bin/env bash
# The full test suite, from a fresh machine: installs what the tests need
# (Node.js and the npm package warcio for independent WARC validation,
# the npm package replaywebpage to replay a WACZ, Chromium for the
# dashboard's browser test and the replay test, nginx for the conditional
# GET test against a real server, three Debian-packaged documentation
# trees for the near-duplicate test on real sites, the Go modules), then
# runs go vet and every test with the race detector. The browser tests'
# screenshots go to $TRAWL_ARTIFACTS (default: test-artifacts/, not
# committed).
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
# Real documentation trees (Sphinx, Javadoc, Doxygen) that
# node/neardocs_test.go serves with nginx and crawls. Without recommends:
# junit4-doc recommends the JDK's documentation, which the test does not
# need.
doc_pkgs=""
[ -f /usr/share/doc/python3.11/html/index.html ] || doc_pkgs="$doc_pkgs python3.11-doc"
[ -f /usr/share/doc/junit4/api/index.html ] || doc_pkgs="$doc_pkgs junit4-doc"
[ -f /usr/share/doc/libjsoncpp-doc/index.html ] || doc_pkgs="$doc_pkgs libjsoncpp-doc"
[ -f /usr/share/doc/libbox2d-dev/html/index.html ] || doc_pkgs="$doc_pkgs libbox2d-doc"
if [ -n "$doc_pkgs" ]; then
	echo "== installing$doc_pkgs (apt-get), for the near-duplicate test on real documentation"
	sudo_cmd=""
	[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
	$sudo_cmd apt-get update -qq
	# shellcheck disable=SC2086 # the list is split on purpose
	$sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $doc_pkgs
fi
echo "== npm ci tools/warcvalidate (warcio)"
npm ci --prefix tools/warcvalidate --no-audit --no-fund --loglevel=error
echo "== npm ci tools/replay (ReplayWeb.page, for the replay test)"
npm ci --prefix tools/replay --ignore-scripts --no-audit --no-fund --loglevel=error

echo "== go mod download"
go mod download

echo "== go vet"
# Every analyzer on every package. go test's own vet pass (a subset of
# these analyzers, on the race build) is turned off below: it would check
# every package a second time. The packages whose files differ under
# -race (a race_on_test.go) are vetted as built with -race too.
go vet ./...
mapfile -t race_pkgs < <(grep -rl --include='*.go' --exclude-dir=tools '^//go:build race' . | xargs -r -n1 dirname | sort -u)
if [ "${#race_pkgs[@]}" -gt 0 ]; then
	go vet -race "${race_pkgs[@]}"
fi

echo "== go test -race"
# The longest packages first: go test starts packages in the order named,
# two at a time on two cores, so the node's tests (the longest by far) run
# beside the rest instead of after them.
go test -race -vet=off -timeout 25m "$@" ./node ./e2e ./cluster/fleet ./internal/bench/fleetbench ./...
