#!/usr/bin/env bash
# validate.sh: check deploy/ without a cluster, Docker or network beyond the
# package mirrors. Run from anywhere: deploy/validate.sh
#
# The checks are the Go tests of ./deploy (so `go test ./...` runs them too):
# every YAML parses, kinds and required fields are present, kustomizations
# list existing files, the dashboard and alerts use only exported metric
# names. Tools make them stricter when present:
#   promtool          PromQL of the alerts and dashboard (fetched below if missing)
#   kubectl >= 1.27   renders both kustomizations (kustomize v5)
#   systemd-analyze   verifies the unit
#
# VALIDATE_FETCH=0 disables fetching promtool.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/.."

if ! command -v go >/dev/null; then
	echo "validate.sh: go is required" >&2
	exit 1
fi

tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT

# promtool ships in Debian's prometheus package. Extract the binary rather
# than installing the package, which would also start a Prometheus server.
if ! command -v promtool >/dev/null && [ "${VALIDATE_FETCH:-1}" = 1 ] && command -v apt-get >/dev/null; then
	echo "validate.sh: fetching promtool from the prometheus Debian package" >&2
	if (cd "$tools" && apt-get download prometheus >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get download prometheus >/dev/null 2>&1; }) &&
		dpkg-deb -x "$tools"/prometheus_*.deb "$tools/root"; then
		export PATH="$tools/root/usr/bin:$PATH"
	else
		echo "validate.sh: could not fetch promtool; PromQL is checked for metric names only" >&2
	fi
fi

for t in promtool kubectl systemd-analyze; do
	if command -v "$t" >/dev/null; then
		echo "validate.sh: using $(command -v "$t")"
	else
		echo "validate.sh: no $t; its checks are skipped"
	fi
done

go test -count=1 -v ./deploy/
