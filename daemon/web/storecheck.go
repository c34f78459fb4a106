package web

import "time"

// StoreCheck is the board's line on the daemon's last check of every
// stored snapshot and journal epoch (docs/daemon.md#store-checks).
type StoreCheck struct {
	At        time.Time `json:"at"`
	Snapshots int       `json:"snapshots"`
	Epochs    int       `json:"journal_epochs"`
	// Failed names what did not verify: "snapshot ID", "journal epoch ID".
	Failed []string `json:"failed,omitempty"`
	// Command is the offsetkeeper verify command that says why.
	Command string `json:"command,omitempty"`
}

// storeCheckNote is the board's note when the last check found damage.
func storeCheckNote(c *StoreCheck) string {
	if c == nil || len(c.Failed) == 0 {
		return ""
	}
	what := c.Failed[0]
	if len(c.Failed) > 1 {
		what += " and " + itoa(int64(len(c.Failed)-1)) + " more"
	}
	return "The store check " + c.At.UTC().Format(time.RFC3339) + " found stored objects that do not verify (" + what +
		"): a restore from them refuses. " + c.Command + " says why; docs/runbook.md#offsetkeeperstoredamaged says what to do."
}
