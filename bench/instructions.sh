#!/usr/bin/env bash
# bench/instructions.sh: offsetkeeper at two commits, compared by instruction
# counts, which do not depend on the machine's load. See docs/benchmarks.md.
#
# It builds offsetkeeper at --base (from `git archive`, in a temporary
# directory) and at the work tree (or at --head), as a release is built but with its symbol
# table kept (the instructions are the same; callgrind names functions),
# starts one seeded kfake cluster (bench/cluster of the work tree) and, for
# each binary in turn, --repeat times, runs under valgrind --tool=callgrind:
#
#   snapshot        offsetkeeper snapshot (the whole cluster, into an empty file:// store)
#   restore-dry     offsetkeeper restore <that snapshot> --source-only --dry-run into an empty topic
#   restore         the same without --dry-run (plan, checks, undo snapshot, write, verify)
#
# and reads the instructions executed (callgrind's Ir, every thread) from each,
# in all and without the Go runtime's collector and scheduler (garbage
# collection, write barriers, spans, goroutine scheduling, locks, timers):
# their share moves by several percent from run to run of the same binary,
# as when they run depends on timing even under valgrind; the rest, "the
# program's own" (its code, its libraries, its allocations), moves by 0.3%.
# Then, without valgrind, under /usr/bin/time and interleaved: kcat reading
# the offsets topic (as bench/run.sh does) and the snapshot of each binary,
# with the load average before each run. It prints a table of medians and
# ratios (work tree / base) and keeps the callgrind files under --out
# (callgrind_annotate --inclusive=yes FILE for the per-function counts).
#
# Go under valgrind 3.19 needs GODEBUG=asyncpreemptoff=1 (callgrind asserts
# on the preemption signal) and cpu.rdtscp=off (valgrind cannot decode
# RDTSCP); both are set for the measured runs only.
#
# Usage: bench/instructions.sh --base COMMIT [--head COMMIT] [--records 100000]
#                              [--repeat 3] [--wall-repeat 5] [--port N] [--out DIR]
#
# --wall-repeat 0 skips the wall times.
#
# --port is the first of the cluster's three broker ports (its control port
# is at +7); by default a base whose ports nothing listens on is chosen.
set -euo pipefail

base=
head=
records=100000
repeat=3
wall_repeat=5
port=
out=

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--base) base=$2; shift 2 ;;
	--head) head=$2; shift 2 ;;
	--records) records=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--wall-repeat) wall_repeat=$2; shift 2 ;;
	--port) port=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench/instructions.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ -n "$base" ] || { echo "bench/instructions.sh: --base COMMIT is needed (see --help)" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
base_rev=$(git -C "$repo" rev-parse --short "$base^{commit}")
if [ -n "$head" ]; then
	head_rev=$(git -C "$repo" rev-parse --short "$head^{commit}")
else
	head_rev="$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- . || echo '+changes')"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/offsetkeeper-instr.XXXXXX")
out=${out:-$work/out}
mkdir -p "$out"
# free PORT: no socket uses the four ports from PORT. The ports are picked
# below Linux's ephemeral range, where outgoing connections take theirs.
free() { for p in $1 $(($1 + 1)) $(($1 + 2)) $(($1 + 7)); do [ -z "$(ss -Htan "sport = :$p")" ] || return 1; done; }
if [ -z "$port" ]; then
	for _ in $(seq 1 50); do
		port=$((20000 + RANDOM % 12000))
		free "$port" && break
	done
fi
free "$port" || { echo "bench/instructions.sh: port $port (or +1, +2, +7) is in use: pick another with --port" >&2; exit 1; }
control=127.0.0.1:$((port + 7))

cluster_pid=
cleanup() {
	status=$?
	if [ -n "$cluster_pid" ] && kill -0 "$cluster_pid" 2>/dev/null; then
		kill -TERM "$cluster_pid" 2>/dev/null || true
		wait "$cluster_pid" 2>/dev/null || true
	fi
	case $out in
	"$work"/*) rm -rf "$work/src" "$work/store" "$work/ok-base" "$work/ok-head" "$work/cluster" ;;
	*) rm -rf "$work" ;;
	esac
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

need_apt=
command -v kcat >/dev/null || need_apt="$need_apt kcat"
command -v valgrind >/dev/null || need_apt="$need_apt valgrind"
[ -x /usr/bin/time ] || need_apt="$need_apt time"
if [ -n "$need_apt" ]; then
	log "installing$need_apt"
	apt-get update -qq && apt-get install -y -qq $need_apt >/dev/null
fi
command -v curl >/dev/null || { echo "bench/instructions.sh: curl is needed" >&2; exit 1; }

build() { # build DIR OUT
	(cd "$1" && CGO_ENABLED=0 go build -trimpath -tags disable_grpc_modules -o "$2" ./cmd/offsetkeeper)
}
log "building $base_rev and $head_rev into $work"
mkdir -p "$work/src/base"
git -C "$repo" archive "$base_rev" | tar -x -C "$work/src/base"
build "$work/src/base" "$work/ok-base"
if [ -n "$head" ]; then
	mkdir -p "$work/src/head"
	git -C "$repo" archive "$head_rev" | tar -x -C "$work/src/head"
	build "$work/src/head" "$work/ok-head"
else
	build "$repo" "$work/ok-head"
fi
(cd "$repo" && go build -o "$work/cluster" ./bench/cluster)

log "seeding $records records"
"$work/cluster" --port "$port" --control "$control" --records "$records" >"$work/cluster.out" 2>"$work/cluster.err" &
cluster_pid=$!
for _ in $(seq 1 1200); do
	grep -q '^ready$' "$work/cluster.out" 2>/dev/null && break
	kill -0 "$cluster_pid" 2>/dev/null || { cat "$work/cluster.err" >&2; exit 1; }
	sleep 0.5
done
grep -q '^ready$' "$work/cluster.out" || { log "cluster not ready after 10 minutes"; exit 1; }
brokers=$(sed -n 's/^brokers=//p' "$work/cluster.out")
export OFFSETKEEPER_BROKERS=$brokers OFFSETKEEPER_LOG_LEVEL=warn
ctl() { curl -fsS -X "$1" "http://$control$2"; }

raw=$out/raw.tsv
printf 'binary\trepeat\tmeasure\tvalue\tload1\n' >"$raw"
load1() { cut -d' ' -f1 /proc/loadavg; }
# cg NAME BIN ARGS...: runs BIN under callgrind, records its instructions.
cg() {
	local name=$1 bin=$2 file
	shift 2
	file=$out/callgrind.$bin.$name.$r
	local l
	l=$(load1)
	if ! GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind -q --tool=callgrind --callgrind-out-file="$file" \
		"$work/ok-$bin" "$@" >"$work/$bin.stdout" 2>"$work/$bin.stderr"; then
		log "FAILED under callgrind: ok-$bin $*"
		cat "$work/$bin.stderr" >&2
		exit 1
	fi
	local total collector
	read -r total collector < <(callgrind_annotate --auto=no --threshold=100 "$file" | awk "$split")
	printf '%s\t%s\t%s\t%s\t%s\n' "$bin" "$r" "$name" "$total" "$l" >>"$raw"
	printf '%s\t%s\t%s\t%s\t%s\n' "$bin" "$r" "$name-own" "$((total - collector))" "$l" >>"$raw"
}
# split reads callgrind_annotate's functions and prints the instructions of
# all of them and of the collector's and scheduler's (the runtime's files of
# garbage collection, barriers, spans, scheduling, locks, timers, netpoll).
split='!/PROGRAM TOTALS/ && match($0, /^ *[0-9,]+ +\( *[0-9.]+%\) +[^ ]+/) {
	n = $1; gsub(",", "", n)
	where = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", where); sub(/ .*/, "", where)
	file = where; sub(/:.*/, "", file)
	fn = where; sub(/^[^:]*:/, "", fn)
	total += n
	if (file ~ /^\.\/runtime\/(mgc|mbitmap|mwbbuf|mbarrier|proc\.go|lock_|sema|mspanset|mheap|mcentral|time\.go|netpoll|sys_linux|asm_amd64|stack\.go|preempt|os_linux|signal|runtime2|chan\.go|select\.go|mcache|mstats|mfinal|tracestatus|lockrank)/ || fn ~ /^internal\/runtime/)
		gc += n
}
END { printf "%.0f %.0f\n", total, gc }'

for r in $(seq 1 "$repeat"); do
	for bin in base head; do
		log "callgrind $r/$repeat: $bin"
		store=file://$work/store/$bin-$r
		cg snapshot "$bin" snapshot --store "$store"
		id=$(tail -n 1 "$work/$bin.stdout")
		t=instr-$bin-$r
		ctl POST "/topic?name=$t&partitions=25" >/dev/null
		cg restore-dry "$bin" restore "$id" --offsets-topic "$t" --source-only --dry-run --store "$store"
		cg restore "$bin" restore "$id" --offsets-topic "$t" --source-only --store "$store"
		grep -q '^verified: ' "$work/$bin.stdout" || { log "restore did not verify"; cat "$work/$bin.stdout" >&2; exit 1; }
	done
done

# Wall times against kcat, without valgrind: the load decides them.
kread=(kcat -b "$brokers" -C -e -o beginning -X isolation.level=read_committed -q -K '\t' -t connect-offsets)
timed() { # timed REPEAT NAME CMD...
	local r=$1 name=$2 l
	shift 2
	l=$(load1)
	/usr/bin/time -f '%e %U %S' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
	read -r w u s <"$work/time"
	printf 'wall\t%s\t%s\t%s\t%s\n' "$r" "$name-wall" "$w" "$l" >>"$raw"
	printf 'wall\t%s\t%s\t%s\t%s\n' "$r" "$name-cpu" "$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')" "$l" >>"$raw"
}
for r in $(seq 1 "$wall_repeat"); do
	log "wall $r/$wall_repeat"
	timed "$r" kcat "${kread[@]}"
	rm -rf "$work/store/wall"
	timed "$r" snapshot-base "$work/ok-base" snapshot --store "file://$work/store/wall"
	rm -rf "$work/store/wall"
	timed "$r" snapshot-head "$work/ok-head" snapshot --store "file://$work/store/wall"
done

median() { sort -g | awk '{a[NR]=$1} END{if (NR==0) {print "-"; exit} if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
col() { awk -F'\t' -v b="$1" -v m="$2" '$1==b && $3==m {print $4}' "$raw"; }
span() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END{print lo "–" hi}'; }
{
	echo "offsetkeeper $base_rev (base) against $head_rev (head), $records records, $(date -u +%Y-%m-%dT%H:%MZ)"
	if [ "$repeat" -gt 0 ]; then
		echo
		echo "| measure (-own: without the collector and scheduler) | base instructions (median of $repeat) | head | head / base | spread base; head |"
		echo "|---|---|---|---|---|"
		for m in snapshot snapshot-own restore-dry restore-dry-own restore restore-own; do
			b=$(col base $m | median)
			h=$(col head $m | median)
			echo "| $m | $b | $h | $(awk -v b="$b" -v h="$h" 'BEGIN{printf "%.4f", h / b}') | $(col base $m | span); $(col head $m | span) |"
		done
	fi
	[ "$wall_repeat" -gt 0 ] || exit 0
	echo
	echo "| wall, median of $wall_repeat (load1 $(awk -F'\t' '$1=="wall" {print $5}' "$raw" | span)) | wall s | CPU s | / kcat's wall |"
	echo "|---|---|---|---|"
	k=$(col wall kcat-wall | median)
	for m in kcat snapshot-base snapshot-head; do
		w=$(col wall "$m-wall" | median)
		echo "| $m | $w | $(col wall "$m-cpu" | median) | $(awk -v w="$w" -v k="$k" 'BEGIN{printf "%.2f", w / k}') |"
	done
} | tee "$out/results.md"
log "results in $out"
