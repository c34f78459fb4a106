package store

// This file is the one envelope of every object the store writes, snapshots
// and journal segments alike: a JSON header line, then the body.
//
//	{"format":...,"version":N,...,"compression":"zstd","encryption":...,"key_id":...,"sha256":"<hex>","body_size":N}\n
//	body
//
// The header, one type for both kinds (objectHeader, read by cutHeader and
// parseHeader), names the format and its version, then what the kind of
// object adds (a segment's epoch, sequence numbers and digests,
// segmentFields), then the fields every object shares: compression, encryption and key_id when the
// body is encrypted, and the SHA-256 and size of the body as stored, so
// that a store can be checked for damage without the key. An encrypted
// body is sealed by sealBody and opened by Keeper.open, the one encryption
// path (the layout is in encrypt.go); its additional data names the
// object, so that a body moved under another name fails to authenticate:
// snapshotAAD for a snapshot, segmentAAD for a segment.
//
// Objects written before this file keep their bytes (the header lines of
// both kinds are those their two header types of before wrote, checked by
// TestOneEnvelopeWrites): the snapshot
// envelopes of the first release (encryptionSecrets, with the constant
// sealAAD) still read, and testdata holds a fixture of every envelope ever
// written (v1.snap, v1-encrypted.snap, v1-encrypted-bound.snap,
// journal-v1, journal-v1-encrypted).

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
)

// objectHeader is the header line of every object the store writes, a
// snapshot's (Format objectFormat) or a journal segment's (segmentFormat).
// Readers ignore fields they do not know, but refuse values they do not
// know in the fields that say how to read the body (format, version,
// compression, encryption). Its JSON is, field for field and byte for
// byte, the header each kind was first written with: a snapshot's
// {"format","version","compression",...,"body_size"}, a segment's with
// its own fields after "version" and "interval_ms" last.
type objectHeader struct {
	// Format names the kind of object: objectFormat or segmentFormat.
	Format string `json:"format"`
	// Version is the format version of the kind: a snapshot's
	// snapshot.MinVersion..Version, a segment's journal.MinJournalVersion..
	// JournalVersion.
	Version *int `json:"version"`
	// segmentFields are what a segment's header adds; nil for a snapshot
	// (parseHeader sets them for a segmentFormat header only).
	*segmentFields
	// Compression is how the body is compressed: compressionZstd.
	Compression string `json:"compression"`
	// Encryption is how the body is encrypted: empty (or "none") for not
	// at all, or encryptionBound (encryptionSecrets for the first snapshot
	// envelopes; see encrypt.go).
	Encryption string `json:"encryption,omitempty"`
	// KeyID is the ID of the key of an encrypted body (Keeper.ID).
	KeyID string `json:"key_id,omitempty"`
	// SHA256 is the lowercase hex SHA-256 of the body as stored.
	SHA256 string `json:"sha256"`
	// BodySize is the length of the body as stored, in bytes.
	BodySize *int64 `json:"body_size"`
	// IntervalMs is the interval a segment's journal flushes at, in
	// milliseconds (0, left out: not recorded); never set for a snapshot.
	IntervalMs int64 `json:"interval_ms,omitempty"`
}

// segmentFields are what a journal segment's header says of it (see
// journal.Segment), between "version" and "compression".
type segmentFields struct {
	Epoch       string `json:"epoch"`
	Level       int    `json:"level"`
	FirstSeq    uint64 `json:"first_seq"`
	LastSeq     uint64 `json:"last_seq"`
	FirstTimeMs int64  `json:"first_time_ms"`
	LastTimeMs  int64  `json:"last_time_ms"`
	PrevDigest  string `json:"prev_digest"`
	LastDigest  string `json:"last_digest"`
	Entries     int    `json:"entries"`
}

// cutHeader splits a stored object into its header line (without the
// '\n') and its body; false when no line ends in the first maxHeaderSize
// bytes.
func cutHeader(data []byte) (line, body []byte, ok bool) {
	nl := bytes.IndexByte(data[:min(len(data), maxHeaderSize)], '\n')
	if nl < 0 {
		return nil, nil, false
	}
	return data[:nl], data[nl+1:], true
}

// parseHeader decodes a header line, a snapshot's or a segment's. The
// caller checks Format, and says in its own words what is wrong.
func parseHeader(line []byte) (objectHeader, error) {
	h := objectHeader{segmentFields: new(segmentFields)}
	if err := json.Unmarshal(line, &h); err != nil {
		return objectHeader{}, err
	}
	if h.Format != segmentFormat {
		h.segmentFields = nil
	}
	return h, nil
}

// version is the header's version, 0 when it has none.
func (h objectHeader) version() int {
	if h.Version == nil {
		return 0
	}
	return *h.Version
}

// bodySize is the header's body_size, 0 when it has none.
func (h objectHeader) bodySize() int64 {
	if h.BodySize == nil {
		return 0
	}
	return *h.BodySize
}

// sealedBody is a body as the envelope stores it.
type sealedBody struct {
	// data is the body as stored: encrypted if encryption is set.
	data []byte
	// encryption and keyID are the header's "encryption" and "key_id":
	// empty for a plain body.
	encryption, keyID string
	// sha256 is the lowercase hex SHA-256 of data.
	sha256 string
}

// sealBody returns body as an envelope stores it: encrypted with k and
// additional data aad when k is not nil, as it is otherwise, with its
// checksum. what names the object in errors ("snapshot ID").
func sealBody(ctx context.Context, k *Keeper, what string, body, aad []byte) (sealedBody, error) {
	out := sealedBody{data: body}
	if k != nil {
		dataKey := make([]byte, dataKeySize)
		_, _ = rand.Read(dataKey) // crypto/rand.Read never fails
		wrapped, err := k.keeper.Encrypt(ctx, dataKey)
		if err != nil {
			return sealedBody{}, fmt.Errorf("encrypt %s with %s: %w", what, k, err)
		}
		gcm, err := newGCM(dataKey)
		if err != nil {
			return sealedBody{}, err
		}
		sealed := make([]byte, 0, 4+len(wrapped)+gcmNonceSize+len(body)+gcm.Overhead())
		sealed = binary.BigEndian.AppendUint32(sealed, uint32(len(wrapped)))
		sealed = append(sealed, wrapped...)
		nonce := make([]byte, gcmNonceSize)
		_, _ = rand.Read(nonce)
		sealed = append(sealed, nonce...)
		out = sealedBody{data: gcm.Seal(sealed, nonce, body, aad), encryption: encryptionBound, keyID: k.id}
	}
	sum := sha256.Sum256(out.data)
	out.sha256 = hex.EncodeToString(sum[:])
	return out, nil
}

// snapshotAAD is the additional authenticated data of an encryptionBound
// snapshot: the object format version and the snapshot ID.
func snapshotAAD(version int, id string) []byte {
	return []byte("offsetkeeper-snapshot/2\x00version=" + strconv.Itoa(version) + "\x00id=" + id)
}

// segmentAAD is the additional authenticated data of an encrypted journal
// segment: its object key.
func segmentAAD(key string) []byte { return []byte(segmentSealLabel + key) }
