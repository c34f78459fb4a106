package store

// This file is the standby fences (restore/standby): one small object per
// primary cluster that a failover took the standby over from,
//
//	standby/fence-<cluster id>.json
//
// written by offsetkeeper failover and read by the daemon before every
// write to its standby: a daemon whose primary is fenced never writes to
// the standby again. A failover back (failback) removes the fence of the
// cluster it makes primary. Beside them,
//
//	standby/configs-<cluster id>.json
//
// records the connector configs (by hash) that cluster's daemon wrote to
// its standby, so that a restarted daemon still tells its own from an
// operator's. The store does not read what either says: restore/standby
// owns the formats. Listing, retention and Verify never see standby/.

import (
	"context"
	"fmt"
	"io"
	"net/url"

	"gocloud.dev/blob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

const (
	standbyPrefix = "standby/"
	// MaxStandbyFence bounds a fence object, in bytes.
	MaxStandbyFence = 1 << 20
)

func fenceKey(cluster string) string {
	return standbyPrefix + "fence-" + url.PathEscape(cluster) + ".json"
}

func configsKey(cluster string) string {
	return standbyPrefix + "configs-" + url.PathEscape(cluster) + ".json"
}

// PutConfigs stores data as the record of the connector configs the
// daemon of the primary cluster whose id is cluster wrote to its standby
// (restore/standby owns the format), replacing the one stored before.
func (h Fences) PutConfigs(ctx context.Context, cluster string, data []byte) error {
	s := h.s
	if len(data) > MaxStandbyFence {
		return fmt.Errorf("store the standby configs record of cluster %s: %d bytes: at most %d", cluster, len(data), MaxStandbyFence)
	}
	err := s.put(ctx, configsKey(cluster), &blob.WriterOptions{ContentType: "application/json"}, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, nil)
	if err != nil {
		return fmt.Errorf("store the standby configs record of cluster %s%s: %w", cluster, s.in(), err)
	}
	return nil
}

// GetConfigs reads the record PutConfigs stored for cluster; none stored
// is snapshot.ErrNotFound.
func (h Fences) GetConfigs(ctx context.Context, cluster string) ([]byte, error) {
	s := h.s
	data, err := s.readAll(ctx, configsKey(cluster))
	switch {
	case notFound(err):
		return nil, fmt.Errorf("read the standby configs record of cluster %s: %w", cluster, snapshot.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("read the standby configs record of cluster %s%s: %w", cluster, s.in(), err)
	case len(data) > MaxStandbyFence:
		return nil, fmt.Errorf("read the standby configs record of cluster %s%s: %w: larger than %d bytes", cluster, s.in(), snapshot.ErrCorrupt, MaxStandbyFence)
	}
	return data, nil
}

// Put stores data as the fence of the primary cluster whose
// id is cluster, replacing one stored before.
func (h Fences) Put(ctx context.Context, cluster string, data []byte) error {
	s := h.s
	if len(data) > MaxStandbyFence {
		return fmt.Errorf("store standby fence of cluster %s: %d bytes: at most %d", cluster, len(data), MaxStandbyFence)
	}
	err := s.put(ctx, fenceKey(cluster), &blob.WriterOptions{ContentType: "application/json"}, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, nil)
	if err != nil {
		return fmt.Errorf("store standby fence of cluster %s%s: %w", cluster, s.in(), err)
	}
	return nil
}

// Get reads the fence of the primary cluster whose id is
// cluster; none stored is snapshot.ErrNotFound.
func (h Fences) Get(ctx context.Context, cluster string) ([]byte, error) {
	s := h.s
	data, err := s.readAll(ctx, fenceKey(cluster))
	switch {
	case notFound(err):
		return nil, fmt.Errorf("read standby fence of cluster %s: %w", cluster, snapshot.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("read standby fence of cluster %s%s: %w", cluster, s.in(), err)
	case len(data) > MaxStandbyFence:
		return nil, fmt.Errorf("read standby fence of cluster %s%s: %w: larger than %d bytes", cluster, s.in(), snapshot.ErrCorrupt, MaxStandbyFence)
	}
	return data, nil
}

// Delete removes the fence of the primary cluster whose id is
// cluster; none stored is no error.
func (h Fences) Delete(ctx context.Context, cluster string) error {
	s := h.s
	if err := s.deleteKey(ctx, fenceKey(cluster)); err != nil && !notFound(err) {
		return fmt.Errorf("delete standby fence of cluster %s%s: %w", cluster, s.in(), err)
	}
	return nil
}
