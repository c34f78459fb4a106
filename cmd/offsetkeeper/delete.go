package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// deleteCommand is the delete entry of the command table (main.go).
var deleteCommand = commandInfo{
	name:    "delete",
	summary: "delete stored snapshots (or damaged objects named like one) by their full ID",
	usage: `ID... [--output text|json]

ID is the full ID as list shows it (no prefix, no latest: a deletion is
never a guess). A pinned snapshot is refused (exit 3, nothing removed):
unpin it first. The journal of an epoch whose base snapshot is deleted goes
with it, as after prune. A damaged object (list shows its KIND as damaged)
is removed like any snapshot.`,
	noKafka: true,
	new:     func(e *env) command { return &deleteCmd{env: e} },
}

type deleteCmd struct {
	*env
	output string
}

// deleted is one ID of delete --output json.
type deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
	Error   string `json:"error,omitempty"`
}

func (c *deleteCmd) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.output, "output", "text", "output format: text or json")
}

func (c *deleteCmd) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("delete: name at least one snapshot by its full ID ('offsetkeeper list' shows them)")
	}
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	for _, id := range args {
		if _, err := snapshot.ParseID(id); err != nil {
			return usagef("delete: %v; give the full ID as 'offsetkeeper list' shows it", err)
		}
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, id := range args {
		if pinned, err := st.Pins().Pinned(ctx, id); err != nil {
			return err
		} else if pinned {
			return fmt.Errorf("delete %s: %w: the snapshot is pinned; nothing removed: run 'offsetkeeper unpin %s' first if it is to go", id, restore.ErrRefused, id)
		}
	}
	var (
		res  []deleted
		errs []error
	)
	for _, id := range args {
		d := deleted{ID: id}
		if err := st.Snapshots().Delete(ctx, id); err != nil {
			d.Error = err.Error()
			errs = append(errs, err)
		} else {
			d.Deleted = true
			c.log.Info("snapshot deleted", "snapshot_id", id)
		}
		res = append(res, d)
	}
	epochs, err := st.Journal().Prune(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, id := range epochs {
		c.log.Info("journal removed with its base snapshot", "epoch", id)
	}
	if c.output == "json" {
		if err := writeJSON(c.stdout, res); err != nil {
			return err
		}
	} else {
		printDeleted(c.stdout, res)
	}
	if len(errs) > 0 {
		return fmt.Errorf("delete %d of %s: %w", len(errs), plural(len(args), "snapshot", "snapshots"), errors.Join(errs...))
	}
	return nil
}

func printDeleted(w io.Writer, res []deleted) {
	for _, d := range res {
		if d.Deleted {
			fmt.Fprintf(w, "deleted %s\n", d.ID)
		}
	}
}

// printDamaged prints, after list's table, the objects named like a
// snapshot that could not be read, why, and how to remove them.
func printDamaged(w io.Writer, infos []snapshot.Info) {
	first := true
	for _, i := range infos {
		if i.Damaged == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nDamaged (named like a snapshot, but unreadable; never restored, 'offsetkeeper delete ID' removes it):")
			first = false
		}
		fmt.Fprintln(w, wrap(fmt.Sprintf("  %s  %s", i.ID, i.Damaged), lineWidth, "    "))
	}
}
