#!/usr/bin/env bash
# bench/run.sh: the offsetkeeper benchmark harness. See docs/benchmarks.md.
#
# For each size it starts a seeded kfake cluster (bench/cluster) as its own
# process, then measures, as separate processes under /usr/bin/time (wall
# time, CPU time and peak RSS), side by side and interleaved --repeat times:
#
#   kcat-read       kcat -C -e -o beginning -X isolation.level=read_committed of the offsets topic
#   snapshot        offsetkeeper snapshot (the whole cluster, into a file:// store)
#   sink-capture    offsetkeeper snapshot with an empty offsets topic: the sink groups alone,
#                   with the broker requests it made counted by the cluster
#   restore         offsetkeeper restore <snapshot> --source-only into an empty offsets topic
#   drill           offsetkeeper drill <snapshot>: all of it, sink groups included, restored into
#                   an embedded scratch cluster and read back (its RTO in the extra column)
#   restore-all     offsetkeeper restore <snapshot> of all of it into an empty offsets topic: the
#                   sink groups planned and verified as the drill's restore does (they hold the
#                   snapshot's offsets already, so none is committed)
#   kcat-restore    the same job by hand: kcat -C dump of the empty topic, kcat -P of the
#                   snapshot's records, kcat -C read-back
#   daemon          offsetkeeper daemon --schedule '@every 3s' for --daemon-seconds (default 15;
#                   0 skips it), its RSS sampled every second from /proc: the steady RSS
#                   between runs (median of the samples after its first run) and its peak;
#                   then the same with --journal-interval 0 (daemon-nojournal)
#
# and then the Go benchmarks of package snapshot against the same cluster
# (incremental vs full capture after 1% of the keys changed, broker
# requests of a sink capture per broker). It prints a table of medians and
# ratios and writes it, with every raw measurement, under --out.
#
# Usage: bench/run.sh [--records 400000[,1600000...]] [--keys N] [--groups 2000]
#                     [--group-partitions 50] [--repeat 3] [--port 19092] [--out DIR]
#                     [--skip-restore] [--skip-go-bench] [--daemon-seconds 15]
set -euo pipefail

records=400000
keys=
groups=2000
group_partitions=50
repeat=3
port=19092
out=
skip_restore=false
skip_go_bench=false
daemon_seconds=15

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--records) records=$2; shift 2 ;;
	--keys) keys=$2; shift 2 ;;
	--groups) groups=$2; shift 2 ;;
	--group-partitions) group_partitions=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--port) port=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--skip-restore) skip_restore=true; shift ;;
	--skip-go-bench) skip_go_bench=true; shift ;;
	--daemon-seconds) daemon_seconds=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench/run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/offsetkeeper-bench.XXXXXX")
out=${out:-$work}
mkdir -p "$out"
results=$out/results.md
raw=$out/raw.tsv
control=127.0.0.1:$((port + 7))

cluster_pid=
daemon_pid=
cleanup() {
	status=$?
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		wait "$daemon_pid" 2>/dev/null || true
	fi
	if [ -n "$cluster_pid" ] && kill -0 "$cluster_pid" 2>/dev/null; then
		kill -TERM "$cluster_pid" 2>/dev/null || true
		wait "$cluster_pid" 2>/dev/null || true
	fi
	if [ "$out" = "$work" ]; then
		rm -rf "$work/store" "$work"/*.data "$work/offsetkeeper" "$work/cluster" "$work/snapshot.test"
	else
		rm -rf "$work"
	fi
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Tools: kcat and GNU time, installed when missing (Debian/Ubuntu).
need_apt=
command -v kcat >/dev/null || need_apt="$need_apt kcat"
[ -x /usr/bin/time ] || need_apt="$need_apt time"
if [ -n "$need_apt" ]; then
	log "installing$need_apt"
	apt-get update -qq && apt-get install -y -qq $need_apt >/dev/null
fi
KCAT=$(command -v kcat)

log "building into $work"
# offsetkeeper is built as deploy/Dockerfile builds the release binary
# (-trimpath, -s -w): its text and tables are part of the RSS measured.
(cd "$repo" && go build -trimpath -tags disable_grpc_modules -ldflags "-s -w" -o "$work/offsetkeeper" ./cmd/offsetkeeper &&
	go build -o "$work/cluster" ./bench/cluster &&
	go test -c -o "$work/snapshot.test" ./snapshot/capture/)

printf 'size\trepeat\tmeasure\twall_s\tcpu_s\trss_kb\textra\n' >"$raw"

# timed NAME CMD...: runs CMD under /usr/bin/time, appends "wall cpu rss"
# (seconds, user+system seconds, KiB) to $work/NAME.time, and fails loudly
# if CMD fails.
timed() {
	local name=$1
	shift
	if ! /usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" -a "$@"; then
		log "FAILED: $*"
		return 1
	fi
}
# last NAME: the wall, CPU and RSS of NAME's last timed run.
last() { tail -n 1 "$work/$1.time" | awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}'; }
# record SIZE REPEAT MEASURE WALL CPU RSS [EXTRA]
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "${7:-}" >>"$raw"; }
ctl() { curl -fsS -X "$1" "http://$control$2"; }

median() { sort -g | awk '{a[NR]=$1} END{if (NR==0) {print "-"; exit} if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# col SIZE MEASURE FIELD: the values of one field (4 wall, 5 cpu, 6 rss, 7 extra).
col() { awk -F'\t' -v s="$1" -v m="$2" -v f="$3" '$1==s && $3==m {print $f}' "$raw"; }
# ratio SIZE A B FIELD: median over the repeats of A/B.
ratio() {
	paste <(col "$1" "$2" "$4") <(col "$1" "$3" "$4") |
		awk '$2>0 {printf "%.3f\n", $1/$2}' | median
}

command -v curl >/dev/null || { echo "bench/run.sh: curl is needed" >&2; exit 1; }

: >"$results"
{
	echo "# offsetkeeper benchmark, $(date -u +%Y-%m-%dT%H:%MZ)"
	echo
	echo "Command: bench/run.sh --records $records${keys:+ --keys $keys} --groups $groups --group-partitions $group_partitions --repeat $repeat"
	echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(go version | cut -d' ' -f3), $("$KCAT" -V 2>&1 | awk '/librdkafka/ {print "kcat with librdkafka " $NF; exit}')"
	echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
} >>"$results"

for size in ${records//,/ }; do
	nkeys=${keys:-$((size / 2))}
	log "size $size records, $nkeys keys, $groups groups x $group_partitions partitions: seeding"
	"$work/cluster" --port "$port" --control "$control" --records "$size" --keys "$nkeys" \
		--groups "$groups" --group-partitions "$group_partitions" >"$work/cluster.out" 2>"$work/cluster.err" &
	cluster_pid=$!
	for _ in $(seq 1 1200); do
		grep -q '^ready$' "$work/cluster.out" 2>/dev/null && break
		kill -0 "$cluster_pid" 2>/dev/null || { cat "$work/cluster.err" >&2; exit 1; }
		sleep 0.5
	done
	grep -q '^ready$' "$work/cluster.out" || { log "cluster not ready after 10 minutes"; exit 1; }
	get() { sed -n "s/^$1=//p" "$work/cluster.out"; }
	brokers=$(get brokers)
	live_bytes=$(get live_bytes)
	log "seeded in $(get seed_seconds)s: $(get keys) live keys, $live_bytes live bytes; brokers $brokers"
	cluster_rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$cluster_pid/status")
	ok=("$work/offsetkeeper")
	export OFFSETKEEPER_BROKERS=$brokers OFFSETKEEPER_LOG_LEVEL=warn
	kread=("$KCAT" -b "$brokers" -C -e -o beginning -X isolation.level=read_committed -q -K '\t')
	store=$work/store/$size
	ctl POST "/topic?name=bench-empty-offsets&partitions=25" >/dev/null

	# The snapshot's records as kcat would produce them: the last value of
	# each key, key TAB value per line (prepared once, not timed).
	"${kread[@]}" -t connect-offsets | awk -F'\t' '{v[$1] = $0} END {for (k in v) print v[k]}' >"$work/records.tsv.data"

	for r in $(seq 1 "$repeat"); do
		log "size $size: repeat $r/$repeat"
		timed kcat-read "${kread[@]}" -t connect-offsets >/dev/null
		read -r w c m < <(last kcat-read)
		record "$size" "$r" kcat-read "$w" "$c" "$m"

		timed snapshot "${ok[@]}" snapshot --store "file://$store" >"$work/snapshot.stdout"
		read -r w c m < <(last snapshot)
		snap_id=$(tail -n 1 "$work/snapshot.stdout")
		record "$size" "$r" snapshot "$w" "$c" "$m" "$snap_id"

		ctl POST /requests/reset >/dev/null
		timed sink-capture "${ok[@]}" snapshot --offsets-topic bench-empty-offsets --store "file://$work/store/sink" >/dev/null
		read -r w c m < <(last sink-capture)
		reqs=$(ctl GET /requests | tr -d '{}"' | tr ',' ' ')
		record "$size" "$r" sink-capture "$w" "$c" "$m" "$reqs"

		if ! $skip_restore; then
			t=restore-ok-$r
			ctl POST "/topic?name=$t&partitions=25" >/dev/null
			timed restore "${ok[@]}" restore "$snap_id" --offsets-topic "$t" --source-only --store "file://$store" >"$work/restore.stdout"
			read -r w c m < <(last restore)
			applied=$(sed -n 's/^applied: .*(\([0-9.]*\)\(m\{0,1\}s\))$/\1 \2/p' "$work/restore.stdout" |
				awk '{print ($2 == "ms") ? $1 / 1000 : $1}')
			grep -q '^verified: ' "$work/restore.stdout" || { log "restore did not verify"; cat "$work/restore.stdout" >&2; exit 1; }
			record "$size" "$r" restore "$w" "$c" "$m" "${applied:-}"
			record "$size" "$r" restore-write "${applied:-0}" 0 0

			# The drill of the same snapshot (docs/drills.md): restore.Run of
			# all of it, sink groups included, into an embedded scratch
			# cluster, and the read-back.
			timed drill "${ok[@]}" drill "$snap_id" --store "file://$store" --output json >"$work/drill.json"
			read -r w c m < <(last drill)
			grep -q '^  "result": "passed"' "$work/drill.json" || { log "drill did not pass"; cat "$work/drill.json" >&2; exit 1; }
			rto=$(sed -n 's/^    "restore_ms": \([0-9]*\).*/\1/p' "$work/drill.json" | head -n 1)
			record "$size" "$r" drill "$w" "$c" "$m" "${rto:-}"

			# restore of the whole snapshot, as the drill restores it: the
			# sink groups planned and verified too (the cluster's groups
			# hold the snapshot's offsets, so none is committed).
			t=restore-all-$r
			ctl POST "/topic?name=$t&partitions=25" >/dev/null
			timed restore-all "${ok[@]}" restore "$snap_id" --offsets-topic "$t" --store "file://$store" >"$work/restore.stdout"
			read -r w c m < <(last restore-all)
			grep -q '^verified: ' "$work/restore.stdout" || { log "restore (whole snapshot) did not verify"; cat "$work/restore.stdout" >&2; exit 1; }
			record "$size" "$r" restore-all "$w" "$c" "$m"

			t=restore-kcat-$r
			ctl POST "/topic?name=$t&partitions=25" >/dev/null
			timed kcat-dump "${kread[@]}" -t "$t" >"$work/live.tsv.data"
			read -r w1 c1 m1 < <(last kcat-dump)
			timed kcat-produce "$KCAT" -b "$brokers" -P -t "$t" -K '\t' -X topic.partitioner=murmur2_random -l "$work/records.tsv.data"
			read -r w2 c2 m2 < <(last kcat-produce)
			timed kcat-readback "${kread[@]}" -t "$t" >"$work/readback.tsv.data"
			read -r w3 c3 m3 < <(last kcat-readback)
			n=$(wc -l <"$work/readback.tsv.data")
			[ "$n" -eq "$(wc -l <"$work/records.tsv.data")" ] || { log "kcat read back $n records"; exit 1; }
			record "$size" "$r" kcat-restore "$(echo "$w1 $w2 $w3" | awk '{print $1 + $2 + $3}')" \
				"$(echo "$c1 $c2 $c3" | awk '{print $1 + $2 + $3}')" \
				"$(printf '%s\n' "$m1" "$m2" "$m3" | sort -n | tail -n 1)" "dump $w1 produce $w2 readback $w3"
			record "$size" "$r" kcat-produce "$w2" "$c2" "$m2"
		fi
	done

	if [ "$daemon_seconds" -gt 0 ]; then
		# With the journal (the default, --journal-interval 10s) and without.
		for variant in daemon daemon-nojournal; do
			flags=()
			[ "$variant" = daemon-nojournal ] && flags=(--journal-interval 0)
			log "size $size: $variant for ${daemon_seconds}s"
			rm -rf "$work/store/daemon-$size"
			"${ok[@]}" daemon --schedule '@every 3s' --keep-last 2 --listen 127.0.0.1:0 "${flags[@]}" \
				--store "file://$work/store/daemon-$size" >"$work/daemon.out" 2>"$work/daemon.err" &
			daemon_pid=$!
			: >"$work/daemon-rss.data"
			for _ in $(seq 1 "$daemon_seconds"); do
				sleep 1
				# The sample is taken once a run has stored a snapshot.
				if kill -0 "$daemon_pid" 2>/dev/null && ls "$work/store/daemon-$size/snapshots/" 2>/dev/null | grep -q .; then
					awk '/^VmRSS/ {print $2}' "/proc/$daemon_pid/status" >>"$work/daemon-rss.data"
				fi
			done
			kill -0 "$daemon_pid" 2>/dev/null || { log "daemon exited"; cat "$work/daemon.err" >&2; exit 1; }
			hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$daemon_pid/status")
			kill -TERM "$daemon_pid"
			wait "$daemon_pid" || true
			daemon_pid=
			runs=$(ls "$work/store/daemon-$size/snapshots/" | wc -l)
			record "$size" 1 "$variant" 0 0 "$(median <"$work/daemon-rss.data")" "peak_kb=$hwm samples=$(wc -l <"$work/daemon-rss.data") snapshots_in_store=$runs"
		done
	fi

	if ! $skip_go_bench; then
		log "size $size: Go benchmarks (incremental vs full, sink capture requests)"
		# The incremental runs are short: 10 of them per measurement, so
		# that one garbage collection of the large heap does not decide it.
		OFFSETKEEPER_BENCH_BROKERS=$brokers "$work/snapshot.test" -test.run '^$' \
			-test.bench '^Benchmark(CaptureFull|CaptureFullSourceOnly|SnapshotFull|CaptureSinkGroups)$' \
			-test.benchtime 3x -test.count "$repeat" >"$work/gobench-$size.txt"
		OFFSETKEEPER_BENCH_BROKERS=$brokers "$work/snapshot.test" -test.run '^$' \
			-test.bench '^Benchmark(CaptureIncremental|CaptureIncrementalSourceOnly|SnapshotIncremental)$' \
			-test.benchtime 10x -test.count "$repeat" >>"$work/gobench-$size.txt"
		for b in CaptureFull CaptureIncremental CaptureFullSourceOnly CaptureIncrementalSourceOnly SnapshotFull SnapshotIncremental CaptureSinkGroups; do
			awk -v p="Benchmark$b-" -v b="go-$b" -v s="$size" 'index($1, p) == 1 {
				n++; extra = ""
				for (i = 5; i < NF; i += 2) extra = extra $(i + 1) "=" $i " "
				printf "%s\t%d\t%s\t%.4f\t0\t0\t%s\n", s, n, b, $3 / 1e9, extra
			}' "$work/gobench-$size.txt" >>"$raw"
		done
		cp "$work/gobench-$size.txt" "$out/"
	fi

	kill -TERM "$cluster_pid"
	wait "$cluster_pid" || true
	cluster_pid=

	# The table of this size.
	mib() { awk '{printf "%.0f", $1 / 1024}'; }
	bound_kb=$(((2 * live_bytes + 64 * 1024 * 1024) / 1024))
	rbound_kb=$(((3 * live_bytes + 64 * 1024 * 1024) / 1024))
	{
		echo "## $size records, $nkeys live keys ($((live_bytes / 1024)) KiB of keys and values), $groups sink groups x $group_partitions partitions"
		echo
		echo "Medians of $repeat runs; ratios are the medians of the per-run ratios. Seeding took $(get seed_seconds) s; the kfake cluster process held $((cluster_rss_kb / 1024)) MiB (RSS) once seeded."
		echo
		echo "| measure | wall s | CPU s | peak RSS MiB | ratio (wall) | ratio (CPU) | target |"
		echo "|---|---|---|---|---|---|---|"
		row() {
			local rss cpu
			rss=$(col "$size" "$2" 6 | median | mib)
			cpu=$(col "$size" "$2" 5 | median)
			[ "$rss" = 0 ] && rss=
			[ "$cpu" = 0 ] && cpu=
			echo "| $1 | $(col "$size" "$2" 4 | median) | $cpu | $rss | ${3:-} | ${4:-} | ${5:-} |"
		}
		row "kcat -C read_committed to the end" kcat-read
		row "offsetkeeper snapshot" snapshot "$(ratio "$size" snapshot kcat-read 4) x kcat" "$(ratio "$size" snapshot kcat-read 5) x kcat" "wall <= 0.5"
		# kcat's read time is bimodal here (a half-second step at the end
		# of the topic): the median snapshot against kcat's fastest run is
		# the conservative ratio.
		echo "| snapshot (median) / kcat's fastest read | | | | $(awk -v s="$(col "$size" snapshot 4 | median)" -v k="$(col "$size" kcat-read 4 | sort -n | head -n 1)" 'BEGIN{printf "%.3f", s / k}') x kcat | | wall <= 0.5 |"
		echo "| snapshot peak RSS / (2 x live + 64 MiB = $((bound_kb / 1024)) MiB) | | | | $(col "$size" snapshot 6 | median | awk -v b="$bound_kb" '{printf "%.2f", $1 / b}') | | <= 1.0 |"
		row "sink capture ($groups groups, empty offsets topic)" sink-capture "" "" "few requests per coordinator"
		if ! $skip_restore; then
			row "offsetkeeper drill (whole snapshot into an embedded scratch cluster; RTO $(col "$size" drill 7 | median) ms)" drill
			echo "| drill peak RSS / (3 x live + 64 MiB = $((rbound_kb / 1024)) MiB, restore's cap) | | | | $(col "$size" drill 6 | median | awk -v b="$rbound_kb" '{printf "%.2f", $1 / b}') | | <= 1.0 |"
			row "offsetkeeper restore of the whole snapshot (sink groups planned and verified, none committed)" restore-all
			echo "| drill peak RSS / restore peak RSS, same runs: --source-only; whole snapshot | | | | $(ratio "$size" drill restore 6); $(ratio "$size" drill restore-all 6) | | |"
		fi
		if [ "$daemon_seconds" -gt 0 ]; then
			echo "| daemon RSS, @every 3s, median of 1 s samples after its first snapshot ($(col "$size" daemon 7)) / (2 x live + 64 MiB) | | | $(col "$size" daemon 6 | mib) | $(col "$size" daemon 6 | awk -v b="$bound_kb" '{printf "%.2f", $1 / b}') | | <= 1.0 |"
			echo "| daemon RSS without the journal (--journal-interval 0), the same ($(col "$size" daemon-nojournal 7)) / (2 x live + 64 MiB) | | | $(col "$size" daemon-nojournal 6 | mib) | $(col "$size" daemon-nojournal 6 | awk -v b="$bound_kb" '{printf "%.2f", $1 / b}') | | <= 1.0 |"
		fi
		if ! $skip_restore; then
			row "offsetkeeper restore --source-only into an empty topic" restore "$(ratio "$size" restore kcat-restore 4) x kcat job" "$(ratio "$size" restore kcat-restore 5) x kcat job" "wall <= 1.0"
			echo "| restore peak RSS / (3 x live + 64 MiB = $((rbound_kb / 1024)) MiB) | | | | $(col "$size" restore 6 | median | awk -v b="$rbound_kb" '{printf "%.2f", $1 / b}') | | <= 1.0 |"
			row "kcat job: -C dump, -P produce, -C read back" kcat-restore
			row "restore write phase (Apply)" restore-write "$(ratio "$size" restore-write kcat-produce 4) x kcat -P" "" "wall <= 1.0"
			row "kcat -P of the same records" kcat-produce
		fi
		if ! $skip_go_bench; then
			g() { col "$size" "go-$1" 4 | median; }
			echo "| Go: Capture full | $(g CaptureFull) | | | | | |"
			echo "| Go: Capture incremental, 1% of keys changed | $(g CaptureIncremental) | | | $(ratio "$size" go-CaptureIncremental go-CaptureFull 4) x full | | <= 0.1 |"
			echo "| Go: Capture full, source offsets only | $(g CaptureFullSourceOnly) | | | | | |"
			echo "| Go: Capture incremental, source offsets only | $(g CaptureIncrementalSourceOnly) | | | $(ratio "$size" go-CaptureIncrementalSourceOnly go-CaptureFullSourceOnly 4) x full | | <= 0.1 |"
			echo "| Go: Capture + Put full | $(g SnapshotFull) | | | | | |"
			echo "| Go: Capture + Put incremental, 1% changed | $(g SnapshotIncremental) | | | $(ratio "$size" go-SnapshotIncremental go-SnapshotFull 4) x full | | <= 0.1 |"
		fi
		echo
		echo "Sink capture, broker requests of one offsetkeeper snapshot (counted by the cluster): $(col "$size" sink-capture 7 | tail -n 1)"
		if ! $skip_go_bench; then
			echo
			echo "Sink capture, requests per capture by kind and the most any one broker got (Go benchmark, kgo hooks): $(col "$size" go-CaptureSinkGroups 7 | tail -n 1)"
		fi
		echo
	} >>"$results"
done

{
	echo "Raw measurements: $raw"
	echo
} >>"$results"
cat "$results"
log "results in $results"
