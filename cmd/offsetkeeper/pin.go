package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// pinCommand and unpinCommand are the pin and unpin entries of the
// command table (main.go).
var pinCommand = commandInfo{
	name:    "pin",
	summary: "pin snapshots: the daemon's retention and prune never remove a pinned snapshot",
	usage: `ID... [--note TEXT] [--output text|json]

ID is a snapshot ID, a unique prefix of one, or latest. A pin is a small
object beside the snapshot (pins/<ID>.json in the store; the snapshot itself
is never rewritten); pinning again replaces the note. list shows the pin and
its note. A snapshot that is not stored cannot be pinned (exit 1, nothing
written).`,
	noKafka: true,
	new:     func(e *env) command { return &pinCmd{env: e} },
}

var unpinCommand = commandInfo{
	name:    "unpin",
	summary: "remove the pin of snapshots: retention then judges them by its rules again",
	usage: `ID... [--output text|json]

ID is a snapshot ID, a unique prefix of one, or latest; the exact ID of a
pin whose snapshot was removed by hand is accepted too. A snapshot without a
pin is an error (exit 1); the others named are still unpinned.`,
	noKafka: true,
	new:     func(e *env) command { return &pinCmd{env: e, unpin: true} },
}

type pinCmd struct {
	*env
	unpin  bool
	note   string
	output string
}

// pinResult is one snapshot of pin or unpin --output json.
type pinResult struct {
	ID     string        `json:"id"`
	Pinned bool          `json:"pinned"`
	Pin    *snapshot.Pin `json:"pin,omitempty"`
	Error  string        `json:"error,omitempty"`
}

func (c *pinCmd) Flags(fs *flag.FlagSet) {
	if !c.unpin {
		fs.StringVar(&c.note, "note", "", "why the snapshot is pinned (an incident, a migration), shown by list")
	}
	fs.StringVar(&c.output, "output", "text", "output format: text or json")
}

func (c *pinCmd) Run(ctx context.Context, args []string) error {
	verb := "pin"
	if c.unpin {
		verb = "unpin"
	}
	if len(args) == 0 {
		return usagef("%s: name at least one snapshot (an ID, a unique prefix or latest)", verb)
	}
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var (
		results []pinResult
		errs    []error
	)
	for _, ref := range args {
		r, err := c.one(ctx, st, ref)
		if err != nil {
			errs = append(errs, err)
			r = pinResult{ID: ref, Error: err.Error()}
		}
		results = append(results, r)
		if err == nil && c.output == "text" {
			if c.unpin {
				fmt.Fprintf(c.stdout, "unpinned %s\n", r.ID)
			} else {
				fmt.Fprintf(c.stdout, "pinned %s%s\n", r.ID, noteText(r.Pin.Note))
			}
		}
		if err == nil {
			c.log.Info("snapshot "+verb+"ned", "snapshot_id", r.ID, "note", c.note)
		}
	}
	if c.output == "json" {
		if err := writeJSON(c.stdout, results); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func (c *pinCmd) one(ctx context.Context, st *store.Store, ref string) (pinResult, error) {
	if c.unpin {
		id, err := st.Pins().Unpin(ctx, ref)
		return pinResult{ID: id}, err
	}
	id, p, err := st.Pins().Pin(ctx, ref, c.note, time.Now())
	return pinResult{ID: id, Pinned: err == nil, Pin: &p}, err
}

func noteText(note string) string {
	if note == "" {
		return ""
	}
	return ": " + note
}
