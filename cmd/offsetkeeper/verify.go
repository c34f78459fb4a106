package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// verifyCommand is the verify entry of the command table (main.go).
var verifyCommand = commandInfo{
	name:    "verify",
	summary: "re-read snapshots and check their checksums and decoding (all, and the journal's segments and their chain, when no ID is given)",
	usage:   "[ID|latest]... [--output text|json]",
	noKafka: true,
	new:     func(e *env) command { return &verifyCmd{env: e} },
}

type verifyCmd struct {
	*env
	output string
	// runByDaemon: the daemon runs this verify as its child process
	// (daemon_verify.go); a hidden flag. The daemon reports restores that
	// did not finish itself, and may not act on them from a child.
	runByDaemon bool
}

func (c *verifyCmd) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.output, "output", "text", "output format: text or json (see docs/json-output.md)")
	fs.BoolVar(&c.runByDaemon, "run-by-daemon", false, "the daemon runs this verify as its child process: restores that did not finish are left to the daemon")
}

// verified is one snapshot's result in verify --output json.
type verified struct {
	ID     string `json:"id"`
	OK     bool   `json:"ok"`
	SHA256 string `json:"sha256,omitempty"`
	// Encrypted is set for an encrypted snapshot; ContentsChecked is false
	// when it was verified without its key (header and checksum only).
	Encrypted       bool   `json:"encrypted,omitempty"`
	ContentsChecked bool   `json:"contents_checked"`
	Error           string `json:"error,omitempty"`
}

// verifyResult is verify --output json.
type verifyResult struct {
	Checked   int        `json:"checked"`
	Failed    int        `json:"failed"`
	Snapshots []verified `json:"snapshots"`
	// Journal is every journal epoch checked (verify without IDs).
	Journal []verifiedEpoch `json:"journal,omitempty"`
}

func (c *verifyCmd) Run(ctx context.Context, args []string) error {
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ids, err := c.resolve(ctx, st, args)
	if err != nil {
		return err
	}
	res := verifyResult{Checked: len(ids), Snapshots: []verified{}}
	for _, id := range ids {
		v := verified{ID: id}
		info, err := st.Snapshots().Verify(ctx, id)
		if err != nil {
			res.Failed++
			v.Error = err.Error()
			if !c.runByDaemon { // the daemon logs it, with what to do
				c.log.Error("verify snapshot", "snapshot_id", id, "err", err)
			}
			if c.output == "text" {
				fmt.Fprintf(c.stdout, "FAIL %s: %v\n", id, err)
			}
			res.Snapshots = append(res.Snapshots, v)
			continue
		}
		v.OK, v.SHA256, v.Encrypted = true, info.SHA256, info.Encrypted
		v.ContentsChecked = !info.Encrypted || c.g.encryptKey != ""
		res.Snapshots = append(res.Snapshots, v)
		if c.output == "text" {
			note := ""
			if !v.ContentsChecked {
				note = " (encrypted; checksum ok, contents not checked without --encrypt-key)"
			}
			fmt.Fprintf(c.stdout, "ok   %s sha256:%s%s\n", info.ID, info.SHA256, note)
		}
	}
	badEpochs := 0
	if len(args) == 0 {
		if res.Journal, badEpochs, err = c.journal(ctx, st); err != nil {
			return err
		}
	}
	unsettled := 0
	if !c.runByDaemon {
		if unsettled, err = c.restores(ctx, st); err != nil {
			return err
		}
	}
	if c.output == "json" {
		if err := writeJSON(c.stdout, res); err != nil {
			return err
		}
	} else if len(ids) == 0 {
		fmt.Fprintln(c.stdout, "no snapshots in the store")
	}
	switch {
	case unsettled > 0:
		return fmt.Errorf("verify: %s did not finish and may have left what it wrote visible to workers (see above)", plural(unsettled, "restore", "restores"))
	case badEpochs > 0 && res.Failed > 0:
		return fmt.Errorf("verify: %d of %s and %s failed; do not restore them: a failed snapshot restores nothing, a broken journal epoch only the moments before its first bad segment (list shows what each epoch restores)",
			res.Failed, plural(len(ids), "snapshot", "snapshots"), plural(badEpochs, "journal epoch", "journal epochs"))
	case badEpochs > 0:
		// Every snapshot is whole: only moments past a hole are lost.
		return fmt.Errorf("verify: %s failed, every snapshot is whole: restore --at still restores a broken epoch's moments before its first bad segment (named above), and the snapshots by ID; list shows what each epoch restores",
			plural(badEpochs, "journal epoch", "journal epochs"))
	case res.Failed > 0:
		return fmt.Errorf("verify: %d of %s failed; do not restore them", res.Failed, plural(len(ids), "snapshot", "snapshots"))
	}
	return nil
}

// resolve turns the references into IDs, every stored one when there are
// none. A reference that matches nothing is an error saying so, not a
// failed verification; an ambiguous prefix is a usage error listing the
// matches.
func (c *verifyCmd) resolve(ctx context.Context, st *store.Store, refs []string) ([]string, error) {
	if len(refs) == 0 {
		infos, err := st.Snapshots().List(ctx)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(infos))
		for _, i := range infos {
			ids = append(ids, i.ID)
		}
		return ids, nil
	}
	ids := make([]string, 0, len(refs))
	for _, ref := range refs {
		id, err := st.Snapshots().Resolve(ctx, ref)
		switch {
		case errors.Is(err, snapshot.ErrAmbiguous):
			return nil, usageError{err.Error()}
		case errors.Is(err, snapshot.ErrNotFound):
			return nil, fmt.Errorf("verify %s: %w; 'offsetkeeper list' shows the stored IDs", ref, err)
		case err != nil:
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}
