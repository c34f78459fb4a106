package standby

// This file keeps the record of which connector configs the daemon wrote
// to the standby's Connect (or found equal there): a config on the
// standby that is not the one recorded was changed there by an operator
// and is never overwritten. With Config.Store the record is kept in the
// store (standby/configs-<primary cluster id>.json, beside the fences),
// so that a daemon restarted, or another replica leading, still knows its
// own configs; it holds a SHA-256 of each config, never the config (a
// config may hold secrets).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// configRecordVersion is the version of the record's format written.
const configRecordVersion = 1

// configRecord is the stored record.
type configRecord struct {
	Version int `json:"version"`
	// Primary and Standby are the cluster ids of the primary and of the
	// standby written to: a record of another standby says nothing here.
	Primary string `json:"primary_cluster_id"`
	Standby string `json:"standby_cluster_id"`
	// Configs are the configs written, by connector: configHash.
	Configs map[string]string `json:"configs"`
}

// configHash is the SHA-256 of config, its keys sorted (encoding/json
// sorts a map's keys).
func configHash(config map[string]string) string {
	b, _ := json.Marshal(config) // a map of strings always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// record notes that the standby has want as connector name's config,
// written or found equal by this daemon.
func (s *Syncer) record(name string, want map[string]string) {
	if h := configHash(want); s.wrote[name] != h {
		s.wrote[name] = h
		s.dirty = true
	}
}

// loadWrote reads the record of primary's daemon from the store, once per
// Syncer (again after Forget); without Config.Store the record is this
// Syncer's memory only.
func (s *Syncer) loadWrote(ctx context.Context, primary string) error {
	if s.cfg.Store == nil || s.loaded == primary {
		return nil
	}
	if s.standbyID == "" {
		md, err := kadm.NewClient(s.cfg.Client).BrokerMetadata(ctx)
		if err != nil {
			return fmt.Errorf("read the standby's cluster id: %w; configs are left as they are", err)
		}
		s.standbyID = md.Cluster
	}
	s.wrote, s.dirty = map[string]string{}, false
	data, err := s.cfg.Store.Fences().GetConfigs(ctx, primary)
	switch {
	case errors.Is(err, snapshot.ErrNotFound):
	case err != nil:
		return fmt.Errorf("%w; configs are left as they are", err)
	default:
		var r configRecord
		if err := json.Unmarshal(data, &r); err != nil || r.Version < 1 || r.Version > configRecordVersion {
			// Not readable: a config on the standby counts as nobody's
			// (left alone) until written again.
			s.cfg.Log.Warn("the record of the configs written to the standby cannot be read: configs that differ are left alone",
				"primary", primary, "version", r.Version, "error", err)
			break
		}
		if r.Standby == s.standbyID && r.Configs != nil {
			s.wrote = r.Configs
		}
	}
	s.loaded = primary
	return nil
}

// saveWrote stores the record when it changed since loaded or saved.
func (s *Syncer) saveWrote(ctx context.Context) error {
	if s.cfg.Store == nil || !s.dirty || s.cfg.DryRun {
		return nil
	}
	data, err := json.Marshal(configRecord{Version: configRecordVersion, Primary: s.loaded, Standby: s.standbyID, Configs: maps.Clone(s.wrote)})
	if err != nil {
		return fmt.Errorf("encode the record of the configs written to the standby: %w", err)
	}
	if err := s.cfg.Store.Fences().PutConfigs(ctx, s.loaded, data); err != nil {
		return fmt.Errorf("%w; the next sync stores it again", err)
	}
	s.dirty = false
	return nil
}
