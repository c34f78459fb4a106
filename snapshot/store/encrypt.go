package store

// This file is the optional client-side encryption of the objects the
// store writes, snapshots and journal segments (see envelope.go).
//
// An encrypted object keeps the plain header line, with "encryption" set to
// encryptionBound and "key_id" naming the key, and its body is an envelope:
//
//	uint32 big-endian n | n bytes: a fresh 32-byte data key, encrypted by the Keeper |
//	12-byte nonce | AES-256-GCM(data key, nonce, zstd document, additional data snapshotAAD(version, ID))
//
// The additional data binds the ciphertext to the snapshot's ID and the
// object format version, so an encrypted body moved under another ID (two
// objects swapped) fails to authenticate. Envelopes written before that,
// with "encryption" encryptionSecrets, were sealed with the constant
// sealAAD and are still read (their document names its own ID, which Get
// checks).
//
// A data key per snapshot is what lets a KMS key encrypt a body of any size
// (AWS KMS encrypts at most 4 KiB, Azure Key Vault's RSA keys less). The
// header's sha256 and body_size are of the envelope as stored, so a store
// can be checked for damage without the key; the GCM tag catches a body
// that was altered and given a new checksum.

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"gocloud.dev/secrets"
	"gocloud.dev/secrets/localsecrets"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

const (
	// encryptionBound is the header "encryption" value of an object
	// encrypted as this file describes, the one this build writes.
	encryptionBound = "gocloud-secrets-v2"
	// encryptionSecrets is the "encryption" of the first envelopes, whose
	// additional data is the constant sealAAD; read, never written.
	encryptionSecrets = "gocloud-secrets"
	// dataKeySize is the size of the per-object AES-256 key, in bytes.
	dataKeySize = 32
	// gcmNonceSize is the size of the AES-GCM nonce, in bytes.
	gcmNonceSize = 12
	// metaEncrypted and metaKeyID are the object metadata of an encrypted
	// snapshot: "true" and its key_id.
	metaEncrypted = "encrypted"
	metaKeyID     = "key-id"
	// keyIDPrefix starts every key ID.
	keyIDPrefix = "sha256:"
)

// sealAAD is the additional authenticated data of the encryptionSecrets
// envelopes.
var sealAAD = []byte("offsetkeeper-snapshot/1")

// aadOf returns the additional data of the envelope of the snapshot with
// ID id whose header is h.
func aadOf(h objectHeader, id string) []byte {
	if h.Encryption == encryptionSecrets {
		return sealAAD
	}
	return snapshotAAD(*h.Version, id)
}

// Keeper encrypts and decrypts snapshot bodies with a gocloud.dev/secrets
// key and knows the key's ID: a short SHA-256 fingerprint that names the
// key in object headers and messages without revealing it. Its String,
// GoString and LogValue show the URL with any secret removed and the ID,
// never the key. A Keeper is safe for concurrent use.
type Keeper struct {
	keeper *secrets.Keeper
	id     string
	where  string
}

// OpenKeeper opens the key at keyURL:
//
//   - base64key://KEY, a 32-byte key in base64 (URL-safe or standard,
//     padded or not). Its ID is a fingerprint of the key bytes. An empty
//     key is refused: gocloud would make up a random one that is lost when
//     the process exits, and the snapshots with it.
//   - awskms://, gcpkms:// or azurekeyvault:// followed by the key, as
//     gocloud.dev/secrets documents them, in a program that imports
//     internal/storedrivers; credentials come from each cloud SDK's
//     default chain. Its ID is a fingerprint of the URL
//     without query parameters, so the same key named another way (an
//     alias and an ARN) has another ID but still decrypts.
//
// Errors never contain a base64 key or the secret parts of a URL. Close
// the Keeper when done (a Store given it with SetKeeper does).
func OpenKeeper(ctx context.Context, keyURL string) (*Keeper, error) {
	where := redactKeyURL(keyURL)
	fail := func(err error) (*Keeper, error) {
		return nil, fmt.Errorf("open encryption key %s: %w: check --encrypt-key / OFFSETKEEPER_ENCRYPT_KEY", where, err)
	}
	scheme, rest, ok := strings.Cut(keyURL, "://")
	if !ok || scheme == "" {
		return fail(errors.New("not a key URL: want base64key://<32-byte key in base64> or a KMS key (awskms://, gcpkms://, azurekeyvault://)"))
	}
	if strings.EqualFold(scheme, localsecrets.Scheme) {
		key, query, _ := strings.Cut(rest, "?")
		if query != "" {
			return fail(errors.New("base64key:// takes no query parameters"))
		}
		if key == "" {
			return fail(errors.New("base64key:// holds no key; offsetkeeper does not make up a random one, which would be lost with the snapshots it encrypts: " +
				"make one with 'head -c 32 /dev/urandom | base64' and keep it where you keep your other secrets"))
		}
		sk, err := decodeBase64Key(key)
		if err != nil {
			return fail(err)
		}
		return &Keeper{keeper: localsecrets.NewKeeper(sk), id: keyID(localsecrets.Scheme, sk[:]), where: where}, nil
	}
	if !secrets.DefaultURLMux().ValidKeeperScheme(strings.ToLower(scheme)) {
		if len(kmsSchemes()) == 0 { // a program that does not link internal/storedrivers
			return fail(fmt.Errorf("unknown key scheme %q: want base64key (this program links no KMS driver)", scheme))
		}
		return fail(fmt.Errorf("unknown key scheme %q: want base64key, %s", scheme, strings.Join(kmsSchemes(), ", ")))
	}
	u, err := url.Parse(keyURL)
	if err != nil {
		return fail(errors.New("not a valid URL"))
	}
	k, err := secrets.OpenKeeper(ctx, keyURL)
	if err != nil {
		return fail(scrubError(err, keyURL))
	}
	ref := strings.ToLower(u.Scheme) + "://" + u.Host + u.Path
	return &Keeper{keeper: k, id: keyID(strings.ToLower(u.Scheme), []byte(ref)), where: where}, nil
}

// ID returns the key's ID, e.g. sha256:3f9a1c0b5e7d2a41.
func (k *Keeper) ID() string { return k.id }

// String describes the key: its URL, secrets removed, and its ID.
func (k *Keeper) String() string { return k.where + " (key " + k.id + ")" }

// GoString is String, so that %#v shows no key either.
func (k *Keeper) GoString() string { return k.String() }

// LogValue implements slog.LogValuer.
func (k *Keeper) LogValue() slog.Value { return slog.StringValue(k.String()) }

// Close releases the key's resources. A nil Keeper closes as nothing.
func (k *Keeper) Close() error {
	if k == nil {
		return nil
	}
	return k.keeper.Close()
}

// SetKeeper makes the Store encrypt every snapshot it writes with k, and
// decrypt the encrypted snapshots it reads; snapshots stored unencrypted
// are read as before. Without a Keeper, Get of an encrypted snapshot is
// ErrEncrypted, while Verify and List still work from the header and the
// metadata. The Store takes k over: Close closes it. Call SetKeeper before
// using the Store, not concurrently with its other methods.
func (s *Store) SetKeeper(k *Keeper) { s.keeper = k }

// keyID is the ID of a key: a domain-separated SHA-256 of what names it,
// 64 bits in hex. For a base64key that is the key itself, which its
// fingerprint does not reveal; a 32-byte key cannot be found from it.
func keyID(scheme string, material []byte) string {
	h := sha256.New()
	h.Write([]byte("offsetkeeper key id\x00" + scheme + "\x00"))
	h.Write(material)
	return keyIDPrefix + hex.EncodeToString(h.Sum(nil)[:8])
}

// decodeBase64Key decodes a base64key key in any base64 alphabet, padded
// or not. Errors never contain the key.
func decodeBase64Key(s string) ([32]byte, error) {
	var sk [32]byte
	for _, enc := range []*base64.Encoding{base64.URLEncoding, base64.RawURLEncoding, base64.StdEncoding, base64.RawStdEncoding} {
		b, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(b) != len(sk) {
			return sk, fmt.Errorf("the base64key key is %d bytes, want %d", len(b), len(sk))
		}
		copy(sk[:], b)
		return sk, nil
	}
	return sk, errors.New("the base64key key is not valid base64")
}

// redactKeyURL returns keyURL fit for messages: a base64key's key and
// anything that is not a URL are never shown.
func redactKeyURL(keyURL string) string {
	scheme, rest, ok := strings.Cut(keyURL, "://")
	switch {
	case !ok || scheme == "":
		return "(not a URL)"
	case strings.EqualFold(scheme, localsecrets.Scheme):
		if rest == "" {
			return scheme + "://"
		}
		return scheme + "://REDACTED"
	case !secrets.DefaultURLMux().ValidKeeperScheme(strings.ToLower(scheme)):
		return scheme + "://..."
	}
	return redactURL(keyURL)
}

// kmsSchemes lists the registered key schemes other than base64key.
func kmsSchemes() []string {
	var out []string
	for _, s := range secrets.DefaultURLMux().KeeperSchemes() {
		if s != localsecrets.Scheme {
			out = append(out, s)
		}
	}
	return out
}

// seal returns obj, a plain object as encodeObject makes it, encrypted
// with the Store's Keeper, and info describing the stored object; without
// a Keeper it returns them as they are.
func (s *Store) seal(ctx context.Context, obj []byte, info snapshot.Info) ([]byte, snapshot.Info, error) {
	if s.keeper == nil {
		return obj, info, nil
	}
	h, body, err := splitObject(obj)
	if err != nil {
		return nil, snapshot.Info{}, err
	}
	h.Encryption = encryptionBound
	sb, err := sealBody(ctx, s.keeper, "snapshot", body, aadOf(h, info.ID))
	if err != nil {
		return nil, snapshot.Info{}, err
	}
	sealed := sb.data
	size := int64(len(sealed))
	h.KeyID, h.SHA256, h.BodySize = sb.keyID, sb.sha256, &size
	head, err := json.Marshal(h)
	if err != nil {
		return nil, snapshot.Info{}, fmt.Errorf("encode header: %w", err)
	}
	out := make([]byte, 0, len(head)+1+len(sealed))
	out = append(append(append(out, head...), '\n'), sealed...)
	info.Size, info.SHA256, info.Encrypted, info.KeyID = int64(len(out)), h.SHA256, true, s.keeper.id
	return out, info, nil
}

// sealedObject is the stored form of an object unseal decrypted.
type sealedObject struct {
	size   int64
	sha256 string
	keyID  string
}

// stored returns info, read from the decrypted object, with the stored
// object's size and checksum; a nil sealedObject returns info unchanged.
func (o *sealedObject) stored(info snapshot.Info) snapshot.Info {
	if o == nil {
		return info
	}
	info.Size, info.SHA256, info.Encrypted, info.KeyID = o.size, o.sha256, true, o.keyID
	return info
}

// unseal checks the stored object data of the snapshot with ID id and, if
// it is encrypted, decrypts it into the plain object decodeObject reads.
// An object that is not encrypted (or whose header does not parse) is
// returned as it is, for decodeObject to read or refuse. Errors are
// complete: they name the snapshot.
//
// The header, size and checksum of an encrypted object are checked before
// any key is needed. Without a Keeper the result matches ErrEncrypted, and
// with a key that does not decrypt the object ErrDecrypt; both are a
// *sealedError that carries what was checked.
func (s *Store) unseal(ctx context.Context, id string, data []byte) ([]byte, *sealedObject, error) {
	h, body, err := splitObject(data)
	if err != nil || (h.Encryption != encryptionSecrets && h.Encryption != encryptionBound) {
		return data, nil, nil
	}
	if err := checkSealed(h, body); err != nil {
		return nil, nil, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	stored := &sealedObject{size: int64(len(data)), sha256: h.SHA256, keyID: h.KeyID}
	checked := func(err error) error {
		t, _ := snapshot.ParseID(id)
		return &sealedError{err: err, info: stored.stored(snapshot.Info{ID: id, CreatedAt: t})}
	}
	if s.keeper == nil {
		msg := fmt.Sprintf("snapshot %s is encrypted: pass --encrypt-key (OFFSETKEEPER_ENCRYPT_KEY)", id)
		if h.KeyID != "" {
			msg += " with the key it was encrypted with, key " + h.KeyID
		}
		return nil, nil, checked(&encryptedError{msg: msg})
	}
	plain, err := s.keeper.open(ctx, "snapshot "+id, h.KeyID, body, aadOf(h, id))
	if errors.Is(err, snapshot.ErrDecrypt) {
		return nil, nil, checked(err)
	}
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(plain)
	size := int64(len(plain))
	h.Encryption, h.KeyID, h.SHA256, h.BodySize = "", "", hex.EncodeToString(sum[:]), &size
	head, err := json.Marshal(h)
	if err != nil {
		return nil, nil, fmt.Errorf("read snapshot %s: encode header: %w", id, err)
	}
	out := make([]byte, 0, len(head)+1+len(plain))
	return append(append(append(out, head...), '\n'), plain...), stored, nil
}

// open decrypts the envelope body of the object obj ("snapshot ID" or
// "journal segment KEY"), encrypted with the key whose ID the header gives
// as keyID and additional data aad.
func (k *Keeper) open(ctx context.Context, obj, keyID string, body, aad []byte) ([]byte, error) {
	malformed := func(what string) error {
		if strings.HasPrefix(obj, "snapshot ") {
			return fmt.Errorf("read %s: %w: encrypted body %s; take a new snapshot or restore another ID", obj, snapshot.ErrCorrupt, what)
		}
		return fmt.Errorf("read %s: %w: encrypted body %s", obj, journal.ErrCorrupt, what)
	}
	if len(body) < 4 {
		return nil, malformed("is too short")
	}
	n := int64(binary.BigEndian.Uint32(body))
	if n == 0 || n > int64(len(body))-4-gcmNonceSize {
		return nil, malformed(fmt.Sprintf("says its data key is %d bytes, in a body of %d", n, len(body)))
	}
	wrapped, rest := body[4:4+n], body[4+n:]
	dataKey, err := k.keeper.Decrypt(ctx, wrapped)
	if err == nil && len(dataKey) != dataKeySize {
		err = fmt.Errorf("the data key decrypted to %d bytes, not %d", len(dataKey), dataKeySize)
	}
	if err != nil {
		if keyID != "" && keyID != k.id {
			return nil, fmt.Errorf("decrypt %s: wrong key? it was encrypted with key %s, and --encrypt-key is key %s: %w (%v)", obj, keyID, k.id, snapshot.ErrDecrypt, err)
		}
		return nil, fmt.Errorf("decrypt %s: wrong key? %s did not decrypt it; for a KMS key, check that this identity may decrypt with it: %w (%v)", obj, k, snapshot.ErrDecrypt, err)
	}
	gcm, err := newGCM(dataKey)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, rest[:gcmNonceSize], rest[gcmNonceSize:], aad)
	if err != nil {
		return nil, malformed("does not authenticate although its checksum matches: it was altered and given a new checksum, or it is another snapshot's body stored under this ID; do not restore it")
	}
	return plain, nil
}

// newGCM returns AES-256-GCM with key.
func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("encryption: %w", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("encryption: %w", err)
	}
	return gcm, nil
}

// splitObject parses the header line of a stored object and returns it
// and the body.
func splitObject(data []byte) (objectHeader, []byte, error) {
	line, body, ok := cutHeader(data)
	if !ok {
		return objectHeader{}, nil, fmt.Errorf("%w: no header line in the first %d bytes", snapshot.ErrCorrupt, maxHeaderSize)
	}
	h, err := parseHeader(line)
	if err != nil {
		return h, nil, fmt.Errorf("%w: decode header: %v", snapshot.ErrCorrupt, err)
	}
	return h, body, nil
}

// checkSealed makes the checks of decodeObject that need no key on an
// encrypted object: format, version, compression, body size, checksum.
func checkSealed(h objectHeader, body []byte) error {
	switch {
	case h.Format != objectFormat:
		return fmt.Errorf("%w: header format is %q, not %q: not an offsetkeeper snapshot", snapshot.ErrCorrupt, h.Format, objectFormat)
	case h.Version == nil:
		return fmt.Errorf("%w: header has no version", snapshot.ErrCorrupt)
	case *h.Version < snapshot.MinVersion || *h.Version > snapshot.Version:
		return fmt.Errorf("%w %d (object header): this build reads versions %d to %d; upgrade offsetkeeper", snapshot.ErrUnsupportedVersion, *h.Version, snapshot.MinVersion, snapshot.Version)
	case h.Compression != compressionZstd:
		return fmt.Errorf("snapshot body is compressed with %q; this build reads only %q", h.Compression, compressionZstd)
	case h.BodySize == nil:
		return fmt.Errorf("%w: header has no body_size", snapshot.ErrCorrupt)
	case int64(len(body)) != *h.BodySize:
		return fmt.Errorf("%w: header says the encrypted body is %d bytes, found %d; take a new snapshot or restore another ID", snapshot.ErrCorrupt, *h.BodySize, len(body))
	}
	sum := sha256.Sum256(body)
	if got := hex.EncodeToString(sum[:]); got != h.SHA256 {
		return fmt.Errorf("%w: body SHA-256 is %s, header says %q: the object was modified or damaged; take a new snapshot or restore another ID", snapshot.ErrChecksum, got, h.SHA256)
	}
	return nil
}

// encryptedError is reading an encrypted snapshot without a Keeper; it
// matches ErrEncrypted.
type encryptedError struct{ msg string }

func (e *encryptedError) Error() string { return e.msg }

// Is makes the error match ErrEncrypted.
func (e *encryptedError) Is(target error) bool { return target == snapshot.ErrEncrypted }

// sealedError is an encrypted snapshot that was not decrypted (no Keeper,
// or the wrong key) although its header, size and checksum were checked;
// info holds what those tell (ID, CreatedAt, Size, SHA256, Encrypted,
// KeyID).
type sealedError struct {
	err  error
	info snapshot.Info
}

func (e *sealedError) Error() string { return e.err.Error() }

func (e *sealedError) Unwrap() error { return e.err }

// keyless turns the result of reading an encrypted snapshot without a
// Keeper into a success, for Verify: the Info of what was checked without
// the key. Other results, a wrong key among them, are returned as they are.
func keyless(info snapshot.Info, err error) (snapshot.Info, error) {
	if e, ok := errors.AsType[*sealedError](err); ok && errors.Is(err, snapshot.ErrEncrypted) {
		return e.info, nil
	}
	return info, err
}

// listable is keyless for List, which needs no key at all: an encrypted
// snapshot that the Store's Keeper does not decrypt is listed too.
func listable(info snapshot.Info, err error) (snapshot.Info, error) {
	if e, ok := errors.AsType[*sealedError](err); ok {
		return e.info, nil
	}
	return info, err
}
