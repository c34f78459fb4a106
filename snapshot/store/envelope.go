package store

// This file is the one envelope of every object the store writes, snapshots
// and journal segments alike: a JSON header line, then the body.
//
//	{"format":...,"version":N,...,"compression":"zstd","encryption":...,"key_id":...,"sha256":"<hex>","body_size":N}\n
//	body
//
// The header names the format and its version, then what the kind of
// object adds (a segment's epoch, sequence numbers and digests), then the
// fields every object shares: compression, encryption and key_id when the
// body is encrypted, and the SHA-256 and size of the body as stored, so
// that a store can be checked for damage without the key. An encrypted
// body is sealed by sealBody and opened by Keeper.open, the one encryption
// path (the layout is in encrypt.go); its additional data names the
// object, so that a body moved under another name fails to authenticate:
// snapshotAAD for a snapshot, segmentAAD for a segment.
//
// Objects written before this file keep their bytes: the snapshot
// envelopes of the first release (encryptionSecrets, with the constant
// sealAAD) still read, and testdata holds a fixture of every envelope ever
// written (v1.snap, v1-encrypted.snap, v1-encrypted-bound.snap,
// journal-v1, journal-v1-encrypted).

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
)

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
