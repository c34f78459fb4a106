package main

import (
	"context"
	"flag"
	"fmt"
)

func init() {
	register(commandInfo{
		name:    "verify",
		summary: "re-read snapshots and check their checksums and decoding (all when no ID is given)",
		usage:   "[ID|latest]...",
		noKafka: true,
		new:     func(e *env) command { return &verifyCmd{env: e} },
	})
}

type verifyCmd struct{ *env }

func (c *verifyCmd) Flags(fs *flag.FlagSet) {}

func (c *verifyCmd) Run(ctx context.Context, args []string) error {
	store, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	refs := args
	if len(refs) == 0 {
		infos, err := store.List(ctx)
		if err != nil {
			return err
		}
		for _, i := range infos {
			refs = append(refs, i.ID)
		}
		if len(refs) == 0 {
			fmt.Fprintln(c.stdout, "no snapshots in the store")
			return nil
		}
	}
	bad := 0
	for _, ref := range refs {
		info, err := store.Verify(ctx, ref)
		if err != nil {
			bad++
			fmt.Fprintf(c.stdout, "FAIL %s: %v\n", ref, err)
			c.log.Error("verify snapshot", "snapshot_id", ref, "err", err)
			continue
		}
		note := ""
		if info.Encrypted && c.g.encryptKey == "" {
			note = " (encrypted; checksum ok, contents not checked without --encrypt-key)"
		}
		fmt.Fprintf(c.stdout, "ok   %s sha256:%s%s\n", info.ID, info.SHA256, note)
	}
	if bad > 0 {
		return fmt.Errorf("verify: %d of %d snapshots failed; do not restore them", bad, len(refs))
	}
	return nil
}
