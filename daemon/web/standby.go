package web

import "time"

// Standby is the board's line on the warm standby (daemon/standby.go,
// docs/standby.md): how far it is behind and what the last sync found.
type Standby struct {
	// Name names the standby (its brokers).
	Name string `json:"name"`
	// AppliedAt is the moment of the primary's state the standby holds;
	// zero before the first sync. LagSeconds is its age.
	AppliedAt  time.Time `json:"applied_at"`
	LagSeconds float64   `json:"lag_seconds"`
	// InStep, OutOfStep and Refused count the connectors of the last sync
	// (Refused: running on the standby, so nothing was written); Running
	// names those.
	InStep    int      `json:"in_step"`
	OutOfStep int      `json:"out_of_step"`
	Refused   int      `json:"refused"`
	Running   []string `json:"running,omitempty"`
	// Misses counts the sink partitions that could not be translated.
	Misses int `json:"translation_misses"`
	// Fenced is set once a failover fenced this primary.
	Fenced bool `json:"fenced"`
	// Error is the last sync's error, "" when it succeeded.
	Error string `json:"error,omitempty"`
}
