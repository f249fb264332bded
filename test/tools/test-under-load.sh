#!/usr/bin/env bash
# `npm run test:under-load`: `npm test` three times in a row while two busy processes hold both
# cores (issue 38: no test may depend on the machine's speed). Prints each run's result and time;
# exits 1 when any run failed. `RUNS=<n>` and `BUSY=<n>` change the counts.
set -uo pipefail
cd "$(dirname "$0")/../.."
runs="${RUNS:-3}"
busy="${BUSY:-2}"

node24="$(test/tools/with-node24)/bin/node"
busy_pids=()
stop_busy() { [ "${#busy_pids[@]}" -eq 0 ] || kill "${busy_pids[@]}" 2>/dev/null; }
trap stop_busy EXIT
for _ in $(seq "$busy"); do
	"$node24" -e 'for (;;) {}' &
	busy_pids+=("$!")
done
echo "test-under-load: $busy busy processes (${busy_pids[*]}) hold the cores; npm test $runs times"

failed=0
for run in $(seq "$runs"); do
	started=$SECONDS
	if npm test >"${TMPDIR:-/tmp}/test-under-load.$run.log" 2>&1; then result=passed; else result=FAILED; failed=1; fi
	summary="$(grep -E '^Tests: ' "${TMPDIR:-/tmp}/test-under-load.$run.log" | tail -1)"
	echo "run $run: $result in $((SECONDS - started)) s ($summary; log ${TMPDIR:-/tmp}/test-under-load.$run.log)"
	uptime
done
exit "$failed"
