package main

import (
	"fmt"
	"io"
	"strings"
)

// examples are each command's two or three most common uses, which its
// --help shows right after the usage line. Every command of the table has
// some (TestHelpExamples).
var examples = map[string][]string{
	"completion": {
		"source <(offsetkeeper completion bash)            # bash, this shell",
		"offsetkeeper completion zsh > \"${fpath[1]}/_offsetkeeper\"",
		"offsetkeeper completion fish | source",
	},
	"check": {
		"offsetkeeper check --brokers kafka:9092 --connect-url http://connect:8083  # exit 1 when a trap applies",
		"offsetkeeper check -c s3-sink -o json            # one connector, for a cron job or CI",
	},
	"daemon": {
		"offsetkeeper daemon --brokers kafka:9092 --store s3://bucket/prod --keep-last 48 --keep-daily 30",
		"offsetkeeper daemon --worker-config connect-distributed.properties --store gs://bucket --schedule '@every 15m'",
		"offsetkeeper daemon --capture-via connect --connect-url http://connect:8083 --leader-election=false --store s3://bucket/prod",
	},
	"demo": {
		"offsetkeeper demo                                # a seeded Kafka + Connect, on 9092-9094 and 8083",
		"offsetkeeper demo --port 19092 --rest-port 18083 --store ./demo-snapshots",
		"offsetkeeper demo --migration                    # two clusters, to rehearse a migration",
	},
	"diff": {
		"offsetkeeper diff latest                         # the newest snapshot against the live cluster",
		"offsetkeeper diff latest -c inventory-connector --exit-code",
		"offsetkeeper diff --at -1h latest -o json        # what changed in the last hour",
	},
	"drill": {
		"offsetkeeper drill --connect-url http://connect:8083  # a fresh capture: restorable, complete, RTO/RPO",
		"offsetkeeper drill latest --signing-key drill.key -o json > drill.json",
		"offsetkeeper drill verify drill.json --public-key drill.pub",
	},
	"events": {
		"offsetkeeper events --since -24h                 # the resets of the last day",
		"offsetkeeper events -c inventory-connector -o json",
	},
	"failover": {
		"offsetkeeper failover --store s3://bucket/prod --standby-brokers dr-kafka:9092 --dry-run",
		"offsetkeeper failover --store s3://bucket/prod --standby-brokers dr-kafka:9092 --standby-connect-url http://dr:8083",
	},
	"failback": {
		"offsetkeeper failback --store s3://bucket/dr --standby-brokers kafka:9092 --dry-run  # the old primary is back",
		"offsetkeeper failback --store s3://bucket/dr --standby-brokers kafka:9092 --standby-connect-url http://connect:8083",
	},
	"list": {
		"offsetkeeper list --store s3://bucket/prod",
		"offsetkeeper list -o json | jq -r '.[-1].id'      # the newest ID",
	},
	"man": {
		"offsetkeeper man | man -l -",
		"offsetkeeper man > /usr/local/share/man/man1/offsetkeeper.1",
	},
	"delete": {
		"offsetkeeper list                                  # a damaged object shows KIND damaged",
		"offsetkeeper delete 20261201T091400.123456Z-3fa94c",
	},
	"pin": {
		"offsetkeeper pin latest --note 'before the Debezium 3 upgrade'",
		"offsetkeeper pin 20261201T0914 20261201T1000      # unique prefixes of two IDs",
	},
	"prune": {
		"offsetkeeper prune --keep-last 48 --keep-daily 30 -n   # what would go, and why",
		"offsetkeeper prune --keep-within 7d --keep-undo-within 30d",
	},
	"restore": {
		"offsetkeeper restore latest -n                    # the plan; writes nothing",
		"offsetkeeper restore latest -c inventory-connector --connect-url http://connect:8083 --stop-connectors --resume",
		"offsetkeeper restore --at 2026-12-01T09:14:00Z -c inventory-connector -n",
	},
	"serve": {
		"offsetkeeper serve --store s3://bucket/prod       # the page on 127.0.0.1:9465",
		"offsetkeeper serve --store s3://bucket/prod --brokers kafka:9092 --web-config web.yml --listen :9465",
	},
	"show": {
		"offsetkeeper show latest",
		"offsetkeeper show latest -c inventory-connector -o connect-rest",
		"offsetkeeper show --at -15m -o json",
	},
	"snapshot": {
		"offsetkeeper snapshot --brokers kafka:9092 --store s3://bucket/prod",
		"offsetkeeper snapshot --pin --note 'before the migration'   # kept until unpin",
		"offsetkeeper snapshot --via connect --connect-url http://connect:8083   # REST access alone",
	},
	"unpin": {
		"offsetkeeper unpin 20261201T091400.123456Z-3fa9c1",
		"offsetkeeper list | grep pinned                   # what is pinned, then unpin the ones done with",
	},
	"verify": {
		"offsetkeeper verify                               # every snapshot and the journal",
		"offsetkeeper verify latest -o json",
	},
	"version": {
		"offsetkeeper version",
		"offsetkeeper --version",
	},
}

// helpLines is the most lines a command's --help prints before its flags;
// 'offsetkeeper man' has the whole description.
const helpLines = 50

// printDescription prints a command's description, cut after the last
// sentence that ends within max lines when it is longer.
func printDescription(w io.Writer, name, description string, max int) {
	lines := strings.Split(strings.TrimRight(description, "\n"), "\n")
	if len(lines) <= max {
		fmt.Fprintln(w, strings.Join(lines, "\n"))
		return
	}
	cut := max - 1 // one line for the pointer to the rest
	for cut > 1 && !strings.HasSuffix(strings.TrimSpace(lines[cut-1]), ".") {
		cut--
	}
	fmt.Fprintln(w, strings.Join(lines[:cut], "\n"))
	fmt.Fprintf(w, "(More: offsetkeeper man, under %s, and docs/.)\n", name)
}

// printExamples prints the examples of a command's --help.
func printExamples(w io.Writer, name string) {
	ex := examples[name]
	if len(ex) == 0 {
		return
	}
	fmt.Fprintln(w, "Examples:")
	for _, e := range ex {
		fmt.Fprintln(w, "  "+e)
	}
	fmt.Fprintln(w)
}
