package store

// This file keeps the journal in the store, beside the snapshots:
//
//	journal/<epoch>/epoch.json
//	journal/<epoch>/<level>/<firstSeq:016x>-<lastSeq:016x>-<lastTimeMs:013d>.seg
//
// <epoch> is the ID of the full snapshot the epoch starts from (its base).
// Names alone plan a restore: one LIST gives every epoch, every segment's
// sequence range and last time, without reading an object. See
// docs/journal.md and docs/format.md.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/frames"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// claimSuffix ends the name of a claim object:
//
//	journal/<epoch>/0/<seq:016x>.claim
//
// A raw segment's name holds its last moment, which differs between two
// writers of one sequence number; the claim's name is the epoch and the
// sequence number alone. A writer stores the claim with IfNotExist before
// the segment, its body the segment's key and SHA-256, so the store
// itself lets exactly one writer have each sequence number: a second one
// loses its IfNotExist. Readers ignore claims.
const claimSuffix = ".claim"

// claimKey is the key of the claim of seq in epoch.
func claimKey(epoch string, seq uint64) string {
	return fmt.Sprintf("%s%s/%d/%016x%s", journal.JournalPrefix, epoch, journal.LevelRaw, seq, claimSuffix)
}

// parseClaimKey returns the epoch of a claim's key, or false.
func parseClaimKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, journal.JournalPrefix)
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != strconv.Itoa(journal.LevelRaw) {
		return "", false
	}
	name, ok := strings.CutSuffix(parts[2], claimSuffix)
	if _, err := strconv.ParseUint(name, 16, 64); !ok || err != nil || len(name) != 16 {
		return "", false
	}
	if _, err := snapshot.ParseID(parts[0]); err != nil {
		return "", false
	}
	return parts[0], true
}

// List lists the journal with one LIST of journal/. Objects that
// are not epoch files or segment names are ignored.
func (h Journal) List(ctx context.Context) (*journal.JournalListing, error) {
	s := h.s
	byID := map[string]*journal.EpochInfo{}
	err := s.eachObject(ctx, &blob.ListOptions{Prefix: journal.JournalPrefix}, func(obj *blob.ListObject) error {
		if obj.IsDir {
			return nil
		}
		if id, ok := strings.CutSuffix(strings.TrimPrefix(obj.Key, journal.JournalPrefix), "/"+epochFile); ok {
			if _, err := snapshot.ParseID(id); err == nil {
				e := journal.EpochEntry(byID, id)
				e.HasFile = true
			}
			return nil
		}
		if c, ok := parseClaimKey(obj.Key); ok {
			e := journal.EpochEntry(byID, c)
			e.Claims = append(e.Claims, obj.Key)
			return nil
		}
		si, ok := journal.ParseSegmentKey(obj.Key)
		if !ok {
			return nil
		}
		si.Size = obj.Size
		e := journal.EpochEntry(byID, si.Epoch)
		e.Segments = append(e.Segments, si)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list journal: %w", err)
	}
	out := &journal.JournalListing{}
	for _, e := range byID {
		journal.SortSegments(e.Segments)
		out.Epochs = append(out.Epochs, *e)
	}
	slices.SortFunc(out.Epochs, func(a, b journal.EpochInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// PutEpoch writes journal/<ID>/epoch.json with IfNotExist; an epoch
// already stored is ErrExists.
func (h Journal) PutEpoch(ctx context.Context, e *journal.Epoch) error {
	s := h.s
	if _, err := snapshot.ParseID(e.ID); err != nil {
		return fmt.Errorf("put journal epoch: %w", err)
	}
	e.Format, e.Version = epochFormat, journal.JournalVersion
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("put journal epoch %s: %w", e.ID, err)
	}
	return s.putOnce(ctx, journal.JournalPrefix+e.ID+"/"+epochFile, "application/json", append(data, '\n'))
}

// GetEpoch reads the epoch with that ID; a missing one is ErrNotFound.
func (h Journal) GetEpoch(ctx context.Context, id string) (*journal.Epoch, error) {
	s := h.s
	data, err := s.readAll(ctx, journal.JournalPrefix+id+"/"+epochFile)
	if notFound(err) {
		return nil, fmt.Errorf("read journal epoch %s: %w%s", id, journal.ErrNotFound, s.in())
	}
	if err != nil {
		return nil, fmt.Errorf("read journal epoch %s: %w", id, err)
	}
	var e journal.Epoch
	if err := json.Unmarshal(data, &e); err != nil || e.Format != epochFormat {
		return nil, fmt.Errorf("read journal epoch %s: %w: not an epoch file", id, journal.ErrCorrupt)
	}
	if e.Version < journal.MinJournalVersion || e.Version > journal.JournalVersion {
		return nil, fmt.Errorf("read journal epoch %s: %w %d: this build reads journal versions %d to %d", id, journal.ErrUnsupportedVersion, e.Version, journal.MinJournalVersion, journal.JournalVersion)
	}
	if e.ID != id {
		return nil, fmt.Errorf("read journal epoch %s: %w: it says it is epoch %q", id, journal.ErrCorrupt, e.ID)
	}
	return &e, nil
}

// putOnce writes one object with IfNotExist; one already stored is
// ErrExists.
func (s *Store) putOnce(ctx context.Context, key, ctype string, data []byte) error {
	err := s.put(ctx, key, &blob.WriterOptions{IfNotExist: true, ContentType: ctype}, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, nil)
	if alreadyExists(err) {
		return fmt.Errorf("write %s%s: %w", key, s.in(), snapshot.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// PutSegment writes seg as one immutable object with IfNotExist (a
// sequence already written is ErrExists: another leader writes this
// epoch) and returns its listing entry. LastDigest of a raw segment is
// computed here. With a Keeper the body is encrypted, the object name
// bound in the additional data, so a segment cannot be passed off as
// another.
//
// A raw segment first claims its sequence number (see claimSuffix): a
// number another writer claimed is a *FencedError. A PutSegment that
// failed may be called again with the same seg: it writes the same bytes
// under the same name, and a claim or segment an earlier try stored (the
// reply lost) is found and taken as written.
func (h Journal) PutSegment(ctx context.Context, seg *journal.Segment) (journal.SegmentInfo, error) {
	s := h.s
	if seg.Obj == nil {
		if err := s.encodeSegment(ctx, seg); err != nil {
			return journal.SegmentInfo{}, err
		}
	}
	key, obj := seg.Key, seg.Obj
	if seg.Level == journal.LevelRaw {
		if err := s.claim(ctx, seg); err != nil {
			return journal.SegmentInfo{}, fmt.Errorf("put journal segment: %w", err)
		}
	}
	err := s.putOnce(ctx, key, segmentType, obj)
	if errors.Is(err, snapshot.ErrExists) {
		// An earlier try stored it (the reply was lost): the same bytes are
		// this write.
		if stored, rerr := s.readAll(ctx, key); rerr == nil && bytes.Equal(stored, obj) {
			err = nil
		}
	}
	if err != nil {
		return journal.SegmentInfo{}, fmt.Errorf("put journal segment: %w", err)
	}
	si, _ := journal.ParseSegmentKey(key)
	si.Size = int64(len(obj))
	return si, nil
}

// claim stores the claim of seg's sequence number, or finds it stored by
// an earlier try of this write.
func (s *Store) claim(ctx context.Context, seg *journal.Segment) error {
	sum := sha256.Sum256(seg.Obj)
	body := []byte(seg.Key + " " + hex.EncodeToString(sum[:]) + "\n")
	ck := claimKey(seg.Epoch, seg.FirstSeq)
	err := s.putOnce(ctx, ck, "text/plain", body)
	if !errors.Is(err, snapshot.ErrExists) {
		return err
	}
	got, err := s.readAll(ctx, ck)
	if err != nil {
		return fmt.Errorf("read journal claim %s: %w", ck, err)
	}
	if bytes.Equal(got, body) {
		return nil
	}
	other, _, _ := strings.Cut(string(got), " ")
	stored, err := s.exists(ctx, other)
	if err != nil {
		return fmt.Errorf("read journal claim %s: %w", ck, err)
	}
	return &journal.FencedError{Epoch: seg.Epoch, Seq: seg.FirstSeq, Other: other, Stored: stored}
}

// encodeSegment sets seg's key and stored bytes.
func (s *Store) encodeSegment(ctx context.Context, seg *journal.Segment) error {
	plain := journal.EncodeEntries(seg.Entries)
	if seg.Level == 0 {
		sum := sha256.Sum256(plain)
		seg.LastDigest = hex.EncodeToString(sum[:])
	}
	key := journal.SegmentKey(seg.Epoch, seg.Level, seg.FirstSeq, seg.LastSeq, seg.LastTime)
	zw, err := frames.Encoder()
	if err != nil {
		return err
	}
	body := zw.EncodeAll(plain, nil)
	frames.Release(zw)
	version := journal.JournalVersion
	h := objectHeader{
		Format: segmentFormat, Version: &version, segmentFields: &segmentFields{Epoch: seg.Epoch, Level: seg.Level,
			FirstSeq: seg.FirstSeq, LastSeq: seg.LastSeq, FirstTimeMs: journal.Ms(seg.FirstTime), LastTimeMs: journal.Ms(seg.LastTime),
			PrevDigest: seg.PrevDigest, LastDigest: seg.LastDigest, Entries: len(seg.Entries)},
		Compression: compressionZstd, IntervalMs: seg.Interval.Milliseconds(),
	}
	sb, err := sealBody(ctx, s.keeper, "segment", body, segmentAAD(key))
	if err != nil {
		return fmt.Errorf("put journal segment %s: %w", key, err)
	}
	body = sb.data
	size := int64(len(body))
	h.Encryption, h.KeyID, h.SHA256, h.BodySize = sb.encryption, sb.keyID, sb.sha256, &size
	head, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("put journal segment %s: %w", key, err)
	}
	seg.Key, seg.Obj = key, append(append(head, '\n'), body...)
	return nil
}

// flushFile is journal/<epoch>/flushed.json, the journal's last flush
// that wrote no segment (nothing changed), overwritten at each: with the
// interval the segments record, it tells a reader whether the journal is
// still flushing (see Store.StateAt).
const flushFile = "flushed.json"

// flushMark is the body of flushFile.
type flushMark struct {
	Epoch      string `json:"epoch"`
	Seq        uint64 `json:"seq"`
	TimeMs     int64  `json:"time_ms"`
	IntervalMs int64  `json:"interval_ms"`
}

// PutFlushMark records a flush of epoch that wrote no segment: the journal
// is complete to seq and to t, and flushes every interval.
func (h Journal) PutFlushMark(ctx context.Context, epoch string, seq uint64, t time.Time, interval time.Duration) error {
	s := h.s
	data, err := json.Marshal(flushMark{Epoch: epoch, Seq: seq, TimeMs: journal.Ms(t), IntervalMs: interval.Milliseconds()})
	if err != nil {
		return err
	}
	key := journal.JournalPrefix + epoch + "/" + flushFile
	err = s.put(ctx, key, &blob.WriterOptions{ContentType: "application/json"}, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, nil)
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// journalFlushed returns when the journal of e last flushed, as far as the
// store tells (the last segment of c's chain, or a later flush mark that
// follows it), and the interval it flushes at (0: not recorded, a journal
// written before intervals were).
func (s *Store) journalFlushed(ctx context.Context, e *journal.EpochInfo, c snapshot.Coverage) (time.Time, time.Duration, error) {
	last, interval := c.To, time.Duration(0)
	data, err := s.readFlushMark(ctx, e.ID)
	if err != nil && !notFound(err) {
		return last, 0, fmt.Errorf("read journal epoch %s: %w", e.ID, err)
	}
	var m flushMark
	if err == nil && json.Unmarshal(data, &m) == nil && m.Epoch == e.ID && m.Seq >= c.LastSeq {
		if t := journal.FromMs(m.TimeMs); t.After(last) {
			last = t
		}
		interval = time.Duration(m.IntervalMs) * time.Millisecond
	}
	if interval > 0 || c.LastSeq == 0 {
		return last, interval, nil
	}
	chain, _ := e.Chain()
	if len(chain) == 0 {
		return last, 0, nil
	}
	// The header of the last segment records the interval.
	r, err := s.newReader(ctx, chain[len(chain)-1].Key)
	if err != nil {
		return last, 0, fmt.Errorf("read journal segment %s: %w", chain[len(chain)-1].Key, err)
	}
	defer r.Close()
	line, _ := bufio.NewReader(io.LimitReader(r, maxHeaderSize)).ReadSlice('\n')
	if h, err := parseHeader(bytes.TrimSuffix(line, []byte("\n"))); err == nil {
		interval = time.Duration(h.IntervalMs) * time.Millisecond
	}
	return last, interval, nil
}

// readFlushMark reads the flush mark of epoch id. The daemon rewrites the
// mark at every flush that found nothing new, and a bucket may not replace
// an object atomically (fileblob truncates and rewrites its attributes
// file in place, where a reader finds it empty: EOF, for as long as a
// loaded machine keeps the writer from its next step): a failed read is
// tried again, backing off to about half a second in all, before it fails
// the moment asked for.
func (s *Store) readFlushMark(ctx context.Context, id string) ([]byte, error) {
	var err error
	for try := range 7 {
		var data []byte
		if data, err = s.readAll(ctx, journal.JournalPrefix+id+"/"+flushFile); err == nil || notFound(err) {
			return data, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(5<<try) * time.Millisecond):
		}
	}
	return nil, err
}

// ReadSegment reads and checks the segment si names (without a Keeper, an
// encrypted segment is ErrEncrypted, with its header in the Segment): its header, the
// SHA-256 of the stored body, the decryption (which authenticates the
// object name), the name against the header, and for a raw segment that
// its entries hash to its LastDigest. Every error names the object.
func (h Journal) ReadSegment(ctx context.Context, si journal.SegmentInfo) (*journal.Segment, error) {
	s := h.s
	return s.readSegment(ctx, si, false)
}

// readSegment is ReadSegment; with skipEvents the Segment holds no event
// entries (they are still checked).
func (s *Store) readSegment(ctx context.Context, si journal.SegmentInfo, skipEvents bool) (*journal.Segment, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("read journal segment %s: %w: %s", si.Key, journal.ErrJournalBroken, fmt.Sprintf(format, args...))
	}
	data, err := s.readAll(ctx, si.Key)
	if notFound(err) {
		return nil, bad("the object is missing (deleted since listed)")
	}
	if err != nil {
		return nil, fmt.Errorf("read journal segment %s: %w", si.Key, err)
	}
	line, body, ok := cutHeader(data)
	if !ok {
		return nil, bad("no header line")
	}
	h, err := parseHeader(line)
	if err != nil || h.Format != segmentFormat {
		return nil, bad("not a journal segment header")
	}
	if v := h.version(); v < journal.MinJournalVersion || v > journal.JournalVersion {
		return nil, fmt.Errorf("read journal segment %s: %w %d: this build reads journal versions %d to %d; upgrade offsetkeeper", si.Key, journal.ErrUnsupportedVersion, v, journal.MinJournalVersion, journal.JournalVersion)
	}
	if h.Epoch != si.Epoch || h.Level != si.Level || h.FirstSeq != si.FirstSeq || h.LastSeq != si.LastSeq || h.LastTimeMs != journal.Ms(si.LastTime) {
		return nil, bad("its header says epoch %s level %d seq %d-%d, not what its name says", h.Epoch, h.Level, h.FirstSeq, h.LastSeq)
	}
	if int64(len(body)) != h.bodySize() {
		return nil, bad("the header says the body is %d bytes, found %d", h.bodySize(), len(body))
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != h.SHA256 {
		return nil, bad("body SHA-256 does not match the header: the object was altered or damaged")
	}
	if h.Compression != compressionZstd {
		return nil, bad("body compressed with %q", h.Compression)
	}
	switch h.Encryption {
	case "", "none":
	case encryptionBound:
		if s.keeper == nil {
			msg := fmt.Sprintf("journal segment %s is encrypted: pass --encrypt-key (OFFSETKEEPER_ENCRYPT_KEY)", si.Key)
			if h.KeyID != "" {
				msg += " with the key it was encrypted with, key " + h.KeyID
			}
			// What the header says, checked against the body's checksum,
			// for a verify without the key.
			return &journal.Segment{Epoch: h.Epoch, Level: h.Level, FirstSeq: h.FirstSeq, LastSeq: h.LastSeq,
				FirstTime: journal.FromMs(h.FirstTimeMs), LastTime: journal.FromMs(h.LastTimeMs), PrevDigest: h.PrevDigest, LastDigest: h.LastDigest}, &encryptedError{msg: msg}
		}
		if body, err = s.keeper.open(ctx, "journal segment "+si.Key, h.KeyID, body, segmentAAD(si.Key)); err != nil {
			return nil, err
		}
	default:
		return nil, bad("encrypted with %q, which this build cannot decrypt", h.Encryption)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxSegmentBody), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("create zstd decoder: %w", err)
	}
	defer dec.Close()
	plain, err := dec.DecodeAll(body, nil)
	if err != nil {
		return nil, bad("decompress body: %v", err)
	}
	if h.Level == 0 {
		if sum := sha256.Sum256(plain); hex.EncodeToString(sum[:]) != h.LastDigest {
			return nil, bad("its entries do not hash to its digest")
		}
	}
	entries, count, err := journal.DecodeEntriesSkipping(plain, min(h.Entries, len(plain)), skipEvents)
	if err != nil {
		return nil, bad("%v", err)
	}
	if count != h.Entries {
		return nil, bad("header says %d entries, found %d", h.Entries, count)
	}
	return &journal.Segment{
		Epoch: h.Epoch, Level: h.Level, FirstSeq: h.FirstSeq, LastSeq: h.LastSeq,
		FirstTime: journal.FromMs(h.FirstTimeMs), LastTime: journal.FromMs(h.LastTimeMs),
		PrevDigest: h.PrevDigest, LastDigest: h.LastDigest, Entries: entries,
	}, nil
}

// DeleteObject removes one journal object by key; a missing one is
// not an error.
func (h Journal) DeleteObject(ctx context.Context, key string) error {
	s := h.s
	if !strings.HasPrefix(key, journal.JournalPrefix) {
		return fmt.Errorf("delete journal object %q: not under %s", key, journal.JournalPrefix)
	}
	err := s.deleteKey(ctx, key)
	if err != nil && !notFound(err) {
		return fmt.Errorf("delete journal object %s: %w", key, err)
	}
	// A raw segment's claim goes with it.
	if si, ok := journal.ParseSegmentKey(key); ok && si.Level == journal.LevelRaw {
		err := s.deleteKey(ctx, claimKey(si.Epoch, si.FirstSeq))
		if err != nil && !notFound(err) {
			return fmt.Errorf("delete journal object %s: %w", claimKey(si.Epoch, si.FirstSeq), err)
		}
	}
	return nil
}

// deleteEpoch removes an epoch's segments and its epoch file.
func (s *Store) deleteEpoch(ctx context.Context, e journal.EpochInfo) error {
	for _, si := range e.Segments {
		if err := s.Journal().DeleteObject(ctx, si.Key); err != nil {
			return err
		}
	}
	for _, k := range e.Claims {
		if err := s.Journal().DeleteObject(ctx, k); err != nil {
			return err
		}
	}
	if err := s.Journal().DeleteObject(ctx, journal.JournalPrefix+e.ID+"/"+flushFile); err != nil {
		return err
	}
	return s.Journal().DeleteObject(ctx, journal.JournalPrefix+e.ID+"/"+epochFile)
}

// Prune deletes the journal of every epoch whose base snapshot is
// no longer stored (deleted by retention or by hand), except the newest
// epoch, which a daemon may be writing. An epoch whose base is kept keeps
// every segment: those are what lead from that snapshot to the next. It
// returns the epochs deleted.
func (h Journal) Prune(ctx context.Context) ([]string, error) {
	s := h.s
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.Journal().List(ctx)
	if err != nil {
		return nil, err
	}
	kept := make(map[string]bool, len(infos))
	for _, i := range infos {
		kept[i.ID] = true
	}
	var removed []string
	for i, e := range l.Epochs {
		if i == len(l.Epochs)-1 || kept[e.ID] {
			continue
		}
		if err := s.deleteEpoch(ctx, e); err != nil {
			return removed, err
		}
		removed = append(removed, e.ID)
	}
	return removed, nil
}

// Verify reads every segment of every epoch and checks it (see
// ReadSegment) and the chain: each follows the one before by sequence
// and digest, the first starts at 1, and the epoch file reads.
func (h Journal) Verify(ctx context.Context) ([]journal.EpochCheck, error) {
	s := h.s
	l, err := s.Journal().List(ctx)
	if err != nil {
		return nil, err
	}
	var out []journal.EpochCheck
	for _, e := range l.Epochs {
		c := journal.EpochCheck{Epoch: e.ID}
		out = append(out, c)
		cp := &out[len(out)-1]
		if !e.HasFile {
			cp.Err = fmt.Errorf("journal epoch %s: %w: epoch.json is missing", e.ID, journal.ErrJournalBroken)
			continue
		}
		if _, err := s.Journal().GetEpoch(ctx, e.ID); err != nil {
			cp.Err = err
			continue
		}
		if ok, err := s.exists(ctx, objectKey(e.ID)); err != nil || !ok {
			cp.Err = err
			if err == nil {
				cp.Err = fmt.Errorf("journal epoch %s: %w: its base snapshot %s is gone: not restorable", e.ID, journal.ErrJournalBroken, e.ID)
			}
			continue
		}
		_, hole := e.Chain()
		cp.Err = s.verifyLevels(ctx, e, cp)
		if cp.Err == nil {
			cp.Err = hole
		}
	}
	return out, nil
}

// verifyLevels reads every segment of e, of every level, and checks that
// the digest chain holds across levels: the first of the epoch has no
// prev_digest, every other's prev_digest is the last_digest of the
// segments that end at the seq before it, and all segments that end at
// one seq (a raw one and the merged ones holding it) agree on its digest.
func (s *Store) verifyLevels(ctx context.Context, e journal.EpochInfo, cp *journal.EpochCheck) error {
	digest := map[uint64]string{}
	var segs []*journal.Segment
	for _, si := range e.Segments {
		seg, err := s.Journal().ReadSegment(ctx, si)
		if errors.Is(err, snapshot.ErrEncrypted) && seg != nil {
			cp.Encrypted++
			err = nil
		}
		if err != nil {
			return err
		}
		if d, ok := digest[seg.LastSeq]; ok && d != seg.LastDigest {
			return fmt.Errorf("read journal segment %s: %w: its last digest differs from another segment ending at seq %d (digest chain broken across levels)", si.Key, journal.ErrJournalBroken, seg.LastSeq)
		}
		digest[seg.LastSeq] = seg.LastDigest
		segs = append(segs, seg)
		cp.Segments++
	}
	for i, seg := range segs {
		key := e.Segments[i].Key
		if seg.FirstSeq == 1 {
			if seg.PrevDigest != "" {
				return fmt.Errorf("read journal segment %s: %w: the epoch's first segment names a previous one", key, journal.ErrJournalBroken)
			}
			continue
		}
		d, ok := digest[seg.FirstSeq-1]
		if !ok {
			continue // the segments before it were deleted (a hole Chain reports, or raw ones merged)
		}
		if seg.PrevDigest != d {
			return fmt.Errorf("read journal segment %s: %w: it does not follow segment %d (digest chain broken: a segment is missing, altered or reordered)", key, journal.ErrJournalBroken, seg.FirstSeq-1)
		}
	}
	return nil
}

// segmentPrefetch is how many segments eachSegment reads ahead.
const segmentPrefetch = 4

// eachSegment reads the segments of chain in order (without their event
// entries, which a replay does not use), up to segmentPrefetch
// ahead on goroutines of their own (reading, checking, decompressing and
// decoding a segment costs about what applying it does), checks that each
// follows the one before, and calls fn with each until fn returns false
// or an error. The first error, naming its segment, ends it.
func (s *Store) eachSegment(ctx context.Context, chain []journal.SegmentInfo, fn func(*journal.Segment) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		seg *journal.Segment
		err error
	}
	results := make([]chan result, len(chain))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	sem := make(chan struct{}, segmentPrefetch)
	go func() {
		for i, si := range chain {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				seg, err := s.readSegment(ctx, si, true)
				results[i] <- result{seg, err}
			}()
		}
	}()
	var prev *journal.Segment
	for i, si := range chain {
		var r result
		select {
		case r = <-results[i]:
			<-sem
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.err != nil {
			return r.err
		}
		if err := journal.CheckLink(prev, r.seg, si.Key); err != nil {
			return err
		}
		prev = r.seg
		if more, err := fn(r.seg); err != nil || !more {
			return err
		}
	}
	return nil
}

// rawBlock is how many raw sequence numbers epochFor lists at once: the
// raw segments whose first seq shares all hex digits but the last two.
const rawBlock = 256

// epochFor lists what a state at moment at reads of epoch id, without
// listing every segment: whether its epoch file is stored, its level 2
// segments, the level 1 segments that start where the farthest level 2
// segment at or before at ends (a plan applies at most one of each), and
// the raw segments after the merged ones the plan applies whole, block by
// block of rawBlock seqs, until the chain ends or a block reaches past at
// by more than the late records a replay reads. Every segment a plan for
// at starts from is listed, so PlanAt of the result is that of the whole
// listing, and its coverage reaches at when the journal does.
func (s *Store) epochFor(ctx context.Context, id string, at time.Time) (journal.EpochInfo, error) {
	e := journal.EpochInfo{ID: id}
	dir := journal.JournalPrefix + id + "/"
	ok, err := s.exists(ctx, dir+epochFile)
	if err != nil {
		return e, fmt.Errorf("read journal epoch %s: %w", id, err)
	}
	e.HasFile = ok
	if !ok {
		return e, nil
	}
	list := func(prefix string, keep func(journal.SegmentInfo) bool) (uint64, bool, error) {
		var last uint64
		past := false
		err := s.listKeys(ctx, &blob.ListOptions{Prefix: prefix}, func(obj *blob.ListObject) {
			si, ok := journal.ParseSegmentKey(obj.Key)
			if !ok || si.Epoch != id {
				return
			}
			last = max(last, si.LastSeq)
			if keep(si) {
				si.Size = obj.Size
				e.Segments = append(e.Segments, si)
				past = past || si.LastTime.After(at.Add(journal.LateRecords+snapshot.JournalHeartbeat))
			}
		})
		return last, past, err
	}
	all := func(journal.SegmentInfo) bool { return true }
	if _, _, err := list(fmt.Sprintf("%s%d/", dir, journal.LevelHour), all); err != nil {
		return e, err
	}
	first := uint64(1)
	for _, si := range e.Segments {
		if !si.LastTime.After(at) {
			first = max(first, si.LastSeq+1)
		}
	}
	if _, _, err := list(fmt.Sprintf("%s%d/%016x-", dir, journal.LevelMinute, first), all); err != nil {
		return e, err
	}
	journal.SortSegments(e.Segments)
	plan, _, _ := (&journal.EpochInfo{ID: id, Segments: e.Segments}).PlanAt(at)
	from := uint64(1)
	if len(plan) > 0 {
		from = plan[len(plan)-1].LastSeq + 1
	}
	for block := from - from%rawBlock; ; block += rawBlock {
		last, past, err := list(fmt.Sprintf("%s%d/%014x", dir, journal.LevelRaw, block/rawBlock), func(si journal.SegmentInfo) bool {
			return si.Level == journal.LevelRaw && si.FirstSeq >= from
		})
		if err != nil {
			return e, err
		}
		if past || last < block+rawBlock-1 {
			break // past the moment, or the chain ends (or breaks) in this block
		}
	}
	journal.SortSegments(e.Segments)
	return e, nil
}

// listKeys calls fn with every object a LIST with opts returns.
func (s *Store) listKeys(ctx context.Context, opts *blob.ListOptions, fn func(*blob.ListObject)) error {
	err := s.eachObject(ctx, opts, func(obj *blob.ListObject) error {
		fn(obj)
		return nil
	})
	if err != nil {
		return fmt.Errorf("list journal: %w", err)
	}
	return nil
}

const (
	epochFile        = "epoch.json"
	segmentFormat    = "offsetkeeper-journal-segment"
	segmentType      = "application/vnd.offsetkeeper.journal-segment"
	epochFormat      = "offsetkeeper-journal-epoch"
	maxSegmentBody   = 1 << 30
	segmentSealLabel = "offsetkeeper-journal/1 "
)
