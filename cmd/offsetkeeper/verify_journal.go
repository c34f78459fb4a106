package main

import (
	"context"
	"fmt"

	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// verifiedEpoch is one journal epoch's result in verify --output json.
type verifiedEpoch struct {
	Epoch    string `json:"epoch"`
	OK       bool   `json:"ok"`
	Segments int    `json:"segments"`
	// Encrypted counts the segments checked without their key: header,
	// checksum and chain only.
	Encrypted int    `json:"encrypted,omitempty"`
	Error     string `json:"error,omitempty"`
}

// journal verifies every journal segment and each epoch's chain, printing
// a line per epoch with --output text, and returns the results and how
// many epochs failed.
func (c *verifyCmd) journal(ctx context.Context, st *store.Store) ([]verifiedEpoch, int, error) {
	checks, err := st.Journal().Verify(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []verifiedEpoch
	bad := 0
	for _, ch := range checks {
		v := verifiedEpoch{Epoch: ch.Epoch, OK: ch.Err == nil, Segments: ch.Segments, Encrypted: ch.Encrypted}
		out = append(out, v)
		if ch.Err != nil {
			bad++
			out[len(out)-1].Error = ch.Err.Error()
			if !c.runByDaemon {
				c.log.Error("verify journal", "epoch", ch.Epoch, "err", ch.Err)
			}
			if c.output == "text" {
				fmt.Fprintf(c.stdout, "FAIL journal epoch %s: %v\n", ch.Epoch, ch.Err)
			}
			continue
		}
		if c.output == "text" {
			note := ""
			if ch.Encrypted > 0 {
				note = fmt.Sprintf(" (%d encrypted: checksum and chain ok, contents not checked without --encrypt-key)", ch.Encrypted)
			}
			fmt.Fprintf(c.stdout, "ok   journal epoch %s: %s, chain whole%s\n", ch.Epoch, plural(ch.Segments, "segment", "segments"), note)
		}
	}
	return out, bad, nil
}
