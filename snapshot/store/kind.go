package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// This file finds the kind and scope of snapshots stored before they were
// written as object metadata (see metaKind), from the head of the document.

// headKeys are the document fields that come before "scope" when it is
// there; any other field means the document has no scope.
var headKeys = map[string]bool{"version": true, "id": true, "created_at": true, "program_version": true, "cluster_id": true, "reason": true}

// errSealedHead: the document is encrypted and the Store has no Keeper, so
// its head cannot be read.
var errSealedHead = errors.New("document is encrypted")

// withScope completes info, read from object metadata without a kind or
// scope, with the scope the document records. An encrypted document is
// read whole with the Store's Keeper. Without one, or when the document is
// damaged (Verify says how), info is returned with the kind its reason
// says (undo, else full), the best that can be known: List still lists it.
func (s *Store) withScope(ctx context.Context, info snapshot.Info) (snapshot.Info, error) {
	scope, err := s.headScope(ctx, info.ID)
	if errors.Is(err, errSealedHead) && s.keeper != nil {
		var snap *snapshot.Snapshot
		if snap, _, err = s.get(ctx, info.ID); err == nil {
			scope = snap.Scope
		}
	}
	if errors.Is(err, errSealedHead) || errors.Is(err, snapshot.ErrCorrupt) || errors.Is(err, snapshot.ErrChecksum) || errors.Is(err, snapshot.ErrDecrypt) {
		info.Kind = snapshot.KindOf(info.Reason, nil)
		return info, nil
	}
	if err != nil {
		return snapshot.Info{}, err
	}
	info.Scope = scope
	info.Kind = snapshot.KindOf(info.Reason, scope)
	return info, nil
}

// headScope reads the "scope" of the snapshot with ID id from the start of
// its document, decompressing no further than the first field after it.
func (s *Store) headScope(ctx context.Context, id string) ([]string, error) {
	r, err := s.newReader(ctx, objectKey(id))
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	defer r.Close()
	br := bufio.NewReader(io.LimitReader(r, snapshot.MaxDocumentSize))
	line, err := br.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w: no header line", id, snapshot.ErrCorrupt)
	}
	h, err := parseHeader(line)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w: decode header: %v", id, snapshot.ErrCorrupt, err)
	}
	if h.Encryption != "" && h.Encryption != "none" {
		return nil, errSealedHead
	}
	dec, err := zstd.NewReader(br, zstd.WithDecoderMaxMemory(snapshot.MaxDocumentSize), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("create zstd decoder: %w", err)
	}
	defer dec.Close()
	scope, err := scopeField(json.NewDecoder(dec))
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w: read document head: %v", id, snapshot.ErrCorrupt, err)
	}
	return scope, nil
}

// scopeField reads a document's fields up to its scope, which it returns,
// or up to the first field that comes after the scope (nil then).
func scopeField(d *json.Decoder) ([]string, error) {
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object (%v)", err)
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		if key == "scope" {
			var scope []string
			err := d.Decode(&scope)
			return scope, err
		}
		if !headKeys[key] {
			return nil, nil
		}
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
