#!/usr/bin/env bash
# bench/daemon-drills.sh: the daemon's memory while it drills (docs/benchmarks.md,
# "Restore drills", "In the daemon").
#
# Starts a seeded kfake cluster (bench/cluster, as bench/run.sh seeds it) and
# offsetkeeper daemon --schedule '@every 1h' --drill-schedule '@every 20s'
# against it, and samples for --seconds (default 70), every 0.2 s: the
# daemon's VmRSS, and the VmHWM of each drill process the daemon runs (its
# children). It prints the daemon's RSS between drills (median, and max) and
# during them (max), and each drill process's peak, in MiB.
#
# Usage: bench/daemon-drills.sh [--records 400000] [--port 29092] [--seconds 70]
#                               [--binary PATH (default: build this tree as bench/run.sh does)]
set -euo pipefail

records=400000
port=29092
seconds=70
binary=
while [ $# -gt 0 ]; do
	case $1 in
	--records) records=$2; shift 2 ;;
	--port) port=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--binary) binary=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/daemon-drills.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/offsetkeeper-drills.XXXXXX")
cluster_pid=
daemon_pid=
cleanup() {
	status=$?
	for p in $daemon_pid $cluster_pid; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			wait "$p" 2>/dev/null || true
		fi
	done
	rm -rf "$work"
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ -z "$binary" ]; then
	# As deploy/Dockerfile builds the release binary (bench/run.sh does too).
	(cd "$repo" && go build -trimpath -tags disable_grpc_modules -ldflags "-s -w" -o "$work/offsetkeeper" ./cmd/offsetkeeper)
	binary=$work/offsetkeeper
fi
(cd "$repo" && go build -o "$work/cluster" ./bench/cluster)

log "seeding $records records"
"$work/cluster" --port "$port" --control "127.0.0.1:$((port + 7))" --records "$records" --keys "$((records / 2))" \
	--groups 2000 --group-partitions 50 >"$work/cluster.out" 2>"$work/cluster.err" &
cluster_pid=$!
for _ in $(seq 1 1200); do
	grep -q '^ready$' "$work/cluster.out" 2>/dev/null && break
	kill -0 "$cluster_pid" 2>/dev/null || { cat "$work/cluster.err" >&2; exit 1; }
	sleep 0.5
done
brokers=$(sed -n 's/^brokers=//p' "$work/cluster.out")
log "seeded: brokers $brokers"

"$binary" daemon --brokers "$brokers" --store "file://$work/store" --schedule '@every 1h' \
	--drill-schedule '@every 20s' --listen 127.0.0.1:0 >"$work/daemon.out" 2>"$work/daemon.err" &
daemon_pid=$!
for _ in $(seq 1 600); do
	ls "$work/store/snapshots/" 2>/dev/null | grep -q . && break
	kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/daemon.err" >&2; exit 1; }
	sleep 0.5
done
log "daemon $daemon_pid stored its first snapshot: sampling for ${seconds}s"
: >"$work/samples"
end=$((SECONDS + seconds))
while [ $SECONDS -lt $end ]; do
	kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/daemon.err" >&2; exit 1; }
	# daemon: VmRSS:RssAnon:RssFile; each child: pid:VmHWM:VmRSS:RssAnon:RssFile (KiB)
	line=$(awk '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2} /^RssFile/ {f = $2} END {print r ":" a ":" f}' "/proc/$daemon_pid/status")
	for k in $(cat /proc/"$daemon_pid"/task/*/children 2>/dev/null); do
		m=$(awk '/^VmHWM/ {h = $2} /^VmRSS/ {r = $2} /^RssAnon/ {a = $2} /^RssFile/ {f = $2} END {if (h) print h ":" r ":" a ":" f}' "/proc/$k/status" 2>/dev/null || true)
		[ -n "$m" ] && line="$line $k:$m"
	done
	echo "$line" >>"$work/samples"
	sleep 0.2
done
# A sample is "during a drill" when the daemon has a drill process. The
# container's memory then is both processes' anonymous memory plus the
# binary's file pages, which they share (the page cache holds them once:
# adding the two VmRSS counts them twice).
median=$(awk 'NF == 1 {split($1, d, ":"); print d[1]}' "$work/samples" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
awk -v median="$median" '
	function mib(kb) { return sprintf("%.0f", kb / 1024) }
	{ split($1, d, ":"); if (d[1] > all) all = d[1] }
	NF == 1 { nb++; if (d[1] > bmax) bmax = d[1] }
	NF > 1 {
		if (d[1] > dmax) dmax = d[1]
		sum = d[1]; anon = d[2]; file = d[3]
		for (i = 2; i <= NF; i++) {
			split($i, a, ":")
			if (a[2] > peak[a[1]]) peak[a[1]] = a[2]
			sum += a[3]; anon += a[4]; if (a[5] > file) file = a[5]
		}
		if (sum > pod) pod = sum
		if (anon + file > shared) shared = anon + file
	}
	END {
		printf "daemon RSS between drills: median %s MiB, max %s MiB (%d samples)\n", mib(median), mib(bmax), nb
		printf "daemon RSS during drills: max %s MiB; over the whole run: max %s MiB\n", mib(dmax), mib(all)
		for (p in peak) printf "drill process %s: peak (VmHWM) %s MiB\n", p, mib(peak[p])
		if (pod) printf "daemon + drill process, sampled together: max %s MiB (VmRSS summed), %s MiB (anonymous summed + file pages once)\n", mib(pod), mib(shared)
	}' "$work/samples"
grep 'msg=drill \|"msg":"drill"' "$work/daemon.err" | cut -c1-200 >&2 || true
