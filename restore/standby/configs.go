package standby

// This file keeps the connector configs of the standby's Connect equal to
// the primary's: a connector the standby lacks is created STOPPED
// (KIP-980, POST /connectors with "initial_state", Kafka 3.7+); one whose
// config the primary changed is updated (PUT /connectors/{name}/config,
// which keeps its target state); one the standby runs, or whose config an
// operator changed there, is never touched, only reported.

import (
	"context"
	"maps"
	"slices"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Actions of a ConfigAction.
const (
	ConfigCreated  = "created"   // created STOPPED with the primary's config
	ConfigCreate   = "create"    // dry run: would be created STOPPED
	ConfigUpdate   = "update"    // dry run: would be updated
	ConfigUpdated  = "updated"   // the primary's config changed: written
	ConfigInStep   = "in-step"   // the standby has the primary's config
	ConfigDiffers  = "differs"   // the standby has another config, not written by this daemon: left alone
	ConfigRunning  = "running"   // the standby runs it: left alone
	ConfigNoConfig = "no-config" // the primary's state holds no config for it
	ConfigFailed   = "failed"    // a request failed; the next sync tries again
)

// ConfigAction is what a sync did with one connector's config.
type ConfigAction struct {
	Connector string `json:"connector"`
	Action    string `json:"action"`
	// Differs names the config keys that differ, for ConfigDiffers and
	// ConfigUpdated; Error says why, for ConfigFailed.
	Differs []string `json:"differs,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// syncConfigs compares the configs of snap's connectors in scope with
// those of the standby's Connect and brings them in step where that is
// safe. A request that fails is a ConfigFailed action, not an error: the
// offsets are kept in step regardless.
func (s *Syncer) syncConfigs(ctx context.Context, snap *snapshot.Snapshot) []ConfigAction {
	key, ok := s.configsKey(ctx, snap)
	if ok && key == s.configs.key {
		return slices.Clone(s.configs.actions)
	}
	out := s.compareConfigs(ctx, snap)
	s.configs.key, s.configs.actions = "", nil
	if ok && !s.cfg.DryRun && !slices.ContainsFunc(out, func(a ConfigAction) bool {
		return a.Action != ConfigInStep && a.Action != ConfigDiffers && a.Action != ConfigNoConfig
	}) {
		s.configs.key, s.configs.actions = key, out
	}
	return out
}

// compareConfigs is syncConfigs, with the standby's Connect read.
func (s *Syncer) compareConfigs(ctx context.Context, snap *snapshot.Snapshot) (out []ConfigAction) {
	if err := s.loadWrote(ctx, snap.ClusterID); err != nil {
		return []ConfigAction{{Action: ConfigFailed, Error: err.Error()}}
	}
	defer func() {
		if err := s.saveWrote(ctx); err != nil {
			out = append(out, ConfigAction{Action: ConfigFailed, Error: err.Error()})
		}
	}()
	all, err := s.cfg.Connect.Connectors(ctx)
	if err != nil {
		return []ConfigAction{{Action: ConfigFailed, Error: "read the standby's connectors: " + err.Error()}}
	}
	checked := false
	for _, c := range snap.Connectors {
		if len(s.cfg.Options.Connectors) > 0 && !slices.Contains(s.cfg.Options.Connectors, c.Name) {
			continue
		}
		if !c.HasConfig {
			continue // deleted on the primary: the standby's is left as it is
		}
		a := ConfigAction{Connector: c.Name}
		want := configFor(c.Name, c.Config)
		e, exists := all[c.Name]
		switch {
		case c.Config == nil:
			a.Action = ConfigNoConfig
		case !exists:
			if !checked {
				if _, err := s.cfg.Connect.RequireInitialState(ctx); err != nil {
					a.Action, a.Error = ConfigFailed, err.Error()
					break
				}
				checked = true
			}
			if s.cfg.DryRun {
				a.Action = ConfigCreate
				break
			}
			if _, err := s.cfg.Connect.CreateConnector(ctx, c.Name, want, "STOPPED"); err != nil {
				a.Action, a.Error = ConfigFailed, "create it STOPPED: "+err.Error()
				break
			}
			a.Action = ConfigCreated
			s.record(c.Name, want)
		case e.Info == nil || e.Info.Config == nil:
			a.Action, a.Error = ConfigFailed, "the standby's Connect shows no config for it"
		default:
			a = s.compareConfig(ctx, c.Name, want, e)
		}
		out = append(out, a)
	}
	return out
}

// compareConfig decides about a connector the standby's Connect has.
func (s *Syncer) compareConfig(ctx context.Context, name string, want map[string]string, e connectrest.Expanded) ConfigAction {
	have := e.Info.Config
	a := ConfigAction{Connector: name, Differs: differingKeys(want, have)}
	running := e.Status != nil && e.Status.Connector.State != connectrest.StateStopped
	switch {
	case running:
		a.Action = ConfigRunning
		return a
	case len(a.Differs) == 0:
		s.record(name, want)
		a.Action = ConfigInStep
		return a
	}
	last, ours := s.wrote[name]
	if !ours || last != configHash(have) {
		// Not what this syncer last wrote (or it wrote nothing since it
		// started): an operator's, never overwritten.
		a.Action = ConfigDiffers
		return a
	}
	if s.cfg.DryRun {
		a.Action = ConfigUpdate
		return a
	}
	if err := s.cfg.Connect.PutConfig(ctx, name, want); err != nil {
		a.Action, a.Error = ConfigFailed, "update its config: "+err.Error()
		return a
	}
	s.record(name, want)
	a.Action = ConfigUpdated
	return a
}

// configFor is the config connector name is created with: the primary's,
// with its name.
func configFor(name string, config map[string]string) map[string]string {
	out := maps.Clone(config)
	if out == nil {
		out = map[string]string{}
	}
	out["name"] = name
	return out
}

// differingKeys are the keys whose values differ between want and have,
// sorted.
func differingKeys(want, have map[string]string) []string {
	var out []string
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			out = append(out, k)
		}
	}
	for k := range have {
		if _, ok := want[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
