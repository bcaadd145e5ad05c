#!/usr/bin/env bash
# A guard against large CPU regressions, not a timing test: runs the default
# `trawl bench crawl` once and fails only if its CPU-ms per page is over twice
# the figure recorded in docs/bench/crawl-baseline.json (these machines vary
# by a third from run to run). Refresh the baseline with
#   go build -o /tmp/trawl ./cmd/trawl && /tmp/trawl bench crawl --json > docs/bench/crawl-baseline.json
# when a change moves the figure on purpose, and say so in docs/design/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
bin="$(mktemp -d)/trawl"
go build -o "$bin" ./cmd/trawl
echo "== bench crawl guard"
"$bin" bench crawl --baseline docs/bench/crawl-baseline.json
