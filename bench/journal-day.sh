#!/usr/bin/env bash
# bench/journal-day.sh: restore --at over a day of journal against the same
# job by hand with kcat (bench/run.sh's kcat-restore), interleaved. See
# docs/benchmarks.md#journal.
#
# It needs a running bench/cluster (--brokers, --control) and a store that
# bench/journalday filled from that cluster (--store). Each repeat, under
# /usr/bin/time (wall, CPU, peak RSS):
#
#   restore-at    offsetkeeper restore --at <the journal's last moment - 30s> --source-only
#                 into an empty 25-partition offsets topic
#   kcat-restore  kcat -C dump of an empty topic, kcat -P of the base snapshot's records,
#                 kcat -C read-back (as bench/run.sh)
#
# and prints the figures, the plan's segments per level and records applied.
#
# Usage: bench/journal-day.sh --brokers B --control HOST:PORT --store DIR
#                             [--offsetkeeper BIN] [--repeat 3] [--at TIME]
set -euo pipefail

brokers=
control=
store=
ok=
repeat=3
at=
while [ $# -gt 0 ]; do
	case $1 in
	--brokers) brokers=$2; shift 2 ;;
	--control) control=$2; shift 2 ;;
	--store) store=$2; shift 2 ;;
	--offsetkeeper) ok=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--at) at=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/journal-day.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ -n "$brokers" ] && [ -n "$control" ] && [ -d "$store" ] || { echo "bench/journal-day.sh: want --brokers, --control and --store (see --help)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/offsetkeeper-journal-day.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$ok" ]; then
	(cd "$repo" && go build -tags disable_grpc_modules -o "$work/offsetkeeper" ./cmd/offsetkeeper)
	ok=$work/offsetkeeper
fi
KCAT=$(command -v kcat)
export OFFSETKEEPER_BROKERS=$brokers OFFSETKEEPER_LOG_LEVEL=warn
kread=("$KCAT" -b "$brokers" -C -e -o beginning -X isolation.level=read_committed -q -K '\t')
ctl() { curl -fsS -X "$1" "http://$control$2"; }
timed() { local name=$1; shift; /usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" -a "$@"; }
last() { tail -n 1 "$work/$1.time" | awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}'; }

if [ -z "$at" ]; then
	# The last moment the journal reaches (its newest segment's name), less 30 s.
	lastms=$(find "$store/journal" -name '*.seg' | sed 's/.*-\([0-9]\{13\}\)\.seg$/\1/' | sort -n | tail -n 1)
	at=$(date -u -d "@$(((lastms - 30000) / 1000))" +%Y-%m-%dT%H:%M:%SZ)
fi
# The base snapshot's records, key TAB value, as kcat produces them
# (the last value of each key of the offsets topic; not timed).
"${kread[@]}" -t connect-offsets | awk -F'\t' '{v[$1] = $0} END {for (k in v) print v[k]}' >"$work/records.tsv"
echo "at=$at records=$(wc -l <"$work/records.tsv") load=$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'repeat\tmeasure\twall_s\tcpu_s\trss_kb\textra\n'
for r in $(seq 1 "$repeat"); do
	t=restore-at-$r-$$
	ctl POST "/topic?name=$t&partitions=25" >/dev/null
	timed restore-at "$ok" restore --at "$at" --offsets-topic "$t" --source-only --store "file://$store" >"$work/restore.out"
	grep -q '^verified: ' "$work/restore.out" || { cat "$work/restore.out" >&2; echo "restore --at did not verify" >&2; exit 1; }
	read -r w c m < <(last restore-at)
	plan=$(grep -o 'journal segments read: [^(]*' "$work/restore.out" | head -n 1 | sed 's/journal segments read: //; s/ *$//')
	applied=$(grep -o '([0-9]* source records' "$work/restore.out" | head -n 1 | tr -dc '0-9')
	printf '%s\trestore-at\t%s\t%s\t%s\tplan: %s; journal records applied: %s\n' "$r" "$w" "$c" "$m" "$plan" "$applied"

	t=restore-kcat-$r-$$
	ctl POST "/topic?name=$t&partitions=25" >/dev/null
	timed kcat-dump "${kread[@]}" -t "$t" >"$work/live.tsv"
	timed kcat-produce "$KCAT" -b "$brokers" -P -t "$t" -K '\t' -X topic.partitioner=murmur2_random -l "$work/records.tsv"
	timed kcat-readback "${kread[@]}" -t "$t" >"$work/readback.tsv"
	[ "$(wc -l <"$work/readback.tsv")" -eq "$(wc -l <"$work/records.tsv")" ] || { echo "kcat read back a short topic" >&2; exit 1; }
	read -r w1 c1 m1 < <(last kcat-dump)
	read -r w2 c2 m2 < <(last kcat-produce)
	read -r w3 c3 m3 < <(last kcat-readback)
	printf '%s\tkcat-restore\t%s\t%s\t%s\tdump %s produce %s readback %s\n' "$r" "$(echo "$w1 $w2 $w3" | awk '{print $1 + $2 + $3}')" \
		"$(echo "$c1 $c2 $c3" | awk '{print $1 + $2 + $3}')" "$(printf '%s\n' "$m1" "$m2" "$m3" | sort -n | tail -n 1)" "$w1" "$w2" "$w3"
done
