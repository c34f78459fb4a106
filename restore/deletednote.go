package restore

// This file is the plan's note about connectors the state restored holds
// a config for but that have none here: deleted since (DELETE
// /connectors/NAME, a connector-deleted event). A restore writes their
// offsets, where a connector created again under the same name finds
// them, but it brings no connector back unless --create-connectors
// creates it; the undo of a connector-deleted event without a Connect URL
// is such a restore, and it used to end "verified" with the connector
// still gone, the plan silent about it.

import (
	"fmt"
	"slices"
	"strings"
)

// noteDeleted adds to plan's notes the connectors in it that have no
// config here while the state restored has one, unless this run creates
// them (creations) or Connect still runs them from memory (memOnly, which
// has its own warning).
func (r *run) noteDeleted(plan *Plan, creations []Creation) {
	var names []string
	for _, cp := range plan.Connectors {
		if cp.Live.HasConfig || slices.Contains(r.memOnly, cp.Name) {
			continue
		}
		if sc, ok := r.req.Snapshot.Connector(cp.Name); !ok || !sc.HasConfig {
			continue
		}
		if slices.ContainsFunc(creations, func(c Creation) bool {
			return c.Connector == cp.Name && (c.Action == CreateCreate || c.Action == CreateCreated)
		}) {
			continue
		}
		names = append(names, cp.Name)
	}
	if len(names) == 0 {
		return
	}
	shown := names
	if len(shown) > 8 {
		shown = append(shown[:8:8], fmt.Sprintf("and %d more", len(names)-8))
	}
	them := pick(len(names) == 1, "it", "them")
	how := "add --create-connectors to this restore (with --resume to start " + them + " once verified)"
	if r.Connect == nil {
		how = "add --connect-url with the Connect REST URL, --create-connectors and --resume to this restore"
	}
	note := fmt.Sprintf("%s no config here, but the state restored has %s: deleted since. "+
		"The restore writes %s offsets, never a config: no connector reads them until %s created again under %s name; "+
		"to create %s with the config the state restored holds, STOPPED, before %s offsets are written, %s",
		pick(len(names) == 1, "connector "+names[0]+" has", plural(len(names), "connector", "connectors")+" ("+strings.Join(shown, ", ")+") have"),
		pick(len(names) == 1, "one", "theirs"), pick(len(names) == 1, "its", "their"), pick(len(names) == 1, "it is", "they are"),
		pick(len(names) == 1, "that", "the same"), them, pick(len(names) == 1, "its", "their"), how)
	if !slices.Contains(plan.Notes, note) {
		plan.Notes = append(plan.Notes, note)
	}
}
