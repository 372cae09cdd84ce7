#!/bin/sh
# bench/fleet.sh [BENCHTIME]: River no-op jobs/s next to harness trivial
# 1-step jobs/s (the llmtest scripted model) on 1x1 and 3x4 workers x
# slots, in one run of BenchmarkFleetJobs (internal/cli/fleet_bench_test.go).
# Needs the local PostgreSQL of the tests (internal/pgtest) and bwrap.
set -eu
cd "$(dirname "$0")/.."
benchtime=${1:-40x}
go test -run '^$' -bench 'FleetJobs/(workers=1,concurrency=1|workers=3,concurrency=4)/' \
	-benchtime "$benchtime" ./internal/cli/ | tee /dev/stderr | awk '
/^BenchmarkFleetJobs\// {
	split($1, p, "/"); cfg = p[2]; kind = p[3]; sub(/-[0-9]+$/, "", kind)
	for (i = 2; i < NF; i++) if ($(i+1) == "jobs/s") v = $i
	if (!(cfg in seen)) { seen[cfg] = 1; order[++n] = cfg }
	r[cfg, kind] = v
}
END {
	printf "%-28s %16s %16s %8s\n", "workers,concurrency", "river-noop jobs/s", "harness jobs/s", "ratio"
	for (i = 1; i <= n; i++) {
		c = order[i]; a = r[c, "river-noop"]; h = r[c, "harness"]
		printf "%-28s %16.2f %16.2f %7.1fx\n", c, a, h, (h > 0 ? a / h : 0)
	}
}'
