#!/usr/bin/env bash
# Runs every `go test -fuzz` target of the module, one after another, for
# FUZZTIME each (default 5s: CI's brief pass, after the test suite). A long
# run: FUZZTIME=10m scripts/fuzz.sh [REGEXP], REGEXP selecting targets by
# package path or name. A failing input is written under the package's
# testdata/fuzz/TARGET/ by go test and fails the script: commit it, and
# it runs as a regression case with every `go test` from then on.
# FUZZPARALLEL=N runs N fuzzing workers (default: one per CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
# Go 1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" when -fuzztime ends while a worker is mid-input on a
# loaded machine: no input is at fault and none is written
# (go.dev/issue/75804; CI met it on links.FuzzExtract). The fix shipped in
# Go 1.27, so the fuzzing alone runs on that toolchain, fetched from the
# module proxy on first use (76 MB, seconds); the module and its tests stay
# on the machine's Go. FUZZ_GOTOOLCHAIN=local keeps the machine's Go.
export GOTOOLCHAIN="${FUZZ_GOTOOLCHAIN:-go1.27.3}"
fuzztime="${FUZZTIME:-5s}"
select="${1:-.}"

targets=$(grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
	pkg="./$(dirname "${f#./}")"
	grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed "s|^func |$pkg |"
done | grep -E -- "$select" || true)
if [ -z "$targets" ]; then
	echo "fuzz.sh: no target matches $select" >&2
	exit 2
fi
echo "fuzz.sh: $(go version), $fuzztime per target"
n=0
while read -r pkg name; do
	out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" ${FUZZPARALLEL:+-parallel "$FUZZPARALLEL"} "$pkg" 2>&1) || {
		echo "$out"
		echo "fuzz.sh: $pkg $name FAILED" >&2
		exit 1
	}
	execs=$(echo "$out" | grep -o 'execs: [0-9]*' | tail -1 | cut -d' ' -f2 || true)
	printf '%-28s %-22s %10s execs in %s\n' "$pkg" "$name" "${execs:-?}" "$fuzztime"
	n=$((n + 1))
done <<<"$targets"
echo "fuzz.sh: $n targets clean"
