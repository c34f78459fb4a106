package restore

// This file is the plan's note about a connector whose config here is not
// the snapshot's (re-created with another config, say): the restore
// writes offsets, never a config, so every plan names the keys that
// differ, and "nothing to do" is never the whole story (issue 40).

import (
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// noteConfig notes connector name when its config here (lc) differs from
// the snapshot's (sc).
func (p *Plan) noteConfig(name string, sc, lc snapshot.Connector, inSnap bool) {
	if !inSnap || !sc.HasConfig || !lc.HasConfig || sc.Config == nil || lc.Config == nil {
		return
	}
	if sc.ConfigHash != "" && sc.ConfigHash == lc.ConfigHash {
		return
	}
	keys := differingKeys(configFor(name, sc.Config), lc.Config)
	if len(keys) == 0 {
		return
	}
	shown := keys
	if len(shown) > 8 {
		shown = append(shown[:8:8], fmt.Sprintf("and %d more", len(keys)-8))
	}
	p.Notes = append(p.Notes, fmt.Sprintf("connector %s has another config here than in the snapshot (%s differ): the restore writes its offsets, never its config; check that they fit the config it runs with",
		name, strings.Join(shown, ", ")))
}
