package store

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/gcerrors"
	"golang.org/x/sync/errgroup"

	"github.com/offsetkeeper/offsetkeeper/internal/retry"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/frames"
)

// Metadata keys written on every snapshot object so that List needs no
// reads. Values are strings; counts are decimal, created is RFC 3339 UTC.
const (
	metaCreated    = "created"
	metaReason     = "reason"
	metaClusterID  = "cluster-id"
	metaConnectors = "connectors"
	metaSourceKeys = "source-keys"
	metaSinkGroups = "sink-groups"
	metaSHA256     = "sha256"
	// metaKind and metaScope (a JSON array of names) were added after the
	// first release; List reads the document's head for objects without
	// them. metaScope is left out when longer than maxMetaScope.
	metaKind  = "kind"
	metaScope = "scope"
	// metaCaptured is Info.Captured, written only when not empty (a
	// snapshot read through the Connect REST API).
	metaCaptured = "captured"
)

// maxMetaScope is the longest scope written as object metadata, in bytes:
// S3 allows 2 KiB of user metadata per object.
const maxMetaScope = 1024

// Store keeps snapshots in a gocloud.dev/blob bucket, one immutable object
// per snapshot, and verifies every object's SHA-256 when reading it.
//
// The object of snapshot ID is snapshots/ID.snap. It is self-contained, so
// it survives copying between buckets: its first line is a JSON header
// ending in "\n",
//
//	{"format":"offsetkeeper-snapshot","version":1,"compression":"zstd","sha256":"<hex>","body_size":N}
//
// and the rest, the body, is the zstd-compressed document Snapshot.Encode
// writes; sha256 and body_size are of the body as stored. Readers ignore
// header fields they do not know but refuse a format, version, compression
// or encryption they do not know. The object is written with content type
// application/vnd.offsetkeeper.snapshot and metadata holding its summary
// (created, reason, cluster-id, connectors, source-keys, sink-groups,
// sha256), which List reads instead of the object.
//
// A Store is safe for concurrent use if its bucket is (every gocloud driver
// is). It holds no state besides the bucket, so several processes may share
// one store: IDs carry a random suffix and writes use IfNotExist, so
// concurrent Puts never overwrite each other.
type Store struct {
	bucket *blob.Bucket
	// where names the store in errors, credentials removed; empty when
	// the Store was made by NewStore.
	where string
	// testHookBeforeClose, when set by a test, runs in Put after the object
	// was written and before the writer is closed (committed).
	testHookBeforeClose func()
	// testHookListed, when set by a test, runs as a local listing finds
	// a file, before it looks at it (see eachLocal).
	testHookListed func(path string)
	// keeper, when set, encrypts what Put writes; see encrypt.go.
	keeper *Keeper
	// dir is the directory of a local store opened by OpenStore, which
	// list reads itself (see listOnce).
	dir string
	// pieceSizes cut the documents Put writes (zero: the defaults).
	pieceSizes snapshot.PieceSizes
	// timeout bounds each store call without progress (see SetTimeout).
	timeout time.Duration
	// clock is the last CreatedAt Put assigned (see nextCreatedAt).
	clock struct {
		sync.Mutex
		last time.Time
	}
}

// OpenStore opens the store at storeURL, which is either a gocloud.dev/blob URL
// (file, mem, s3, gs, azblob schemes) or, when it has no "://", a local
// directory path. The s3, gs and azblob schemes open only in a program that
// imports internal/storedrivers (the commands do).
//
// A local directory, given as a path or as a file:// URL, is created (mode 0o755) if missing; "file://./dir" and "file://dir" are
// relative to the working directory, "file:///dir" is absolute. Temporary
// files of a local store are made next to their final name, so a snapshot
// appears by an atomic rename and never across file systems.
//
// Errors name the URL with userinfo and secret-looking query parameters
// removed. Close the Store when done.
func OpenStore(ctx context.Context, storeURL string) (*Store, error) {
	return openStore(ctx, storeURL, true)
}

// OpenExistingStore is OpenStore for commands that only read a store (and
// a restore, which writes its undo snapshot beside the one it reads): a
// local directory that does not exist is ErrStoreNotFound, in an error
// naming its path, and is not created. A bucket URL opens as with
// OpenStore (gocloud never creates buckets).
func OpenExistingStore(ctx context.Context, storeURL string) (*Store, error) {
	return openStore(ctx, storeURL, false)
}

func openStore(ctx context.Context, storeURL string, create bool) (*Store, error) {
	where := redactURL(storeURL)
	fail := func(err error) (*Store, error) {
		return nil, fmt.Errorf("open store %q: %w: check --store / OFFSETKEEPER_STORE", where, scrubError(err, storeURL))
	}
	if storeURL == "" {
		return fail(errors.New("no store URL given"))
	}
	scheme, _, hasScheme := strings.Cut(storeURL, "://")
	if !hasScheme {
		return openDir(ctx, storeURL, "", create)
	}
	if strings.EqualFold(scheme, fileblob.Scheme) {
		dir, query, err := filePath(storeURL)
		if err != nil {
			return fail(err)
		}
		return openDir(ctx, dir, query, create)
	}
	b, err := openBucketGuarded(ctx, storeURL)
	if errors.Is(err, snapshot.ErrNoCredentials) {
		return nil, fmt.Errorf("open store %q: %w", where, scrubError(err, storeURL))
	}
	if err != nil {
		return fail(err)
	}
	return &Store{bucket: b, where: where}, nil
}

// openBucketGuarded is openCloudBucket under the store timeout's default
// and a recover.
func openBucketGuarded(ctx context.Context, storeURL string) (b *blob.Bucket, err error) {
	s := &Store{where: redactURL(storeURL)}
	w := s.watch(ctx)
	defer w.done()
	defer s.recovered(&err, "open store")
	b, err = openCloudBucket(w.ctx, storeURL)
	return b, w.err(s, err)
}

// openDir opens the local directory dir, with the fileblob query
// parameters in query. A missing dir is created with create, else
// ErrStoreNotFound.
func openDir(ctx context.Context, dir, query string, create bool) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w: check --store / OFFSETKEEPER_STORE", dir, err)
	}
	if !create {
		if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
			if near := nearStore(abs); near != "" {
				return nil, fmt.Errorf("open store %s: %w: no directory %s; did you mean %s? Check --store / OFFSETKEEPER_STORE", abs, snapshot.ErrStoreNotFound, abs, near)
			}
			return nil, fmt.Errorf("open store %s: %w: no directory %s; check --store / OFFSETKEEPER_STORE ('offsetkeeper snapshot' creates it)", abs, snapshot.ErrStoreNotFound, abs)
		}
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path; fileblob drops the "/" again
	}
	u := &url.URL{Scheme: fileblob.Scheme, Path: p, RawQuery: query}
	where := redactURL(u.String())
	// fileblob checks the query, then creates the directory if missing.
	opener := &fileblob.URLOpener{Options: fileblob.Options{CreateDir: true, DirFileMode: 0o755, NoTempDir: true}}
	b, err := opener.OpenBucketURL(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w: check --store / OFFSETKEEPER_STORE", where, scrubError(err, query))
	}
	return &Store{bucket: b, where: where, dir: abs}, nil
}

// filePath returns the directory and the raw query of a file:// URL. Unlike
// fileblob, which ignores any host but ".", it reads "file://dir/sub" as the
// relative path "dir/sub".
func filePath(raw string) (dir, query string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", errors.New("not a valid URL")
	}
	p := u.Path
	switch u.Host {
	case "", "localhost":
		if os.PathSeparator != '/' {
			p = strings.TrimPrefix(p, "/")
		}
	case ".":
		p = strings.TrimPrefix(p, "/")
	default:
		p = u.Host + p
	}
	if p == "" {
		p = "."
	}
	return filepath.FromSlash(p), u.RawQuery, nil
}

// NewStore wraps an open bucket. Close closes it.
func NewStore(b *blob.Bucket) *Store { return &Store{bucket: b} }

// Close closes the bucket and the Keeper, if any.
func (s *Store) Close() error { return errors.Join(s.bucket.Close(), s.keeper.Close()) }

// Put writes snap as one immutable object and returns its Info. Before
// writing it fills in what is missing, even if the write then fails:
// Version (Version), CreatedAt (now, in UTC, to the microsecond, and later
// than any CreatedAt this Store assigned before) and ID
// (NewID(CreatedAt)). A given ID must be a valid ID (see ParseID) and
// Version must be Version.
//
// The object is written with IfNotExist: an ID already stored is ErrExists
// and the stored snapshot is left as it was. The write is committed only
// when whole; if it fails or ctx is cancelled, nothing is stored.
//
// SetPieceSizes cuts the documents Put writes into pieces of keys source
// offsets and groups sink groups (zero: the defaults). Put encodes pieces
// in parallel and compresses them into frames, so small sizes cut a small
// document into many frames: the tests check the boundaries with them.
func (s *Store) SetPieceSizes(keys, groups int) {
	s.pieceSizes = snapshot.PieceSizes{Keys: keys, Groups: groups}
}

// Put encodes and compresses the pieces of the document (see pieces.go)
// on as many goroutines as there are CPUs, consecutive pieces into a zstd
// frame of their own (see compressPieces). A body of several frames is one
// zstd stream (frames concatenated), which every zstd decoder reads whole,
// this build's and earlier ones' alike; the frames make the body under 1%
// larger than one frame would.
func (h Snapshots) Put(ctx context.Context, snap *snapshot.Snapshot) (snapshot.Info, error) {
	s := h.s
	if snap == nil {
		return snapshot.Info{}, errors.New("put snapshot: nil snapshot")
	}
	if snap.Version == 0 {
		snap.Version = snapshot.Version
	}
	if snap.CreatedAt.IsZero() {
		snap.CreatedAt = s.nextCreatedAt()
	}
	if snap.ID == "" {
		snap.ID = snapshot.NewID(snap.CreatedAt)
	}
	if _, err := snapshot.ParseID(snap.ID); err != nil {
		return snapshot.Info{}, fmt.Errorf("put snapshot: %w", err)
	}
	if snap.Version != snapshot.Version {
		return snapshot.Info{}, fmt.Errorf("put snapshot %s: %w %d: this build writes only version %d", snap.ID, snapshot.ErrUnsupportedVersion, snap.Version, snapshot.Version)
	}
	obj, info, err := encodeObject(snap, s.pieceSizes)
	if err == nil && s.keeper != nil {
		var sealed []byte
		sealed, info, err = s.seal(ctx, obj.join(), info)
		obj = object{head: sealed}
	}
	if err != nil {
		return snapshot.Info{}, fmt.Errorf("put snapshot %s: %w", snap.ID, err)
	}

	err = s.put(ctx, objectKey(snap.ID), &blob.WriterOptions{
		IfNotExist:  true,
		ContentType: contentType,
		Metadata:    metadataOf(info),
	}, obj.writeTo, s.testHookBeforeClose)
	if alreadyExists(err) {
		return snapshot.Info{}, fmt.Errorf("write snapshot %s%s: %w; snapshots are immutable, put it with an empty ID to get a new one", snap.ID, s.in(), snapshot.ErrExists)
	}
	if err != nil {
		return snapshot.Info{}, fmt.Errorf("write snapshot %s: %w", snap.ID, err)
	}
	return info, nil
}

// GetWith reads, verifies and decodes one snapshot; ref is anything
// Resolve accepts (an ID is read without resolving it, "latest" with the
// connectors of For). It checks the object's header, the SHA-256 of its
// body (ErrChecksum), its format version (ErrUnsupportedVersion), the
// document's version, and that the document's ID is the object's
// (ErrCorrupt). A missing snapshot is ErrNotFound. An encrypted snapshot
// is ErrEncrypted without a Keeper and ErrDecrypt with the wrong one.
//
// sink takes the source offsets of a streamed document (see
// snapshot.OffsetSink); nil puts them in a full SourceTable. A sink that also
// has a method Decoded(*snapshot.Snapshot) is given every snapshot read
// with it, streamed or decoded whole, to finish it: RestoreSink leaves out
// what a restore does not read, capture.SeedSink keeps what a journal
// tail needs. A document the streamed decoder does not take is decoded
// whole, its source offsets in a full SourceTable.
func (h Snapshots) GetWith(ctx context.Context, ref string, sink snapshot.OffsetSink) (*snapshot.Snapshot, snapshot.Info, error) {
	id := ref
	if _, err := snapshot.ParseID(ref); err != nil {
		if id, err = h.Resolve(ctx, ref); err != nil {
			return nil, snapshot.Info{}, err
		}
	}
	snap, info, err := h.s.getAs(ctx, id, sink)
	if d, ok := sink.(interface{ Decoded(*snapshot.Snapshot) }); ok && err == nil {
		d.Decoded(snap)
	}
	return snap, info, err
}

// Verify is Get without keeping the document: it reads the whole object
// and checks everything Get checks, returning the Info read. An encrypted
// snapshot verified without a Keeper has only its header, size and
// checksum checked; its Info then has Encrypted set and no counts. The
// source offsets are decoded as a restore reads them (RestoreSink): every
// one is decoded and checked, and only the compact table is kept while the
// rest of the document is read, not a SourceOffset each.
func (h Snapshots) Verify(ctx context.Context, ref string) (snapshot.Info, error) {
	s := h.s
	_, info, err := s.Snapshots().GetWith(ctx, ref, RestoreSink(RestoreRead{}))
	return keyless(info, err)
}

// get reads and decodes the snapshot with the exact ID id.
func (s *Store) get(ctx context.Context, id string) (*snapshot.Snapshot, snapshot.Info, error) {
	return s.getAs(ctx, id, nil)
}

// getAs is get, decoding the source offsets of a streamed document into
// sink (into a full SourceTable when sink is nil).
func (s *Store) getAs(ctx context.Context, id string, sink snapshot.OffsetSink) (*snapshot.Snapshot, snapshot.Info, error) {
	data, err := s.readAll(ctx, objectKey(id))
	if notFound(err) {
		return nil, snapshot.Info{}, fmt.Errorf("read snapshot %s: %w%s", id, snapshot.ErrNotFound, s.in())
	}
	if err != nil {
		return nil, snapshot.Info{}, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	data, sealed, err := s.unseal(ctx, id, data)
	if err != nil {
		return nil, snapshot.Info{}, err
	}
	snap, info, err := decodeObjectAs(id, data, sink)
	if err != nil {
		return nil, snapshot.Info{}, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	return snap, sealed.stored(info), nil
}

// List returns every snapshot in the store, oldest first (by ID). It reads
// only object metadata, except for an object stored without the summary
// metadata (copied by a tool that drops it), which it reads whole; if that
// object does not verify, it is listed with Damaged saying why (a store
// that cannot be read fails List instead). Other objects under
// snapshots/ (temporary files, names that are not ID.snap) are ignored, as
// is a snapshot deleted while List runs. An empty store is an empty list.
func (h Snapshots) List(ctx context.Context) ([]snapshot.Info, error) {
	s := h.s
	ids, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	infos := make([]snapshot.Info, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(listConcurrency)
	for i, id := range ids {
		g.Go(func() error {
			attrs, err := s.attributes(gctx, objectKey(id))
			if notFound(err) {
				return nil // deleted since listed
			}
			if err != nil {
				return fmt.Errorf("list snapshots: read attributes of %s: %w", id, err)
			}
			info, ok := infoFromMetadata(id, attrs.Metadata)
			if ok && info.Kind == "" {
				if info, err = s.withScope(gctx, info); err != nil {
					if gcerrors.Code(err) == gcerrors.NotFound || errors.Is(err, snapshot.ErrNotFound) {
						return nil // deleted since listed
					}
					return fmt.Errorf("list snapshots: %w", err)
				}
			}
			if !ok {
				_, info, err = s.get(gctx, id)
				info, err = listable(info, err)
				if errors.Is(err, snapshot.ErrNotFound) {
					return nil
				}
				if damage(gctx, err) {
					// One damaged object must not hide the others.
					info = damagedInfo(id, err)
				} else if err != nil {
					return fmt.Errorf("list snapshots: object has no summary metadata: %w", err)
				}
			}
			info.Size = attrs.Size
			infos[i] = info
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(infos, func(i snapshot.Info) bool { return i.ID == "" }), nil
}

// list returns the IDs of the snapshot objects under keyPrefix, sorted.
func (s *Store) list(ctx context.Context) ([]string, error) {
	// fileblob lists by reading the directory and then looking at each
	// file: one deleted in between (another process's retention) fails the
	// listing with NotFound. Listing again sees it gone.
	var ids []string
	err := listRetry.Do(ctx, notFound, func() (err error) {
		ids, err = s.listOnce(ctx)
		return err
	})
	return ids, err
}

// listRetry lists again after a listing raced a delete: a few
// milliseconds are enough for the next listing not to see the object.
var listRetry = retry.Policy{Tries: 10, Step: 10 * time.Millisecond}

// listOnce is one listing of list. A local store opened by OpenStore is
// listed from its directory's names alone, which no concurrent delete can
// fail; other stores through the bucket.
func (s *Store) listOnce(ctx context.Context) ([]string, error) {
	var ids []string
	if s.dir != "" {
		entries, err := os.ReadDir(filepath.Join(s.dir, filepath.FromSlash(keyPrefix)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list snapshots%s: %w", s.in(), err)
		}
		for _, e := range entries {
			if id, ok := idOf(e.Name()); ok && !e.IsDir() {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids, nil
	}
	err := s.eachObject(ctx, &blob.ListOptions{Prefix: keyPrefix, Delimiter: "/"}, func(obj *blob.ListObject) error {
		if id, ok := idOf(strings.TrimPrefix(obj.Key, keyPrefix)); ok && !obj.IsDir {
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// idOf returns the ID of the snapshot object named name under keyPrefix,
// or false for any other name (temporary files, other objects).
func idOf(name string) (string, bool) {
	id, ok := strings.CutSuffix(name, keySuffix)
	if !ok {
		return "", false
	}
	if _, err := snapshot.ParseID(id); err != nil {
		return "", false
	}
	return id, true
}

// Delete removes the snapshot with the exact ID id (not a prefix, not
// "latest"). A snapshot that is not there is ErrNotFound. Deleting a
// snapshot that another process is reading may make that read fail.
func (h Snapshots) Delete(ctx context.Context, id string) error {
	s := h.s
	if _, err := snapshot.ParseID(id); err != nil {
		return fmt.Errorf("delete snapshot: %w; give the full ID as list shows it", err)
	}
	err := s.deleteKey(ctx, objectKey(id))
	if notFound(err) {
		return fmt.Errorf("delete snapshot %s: %w%s", id, snapshot.ErrNotFound, s.in())
	}
	if err != nil {
		return fmt.Errorf("delete snapshot %s: %w", id, err)
	}
	return nil
}

// Resolve turns a reference into the ID of a stored snapshot. A reference
// is "latest" (any case: the newest full snapshot, see KindFull), a full
// ID, or a prefix of exactly one stored ID. Nothing matching is
// ErrNotFound (also for "latest" in a store without a full snapshot); a
// prefix matching several IDs is ErrAmbiguous, in an error listing them.
func (h Snapshots) Resolve(ctx context.Context, ref string) (string, error) {
	return h.ResolveFor(ctx, ref, h.connectors)
}

// ResolveFor is Resolve for a command limited to connectors (show, diff or
// restore --connector): "latest" is then the newest snapshot that holds
// every one of them, full or scoped (a full snapshot holds the whole
// cluster, a scoped one the connectors of its Scope). Undo snapshots are
// never "latest". With no connectors it is Resolve. Other references
// resolve as Resolve does, whatever connectors says.
func (h Snapshots) ResolveFor(ctx context.Context, ref string, connectors []string) (string, error) {
	s := h.s
	if ref == "" {
		return "", errors.New("resolve snapshot: empty reference: give an ID, a unique ID prefix or latest")
	}
	if _, err := snapshot.ParseID(ref); err == nil {
		ok, err := s.exists(ctx, objectKey(ref))
		if err != nil {
			return "", fmt.Errorf("resolve snapshot %s: %w", ref, err)
		}
		if !ok {
			return "", fmt.Errorf("resolve snapshot %s: %w%s", ref, snapshot.ErrNotFound, s.in())
		}
		return ref, nil
	}
	if strings.EqualFold(ref, "latest") {
		return s.latest(ctx, connectors)
	}
	ids, err := s.list(ctx)
	if err != nil {
		return "", fmt.Errorf("resolve snapshot %q: %w", ref, err)
	}
	var matches []string
	for _, id := range ids {
		if strings.HasPrefix(id, ref) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("resolve snapshot %q: %w: no ID starts with it%s", ref, snapshot.ErrNotFound, s.in())
	case 1:
		return matches[0], nil
	}
	const show = 10
	list := strings.Join(matches[:min(len(matches), show)], ", ")
	if len(matches) > show {
		list += ", ..."
	}
	return "", fmt.Errorf("resolve snapshot %q: %w: prefix matches %d snapshots (%s): give more of the ID", ref, snapshot.ErrAmbiguous, len(matches), list)
}

// latest returns the newest full snapshot or, given connectors, the newest
// full or scoped snapshot that holds them all. An undo snapshot holds only
// the connectors of one restore, and restoring it reverts that restore, so
// "latest" never means one: running the same "restore latest" twice must
// be a no-op. Undo snapshots are named by ID. Without connectors a scoped
// snapshot is never "latest" either: it would stand in for a whole cluster
// it does not hold.
func (s *Store) latest(ctx context.Context, connectors []string) (string, error) {
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		return "", fmt.Errorf("resolve latest: %w", err)
	}
	for i := len(infos) - 1; i >= 0; i-- {
		if infos[i].Damaged != "" {
			continue
		}
		switch infos[i].EffectiveKind() {
		case snapshot.KindFull:
			return infos[i].ID, nil
		case snapshot.KindScoped:
			if len(connectors) > 0 && infos[i].Holds(connectors) {
				return infos[i].ID, nil
			}
		}
	}
	switch {
	case len(infos) == 0:
		return "", fmt.Errorf("resolve latest: %w: no snapshots%s", snapshot.ErrNotFound, s.in())
	case len(connectors) > 0:
		return "", fmt.Errorf("resolve latest: %w: no full snapshot, and no scoped one holding %s%s; name a snapshot by its ID ('offsetkeeper list')", snapshot.ErrNotFound, strings.Join(connectors, ", "), s.in())
	}
	return "", fmt.Errorf("resolve latest: %w: the store holds no full snapshot%s, only scoped or undo ones; name one by its ID ('offsetkeeper list')", snapshot.ErrNotFound, s.in())
}

// in returns " in store <url>" for messages, or "" when the URL is unknown.
func (s *Store) in() string {
	if s.where == "" {
		return ""
	}
	return " in store " + s.where
}

// objectKey is the key of the snapshot with ID id.
func objectKey(id string) string { return keyPrefix + id + keySuffix }

// nextCreatedAt returns now in UTC, truncated to the microsecond, and
// later than any time it returned before for this Store, so IDs of
// successive Puts sort in order even when the clock has not moved a
// microsecond between them.
func (s *Store) nextCreatedAt() time.Time {
	t := time.Now().UTC().Truncate(time.Microsecond)
	s.clock.Lock()
	defer s.clock.Unlock()
	if !t.After(s.clock.last) {
		t = s.clock.last.Add(time.Microsecond)
	}
	s.clock.last = t
	return t
}

// compressPieces encodes and compresses the pieces of snap into frames
// and returns them in order. Consecutive pieces share a frame up to about
// z.keys source offsets' worth (a small document, or a partition of a few
// keys, is not cut into frames that compress apart); a partition
// compressed as it was read (piece.pre) brings its own frames.
func compressPieces(snap *snapshot.Snapshot, z snapshot.PieceSizes) ([][]byte, error) {
	z = z.OrDefault()
	ps, err := snap.Pieces(z)
	if err != nil {
		return nil, err
	}
	var jobs [][]snapshot.Piece
	weight, from := 0, 0
	for i := range ps {
		if ps[i].Pre != nil {
			if i > from {
				jobs = append(jobs, ps[from:i])
			}
			jobs = append(jobs, ps[i:i+1])
			weight, from = 0, i+1
			continue
		}
		// A piece that would take the frame past z.keys starts the next.
		if w := ps[i].Weight(z); weight > 0 && weight+w > z.Keys {
			jobs = append(jobs, ps[from:i])
			weight, from = 0, i
		}
		weight += ps[i].Weight(z)
	}
	if from < len(ps) {
		jobs = append(jobs, ps[from:])
	}
	framed := make([][][]byte, len(jobs))
	// A one-shot stream lets each run go once it is encoded.
	spent := snap.SpendStream()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	workers := min(max(1, runtime.GOMAXPROCS(0)), len(jobs))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			zw, err := frames.Encoder()
			if err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
				return
			}
			defer frames.Release(zw)
			names := make(map[string]string)
			var buf []byte
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				if p := &jobs[i][0]; p.Pre != nil {
					if p.PreErr != nil {
						mu.Lock()
						firstErr = cmp.Or(firstErr, fmt.Errorf("encode snapshot %s: %w", snap.ID, p.PreErr))
						mu.Unlock()
						next.Store(int64(len(jobs)))
						return
					}
					framed[i] = p.Frames
					if spent {
						p.Frames = nil // Put holds them now, and lets each go once written
						p.Pre.Release()
					}
					continue
				}
				buf = buf[:0]
				for j := range jobs[i] {
					if buf, err = jobs[i][j].AppendTo(buf, names); err != nil {
						mu.Lock()
						firstErr = cmp.Or(firstErr, fmt.Errorf("encode snapshot %s: %w", snap.ID, err))
						mu.Unlock()
						next.Store(int64(len(jobs))) // the others stop too
						return
					}
				}
				framed[i] = [][]byte{zw.EncodeAll(buf, make([]byte, 0, len(buf)/8+64))}
				if spent {
					for j := range jobs[i] {
						if r := jobs[i][j].Run; r != nil {
							r.Release()
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	var out [][]byte
	for _, fs := range framed {
		out = append(out, fs...)
	}
	return out, nil
}

// object is a stored object as encodeObject makes it: the header line and
// the body's zstd frames, written one after the other. The frames are
// never joined into one buffer (a second copy of the body, next to the
// views), but for a sealed object.
type object struct {
	head   []byte // the header line, with its '\n'
	frames [][]byte
}

// join returns the object's bytes in one slice.
func (o object) join() []byte {
	n := len(o.head)
	for _, f := range o.frames {
		n += len(f)
	}
	out := make([]byte, 0, n)
	out = append(out, o.head...)
	for _, f := range o.frames {
		out = append(out, f...)
	}
	return out
}

// writeTo writes the object to w, and lets each frame go once written.
func (o object) writeTo(w io.Writer) error {
	if _, err := w.Write(o.head); err != nil {
		return err
	}
	for i, f := range o.frames {
		if _, err := w.Write(f); err != nil {
			return err
		}
		o.frames[i] = nil
	}
	return nil
}

// encodeObject returns the stored object for snap and its Info. Only the
// compressed body, and a piece of the document per CPU, are ever held in
// memory.
func encodeObject(snap *snapshot.Snapshot, z snapshot.PieceSizes) (object, snapshot.Info, error) {
	frames, err := compressPieces(snap, z)
	if err != nil {
		return object{}, snapshot.Info{}, err
	}
	h := sha256.New()
	var size int64
	for _, f := range frames {
		h.Write(f)
		size += int64(len(f))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	version := snapshot.Version
	head, err := json.Marshal(objectHeader{
		Format:      objectFormat,
		Version:     &version,
		Compression: compressionZstd,
		SHA256:      hex.EncodeToString(sum[:]),
		BodySize:    &size,
	})
	if err != nil {
		return object{}, snapshot.Info{}, fmt.Errorf("encode header: %w", err)
	}
	head = append(head, '\n')
	info := infoOf(snap)
	info.Size = int64(len(head)) + size
	info.SHA256 = hex.EncodeToString(sum[:])
	return object{head: head, frames: frames}, info, nil
}

// decodeObject checks and decodes the stored object data of the snapshot
// with ID id.
func decodeObject(id string, data []byte) (*snapshot.Snapshot, snapshot.Info, error) {
	return decodeObjectAs(id, data, nil)
}

// decodeObjectAs is decodeObject, the source offsets of a streamed
// document decoded into sink (a full SourceTable when nil).
func decodeObjectAs(id string, data []byte, sink snapshot.OffsetSink) (*snapshot.Snapshot, snapshot.Info, error) {
	line, body, ok := cutHeader(data)
	if !ok {
		return nil, snapshot.Info{}, fmt.Errorf("%w: no header line in the first %d bytes (object is %d bytes)", snapshot.ErrCorrupt, maxHeaderSize, len(data))
	}
	h, err := parseHeader(line)
	if err != nil {
		return nil, snapshot.Info{}, fmt.Errorf("%w: decode header: %v", snapshot.ErrCorrupt, err)
	}
	if h.Format != objectFormat {
		return nil, snapshot.Info{}, fmt.Errorf("%w: header format is %q, not %q: not an offsetkeeper snapshot", snapshot.ErrCorrupt, h.Format, objectFormat)
	}
	if h.Version == nil {
		return nil, snapshot.Info{}, fmt.Errorf("%w: header has no version", snapshot.ErrCorrupt)
	}
	if v := *h.Version; v < snapshot.MinVersion || v > snapshot.Version {
		return nil, snapshot.Info{}, fmt.Errorf("%w %d (object header): this build reads versions %d to %d; upgrade offsetkeeper", snapshot.ErrUnsupportedVersion, v, snapshot.MinVersion, snapshot.Version)
	}
	if h.Encryption != "" && h.Encryption != "none" {
		return nil, snapshot.Info{}, fmt.Errorf("snapshot is encrypted with %q, which this build cannot decrypt; use an offsetkeeper build that supports it", h.Encryption)
	}
	if h.Compression != compressionZstd {
		return nil, snapshot.Info{}, fmt.Errorf("snapshot body is compressed with %q; this build reads only %q", h.Compression, compressionZstd)
	}
	if h.BodySize == nil {
		return nil, snapshot.Info{}, fmt.Errorf("%w: header has no body_size", snapshot.ErrCorrupt)
	}
	if n := int64(len(body)); n != *h.BodySize {
		what := "truncated"
		if n > *h.BodySize {
			what = "has trailing data"
		}
		return nil, snapshot.Info{}, fmt.Errorf("%w: object %s: header says the body is %d bytes, found %d; take a new snapshot or restore another ID", snapshot.ErrCorrupt, what, *h.BodySize, n)
	}
	sum := sha256.Sum256(body)
	if got := hex.EncodeToString(sum[:]); got != h.SHA256 {
		return nil, snapshot.Info{}, fmt.Errorf("%w: body SHA-256 is %s, header says %q: the object was modified or damaged; take a new snapshot or restore another ID", snapshot.ErrChecksum, got, h.SHA256)
	}
	// A decoder of its own, dropped with the document: a zstd decoder keeps
	// a reference to the last output it wrote, so a decoder shared by all
	// Gets kept the last document read (the whole decompressed body, of
	// which the Snapshot keeps nothing) alive for as long as the process ran.
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(snapshot.MaxDocumentSize), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, snapshot.Info{}, fmt.Errorf("create zstd decoder: %w", err)
	}
	defer dec.Close()
	snap, err := decodeBody(dec, body, sink)
	if err != nil {
		return nil, snapshot.Info{}, err
	}
	if snap.ID != id {
		return nil, snapshot.Info{}, fmt.Errorf("%w: document ID is %q, not the object's ID", snapshot.ErrCorrupt, snap.ID)
	}
	info := infoOf(snap)
	info.Size = int64(len(data))
	info.SHA256 = h.SHA256
	return snap, info, nil
}

// decodeBody decompresses and decodes a document: streamed (decodeStreamed)
// when it can be, whole otherwise; the source offsets of a streamed one go
// into what to says (a SourceTable for RestoreSink, a tail's seed for
// capture.SeedSink).
func decodeBody(dec *zstd.Decoder, body []byte, sink snapshot.OffsetSink) (*snapshot.Snapshot, error) {
	if err := dec.Reset(bytes.NewReader(body)); err == nil {
		if snap, ok := snapshot.DecodeStreamedAhead(dec, snapshot.WindowAhead, sink); ok {
			return snap, nil
		}
	}
	// Documents compress about 15 times; room that is never written is
	// never touched, and costs no memory.
	doc, err := dec.DecodeAll(body, make([]byte, 0, min(20*int64(len(body))+4096, snapshot.MaxDocumentSize)))
	if err != nil {
		return nil, fmt.Errorf("%w: decompress body: %v", snapshot.ErrCorrupt, err)
	}
	return snapshot.Decode(doc)
}

// infoOf summarizes snap, CreatedAt in UTC; Size and SHA256 are left to
// the caller.
func infoOf(snap *snapshot.Snapshot) snapshot.Info {
	return snapshot.Info{
		ID:         snap.ID,
		CreatedAt:  snap.CreatedAt.UTC(),
		Reason:     snap.Reason,
		Kind:       snap.Kind(),
		Scope:      slices.Clone(snap.Scope),
		Captured:   snap.Captured,
		ClusterID:  snap.ClusterID,
		Connectors: len(snap.Connectors),
		SourceKeys: snap.SourceKeys(),
		SinkGroups: len(snap.SinkGroups),
	}
}

// metadataOf returns the object metadata that holds the summary i.
func metadataOf(i snapshot.Info) map[string]string {
	md := map[string]string{
		metaCreated:    i.CreatedAt.UTC().Format(time.RFC3339Nano),
		metaReason:     i.Reason,
		metaClusterID:  i.ClusterID,
		metaConnectors: strconv.Itoa(i.Connectors),
		metaSourceKeys: strconv.Itoa(i.SourceKeys),
		metaSinkGroups: strconv.Itoa(i.SinkGroups),
		metaSHA256:     i.SHA256,
	}
	if i.Encrypted {
		md[metaEncrypted], md[metaKeyID] = "true", i.KeyID
	}
	md[metaKind] = i.EffectiveKind()
	if i.Captured != "" {
		md[metaCaptured] = i.Captured
	}
	if len(i.Scope) > 0 {
		if b, err := json.Marshal(i.Scope); err == nil && len(b) <= maxMetaScope {
			md[metaScope] = string(b)
		}
	}
	return md
}

// infoFromMetadata reads the summary of the snapshot with ID id back from
// its object metadata; false if any of it is missing or malformed.
func infoFromMetadata(id string, md map[string]string) (snapshot.Info, bool) {
	info := snapshot.Info{ID: id, Reason: md[metaReason], ClusterID: md[metaClusterID], SHA256: md[metaSHA256]}
	info.Encrypted, info.KeyID = md[metaEncrypted] == "true", md[metaKeyID]
	info.Captured = md[metaCaptured]
	// Kind and scope are known from the metadata if they are there, and
	// the scope is (a full snapshot has none); otherwise Kind stays empty
	// for List to find them.
	if k := md[metaKind]; k == snapshot.KindFull {
		info.Kind = k
	} else if k != "" && json.Unmarshal([]byte(md[metaScope]), &info.Scope) == nil {
		info.Kind = k
	}
	for _, k := range []string{metaCreated, metaReason, metaClusterID, metaConnectors, metaSourceKeys, metaSinkGroups, metaSHA256} {
		if _, ok := md[k]; !ok {
			return snapshot.Info{}, false
		}
	}
	var err error
	if info.CreatedAt, err = time.Parse(time.RFC3339Nano, md[metaCreated]); err != nil {
		return snapshot.Info{}, false
	}
	for k, p := range map[string]*int{metaConnectors: &info.Connectors, metaSourceKeys: &info.SourceKeys, metaSinkGroups: &info.SinkGroups} {
		if *p, err = strconv.Atoi(md[k]); err != nil {
			return snapshot.Info{}, false
		}
	}
	if _, err := hex.DecodeString(info.SHA256); err != nil || len(info.SHA256) != 2*sha256.Size {
		return snapshot.Info{}, false
	}
	return info, true
}

// secretParams are substrings of query parameter names whose values are
// never shown.
var secretParams = []string{"secret", "key", "sig", "token", "password", "passwd", "credential", "sas"}

// isSecretParam reports whether the query parameter name may hold a secret.
func isSecretParam(name string) bool {
	name = strings.ToLower(name)
	for _, s := range secretParams {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// redactURL returns raw fit for messages: userinfo dropped, secret-looking
// query parameter values replaced by REDACTED. A path is returned as is.
func redactURL(raw string) string {
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return scheme + "://(unparsable URL)"
	}
	u.User = nil
	q := u.Query()
	redacted := false
	for k := range q {
		if isSecretParam(k) {
			q[k] = []string{"REDACTED"}
			redacted = true
		}
	}
	if redacted {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// secretsIn returns the secrets of a URL or raw query that may be echoed
// in a driver's error: the userinfo and secret-looking parameter values,
// raw and escaped.
func secretsIn(raw string) []string {
	var out []string
	add := func(s string) {
		if len(s) >= 4 {
			out = append(out, s, url.QueryEscape(s), url.PathEscape(s))
		}
	}
	query := raw
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			add(raw)
			return out
		}
		if u.User != nil {
			add(u.User.String())
			add(u.User.Username())
			if p, ok := u.User.Password(); ok {
				add(p)
			}
		}
		query = u.RawQuery
	}
	q, _ := url.ParseQuery(query)
	for k, vs := range q {
		if isSecretParam(k) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}

// scrubError returns err with the secrets of raw (a URL or query) replaced
// by REDACTED in its message; errors.Is and errors.As still see err.
func scrubError(err error, raw string) error {
	msg := err.Error()
	for _, s := range secretsIn(raw) {
		msg = strings.ReplaceAll(msg, s, "REDACTED")
	}
	if msg == err.Error() {
		return err
	}
	return &scrubbedError{msg: msg, err: err}
}

// scrubbedError is an error whose message had secrets removed.
type scrubbedError struct {
	msg string
	err error
}

// Error returns the scrubbed message.
func (e *scrubbedError) Error() string { return e.msg }

// Unwrap returns the original error.
func (e *scrubbedError) Unwrap() error { return e.err }

const (
	// keyPrefix is the folder every snapshot object is stored under.
	keyPrefix = "snapshots/"
	// keySuffix ends every snapshot object's key.
	keySuffix = ".snap"
	// contentType is the MIME type snapshot objects are written with.
	contentType = "application/vnd.offsetkeeper.snapshot"
	// objectFormat is the "format" value of every snapshot object header.
	objectFormat = "offsetkeeper-snapshot"
	// compressionZstd is the only body compression this build reads and writes.
	compressionZstd = "zstd"
	// maxHeaderSize bounds the search for the header line, in bytes.
	maxHeaderSize = 64 << 10
	// listConcurrency bounds the Attributes calls List makes at once.
	listConcurrency = 16
)
