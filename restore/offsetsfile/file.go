package offsetsfile

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Formats of an offsets file.
const (
	// FormatConnectREST is the body of GET /connectors/{name}/offsets (and
	// of PATCH): {"offsets":[{"partition":{...},"offset":{...}|null}]}. It
	// does not name its connector.
	FormatConnectREST = "connect-rest"
	// FormatCSV is what kafka-consumer-groups.sh --reset-offsets
	// --from-file takes (and --export writes): group,topic,partition,offset
	// lines, no quoting needed, with an optional header line.
	FormatCSV = "csv"
	// FormatStandalone is a standalone worker's offsets file
	// (offset.storage.file.filename; see ReadStandaloneFile).
	FormatStandalone = "standalone"
)

// ReasonFile is the reason of a snapshot made from an offsets file.
const ReasonFile = "file"

// CSVHeader is the optional first line of a CSV offsets file;
// CSVGroupHeader that of the one-group form (ParseGroupCSV).
const (
	CSVHeader      = "group,topic,partition,offset"
	CSVGroupHeader = "topic,partition,offset"
)

// OffsetsFile is an offsets file (restore --from-file) read and checked
// on its own: either format, every problem found at once. Snapshot checks
// it against the cluster and turns it into a snapshot to restore.
type OffsetsFile struct {
	// Name is the file's name, for messages and the snapshot ID.
	Name string
	// Format is FormatConnectREST, FormatCSV or FormatStandalone.
	Format string
	// Connector is the connector a REST body is for.
	Connector string
	// Entries are a REST body's partitions, in file order.
	Entries []FileEntry
	// Rows are a CSV file's lines, in file order.
	Rows []FileRow
	// Standalone are a standalone offsets file's entries, in file order.
	Standalone []StandaloneEntry

	// problems are what ParseOffsetsFile found; Snapshot reports them again
	// with its own.
	problems []string
}

// FileEntry is one {"partition":...,"offset":...} of a REST body.
type FileEntry struct {
	// Index is its position in the offsets array (0-based); Line the line
	// it starts on (1-based).
	Index, Line int
	// OffsetEntry is the partition and its offset, nil for null: the
	// partition's offset is removed.
	connectjson.OffsetEntry
}

// FileRow is one line of a CSV file.
type FileRow struct {
	Line      int
	Group     string
	Topic     string
	Partition int32
	Offset    int64
}

// where names an entry for messages.
func (e FileEntry) where() string { return fmt.Sprintf("offsets[%d] (line %d)", e.Index, e.Line) }

// problems collects every problem of a file.
type problems struct {
	name string
	list []string
}

func (p *problems) add(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

// lineOf is the first "line N" of a problem, 0 if none: problems are
// listed in file order.
var lineOf = regexp.MustCompile(`line (\d+)`)

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	sort.SliceStable(p.list, func(i, j int) bool { return firstLine(p.list[i]) < firstLine(p.list[j]) })
	shown := p.list
	if len(shown) > 50 {
		shown = append(shown[:50:50], fmt.Sprintf("... and %d more", len(p.list)-50))
	}
	return fmt.Errorf("%w: %s: %s, nothing was written:\n  - %s", restore.ErrBadFile, p.name, english.Count(len(p.list), "problem", "problems"), strings.Join(shown, "\n  - "))
}

// ParseOffsetsFile reads an offsets file whole, in either format (told by
// its content: a JSON object is a REST body, anything else CSV), and
// checks everything that needs no cluster: the JSON shape, value types,
// partition and offset numbers, duplicates. connector names the connector
// a REST body is for (required for it, not allowed with CSV). Every
// problem is reported at once, with its line or entry number, in an error
// wrapping restore.ErrBadFile. With that error it still returns the file, holding
// the entries that are valid: its Snapshot reports the same problems again
// together with those only the cluster can tell, so that a caller can show
// every problem in one go.
func ParseOffsetsFile(name string, data []byte, connector string) (*OffsetsFile, error) {
	if IsStandaloneFile(data) {
		return parseStandalone(name, data)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte order mark
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	f := &OffsetsFile{Name: name}
	p := &problems{name: name}
	switch {
	case len(bytes.TrimSpace(trimmed)) == 0:
		p.add("the file is empty")
	case trimmed[0] == '{':
		f.Format = FormatConnectREST
		f.Connector = connector
		if connector == "" {
			p.add("a Connect REST offsets body does not name its connector: give it with --connector NAME")
		}
		f.parseREST(data, p)
	default:
		f.Format = FormatCSV
		if connector != "" {
			p.add("a CSV file names the groups it is for; --connector is for a Connect REST offsets body (it would pick groups out of a CSV file only by their connector: leave it out)")
		}
		f.parseCSV(data, p, "")
	}
	f.problems = slices.Clone(p.list)
	return f, p.err()
}

// ParseGroupCSV is ParseOffsetsFile for a CSV file of one consumer group,
// group: what kafka-consumer-groups.sh --reset-offsets --export writes for
// a single --group, topic,partition,offset lines (with an optional
// header). Lines of four fields are accepted too if they name group.
func ParseGroupCSV(name string, data []byte, group string) (*OffsetsFile, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	f := &OffsetsFile{Name: name, Format: FormatCSV}
	p := &problems{name: name}
	switch trimmed := bytes.TrimSpace(data); {
	case group == "":
		p.add("no group given for the topic,partition,offset lines")
	case len(trimmed) == 0:
		p.add("the file is empty")
	case trimmed[0] == '{':
		p.add("a Connect REST offsets body is not a group's CSV file: restore it with --connector NAME and no group")
	default:
		f.parseCSV(data, p, group)
	}
	f.problems = slices.Clone(p.list)
	return f, p.err()
}

func (f *OffsetsFile) parseREST(data []byte, p *problems) {
	line := func(off int64) int { return bytes.Count(data[:min(int(off), len(data))], []byte("\n")) + 1 }
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	expect := func(want json.Delim, what string) bool {
		tok, err := dec.Token()
		if err != nil {
			p.add("line %d: %s: %v", line(dec.InputOffset()), what, err)
			return false
		}
		if d, ok := tok.(json.Delim); !ok || d != want {
			p.add("line %d: %s: found %v", line(dec.InputOffset()), what, tok)
			return false
		}
		return true
	}
	if !expect('{', `want {"offsets":[...]}`) {
		return
	}
	seenOffsets := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			p.add("line %d: %v", line(dec.InputOffset()), err)
			return
		}
		key, _ := tok.(string)
		if key != "offsets" {
			p.add("line %d: unknown field %q: a Connect REST offsets body has only \"offsets\"", line(dec.InputOffset()), key)
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				p.add("line %d: %v", line(dec.InputOffset()), err)
				return
			}
			continue
		}
		if seenOffsets {
			p.add("line %d: \"offsets\" given twice", line(dec.InputOffset()))
		}
		seenOffsets = true
		if !expect('[', `"offsets" must be an array`) {
			return
		}
		for i := 0; dec.More(); i++ {
			start := dec.InputOffset()
			for start < int64(len(data)) && strings.ContainsRune(" \t\r\n,", rune(data[start])) {
				start++
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				p.add("offsets[%d] (line %d): %v", i, line(start), err)
				return
			}
			f.parseEntry(FileEntry{Index: i, Line: line(start)}, raw, p)
		}
		if !expect(']', "end of \"offsets\"") {
			return
		}
	}
	if !expect('}', "end of the body") {
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		p.add("line %d: data after the JSON body", line(dec.InputOffset()))
	}
	if !seenOffsets {
		p.add(`no "offsets" field: want {"offsets":[{"partition":{...},"offset":{...}|null}, ...]}`)
	} else if len(f.Entries) == 0 && len(p.list) == 0 {
		p.add(`"offsets" is empty: Connect rejects an empty list ("Partitions / offsets need to be provided"), and there is nothing to restore`)
	}
	// Duplicate partitions: Connect would keep one, silently.
	for i := range f.Entries {
		for j := range i {
			if connectjson.Equal(f.Entries[i].Partition, f.Entries[j].Partition) {
				p.add("%s: partition %s is also %s", f.Entries[i].where(), connectjson.RESTMap(f.Entries[i].Partition), f.Entries[j].where())
				break
			}
		}
	}
}

func (f *OffsetsFile) parseEntry(e FileEntry, raw json.RawMessage, p *problems) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		p.add("%s: want {\"partition\":{...},\"offset\":{...}|null}", e.where())
		return
	}
	for k := range fields {
		if k != "partition" && k != "offset" {
			p.add("%s: unknown field %q", e.where(), k)
		}
	}
	ok := true
	pr, has := fields["partition"]
	switch {
	case !has || string(bytes.TrimSpace(pr)) == "null":
		p.add("%s: no partition (it may not be null)", e.where())
		ok = false
	default:
		m, err := flatMap(pr)
		if err != nil {
			p.add("%s: partition: %v", e.where(), err)
			ok = false
		}
		e.Partition = m
	}
	or, has := fields["offset"]
	switch {
	case !has:
		p.add("%s: no offset: give an object, or null to remove the partition's offset", e.where())
		ok = false
	case string(bytes.TrimSpace(or)) == "null":
	default:
		m, err := flatMap(or)
		if err != nil {
			p.add("%s: offset: %v", e.where(), err)
			ok = false
		}
		e.Offset = m
	}
	if ok {
		f.Entries = append(f.Entries, e)
	}
}

// flatMap parses a partition or offset object as Connect does and checks
// what OffsetUtils.validateFormat checks: values are null or primitive.
// Duplicate field names are refused (Connect would keep the last).
func flatMap(raw []byte) (connectjson.Map, error) {
	m, err := connectjson.ParseMap(raw)
	if err != nil {
		return nil, fmt.Errorf("want a JSON object: %v", err)
	}
	seen := map[string]bool{}
	for i, f := range m {
		if err := connectjson.CheckFlat(m[i : i+1]); err != nil {
			return nil, err
		}
		if seen[f.Key] {
			return nil, fmt.Errorf("field %q appears twice", f.Key)
		}
		seen[f.Key] = true
	}
	return m, nil
}

// parseCSV reads group,topic,partition,offset lines or, when group is set,
// topic,partition,offset lines of that group.
func (f *OffsetsFile) parseCSV(data []byte, p *problems, group string) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	seen := map[string]int{}
	first := true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			p.add("%v", err)
			return
		}
		ln, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if first {
			first = false
			if h := strings.Join(trimAll(rec), ","); strings.EqualFold(h, CSVHeader) || (group != "" && strings.EqualFold(h, CSVGroupHeader)) {
				continue
			}
		}
		rec = trimAll(rec)
		switch {
		case len(rec) == 4 && group != "" && rec[0] != group:
			p.add("line %d: group %q, but the file is read for group %q", ln, rec[0], group)
			continue
		case len(rec) == 4:
		case len(rec) == 3 && group != "":
			rec = append([]string{group}, rec...)
		case len(rec) == 3:
			p.add("line %d: 3 fields: topic,partition,offset lines are one group's (kafka-consumer-groups.sh --export with one --group): name it with --group G, or write group,topic,partition,offset", ln)
			continue
		case group != "":
			p.add("line %d: %d fields, want topic,partition,offset (or group,topic,partition,offset)", ln, len(rec))
			continue
		default:
			p.add("line %d: %d fields, want group,topic,partition,offset", ln, len(rec))
			continue
		}
		row := FileRow{Line: ln, Group: rec[0], Topic: rec[1]}
		bad := false
		if row.Group == "" {
			p.add("line %d: empty group", ln)
			bad = true
		}
		if err := checkTopic(row.Topic); err != nil {
			p.add("line %d: topic %q: %v", ln, row.Topic, err)
			bad = true
		}
		part, err := strconv.ParseInt(rec[2], 10, 32)
		if err != nil || part < 0 {
			p.add("line %d: partition %q: want a number from 0 to %d", ln, rec[2], math.MaxInt32)
			bad = true
		}
		off, err := strconv.ParseInt(rec[3], 10, 64)
		if err != nil || off < 0 {
			p.add("line %d: offset %q: want a number of 0 or more", ln, rec[3])
			bad = true
		}
		if bad {
			continue
		}
		row.Partition, row.Offset = int32(part), off
		k := fmt.Sprintf("%s\x00%s\x00%d", row.Group, row.Topic, row.Partition)
		if prev, dup := seen[k]; dup {
			p.add("line %d: group %q %s/%d is also on line %d", ln, row.Group, row.Topic, row.Partition, prev)
			continue
		}
		seen[k] = ln
		f.Rows = append(f.Rows, row)
	}
	if len(f.Rows) == 0 && len(p.list) == 0 {
		if group != "" {
			p.add("no offsets: want topic,partition,offset lines")
		} else {
			p.add("no offsets: want group,topic,partition,offset lines")
		}
	}
}

func firstLine(problem string) int {
	m := lineOf.FindStringSubmatch(problem)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func trimAll(rec []string) []string {
	out := make([]string, len(rec))
	for i, s := range rec {
		out[i] = strings.TrimSpace(s)
	}
	return out
}

// checkTopic checks a Kafka topic name (Topic.validate).
func checkTopic(t string) error {
	switch {
	case t == "":
		return errors.New("empty")
	case t == "." || t == "..":
		return errors.New(`"." and ".." are not topic names`)
	case len(t) > 249:
		return errors.New("longer than 249 characters")
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%q is not allowed in a topic name", r)
		}
	}
	return nil
}

// sinkShaped reports whether a REST entry reads as a sink connector's
// offset: a partition of exactly kafka_topic and kafka_partition and an
// offset of exactly kafka_offset, or null.
func (e FileEntry) sinkShaped() bool {
	keys := e.Partition.Keys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{connectjson.SinkPartitionKey, connectjson.SinkTopicKey}) {
		return false
	}
	return e.Offset == nil || slices.Equal(e.Offset.Keys(), []string{connectjson.SinkOffsetKey})
}

// sinkNumber reads kafka_partition or kafka_offset as SinkUtils does: a
// JSON integer or a string holding one.
func sinkNumber(v connectjson.Value, bits int) (int64, bool) {
	s := ""
	switch v.Kind() {
	case connectjson.KindLong:
		s = strconv.FormatInt(v.Long(), 10)
	case connectjson.KindString:
		s = v.Str()
	default:
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, bits)
	return n, err == nil && n >= 0
}

// Snapshot checks the file against the cluster cl talks to and returns
// the snapshot that restoring it means, with warnings to print. The file is
// applied the way Connect's PATCH and kafka-consumer-groups.sh
// --reset-offsets --from-file apply theirs: each partition it names gets
// its offset (null removes it), and every other partition of the
// connectors it names keeps the live one. So the snapshot is the live
// state of those connectors (its Scope) with the file's offsets on top,
// ClusterID the live cluster's, Reason ReasonFile and ID the file name; a
// restore of it writes exactly the file's changes, with the usual plan,
// safety checks, undo snapshot and verification.
//
// A source partition keeps the exact bytes of the key the connector has
// for it: the live key (the form Connect's REST API shows, when several
// forms exist), else the key of the latest stored snapshot, previous (may
// be nil), else the bytes a worker writes (connectjson.CanonicalKey: Java
// HashMap field order, Jackson escaping), on murmur2 of the topic the
// connector reads. A value equal, as Connect compares, to the one it
// replaces keeps its bytes; otherwise it is written as a worker writes it,
// in the field order of the value it replaces when that has the same fields,
// else in the file's order. A null offset removes the form Connect's REST
// API shows; a partition held only in other forms is left, with a warning,
// as Connect's PATCH leaves it.
//
// A REST body's connector must be known here (a config, live offsets or a
// group) or in previous; a sink connector's entries must be
// {"kafka_topic","kafka_partition"} -> {"kafka_offset"} (numbers or numeric
// strings, as Connect reads them). A CSV group must belong to a sink
// connector: by the group its config names, by previous, or by the
// <prefix><name> convention (opts.GroupPrefix, default connect-). Every problem is reported at once in an error
// wrapping restore.ErrBadFile; nothing is written either way.
func (f *OffsetsFile) Snapshot(ctx context.Context, cl *kgo.Client, opts restore.Options, previous *snapshot.Snapshot) (*snapshot.Snapshot, []string, error) {
	opts.Options.Defaults()
	var scope []string
	switch f.Format {
	case FormatConnectREST:
		scope = []string{f.Connector}
	case FormatStandalone:
		scope = f.standaloneConnectors()
	}
	copts := opts
	copts.Connectors = scope
	live, err := restore.CaptureLive(ctx, cl, previous, copts)
	if err != nil {
		return nil, nil, err
	}
	b := &fileSnap{f: f, opts: opts, live: live, previous: previous, liveIdx: snapshot.NewIndex(live), p: &problems{name: f.Name, list: slices.Clone(f.problems)}}
	if previous != nil {
		b.prevIdx = snapshot.NewIndex(previous)
	}
	switch {
	case f.Format == FormatConnectREST && f.Connector != "" && len(f.Entries) > 0:
		b.rest()
	case f.Format == FormatCSV:
		b.csv()
	case f.Format == FormatStandalone:
		b.standalone()
	}
	if err := b.p.err(); err != nil {
		return nil, nil, err
	}
	out := b.out
	out.ID = f.Name
	out.Reason = ReasonFile
	out.CreatedAt = time.Now().UTC()
	out.ClusterID = live.ClusterID
	out.ProgramVersion = opts.ProgramVersion
	out.Warnings = nil
	out.Normalize()
	return out, b.warnings, nil
}

type fileSnap struct {
	f        *OffsetsFile
	opts     restore.Options
	live     *snapshot.Snapshot
	previous *snapshot.Snapshot
	// liveIdx and prevIdx index live and previous (nil without it).
	liveIdx, prevIdx *snapshot.Index
	p                *problems
	out              *snapshot.Snapshot
	warnings         []string
}

func (b *fileSnap) warnf(format string, args ...any) {
	b.warnings = append(b.warnings, fmt.Sprintf(format, args...))
}

// known tells what is known of a connector: its live config, else the
// previous snapshot's entry, else what its live offsets or group imply.
func (b *fileSnap) known(name string) (snapshot.Connector, bool) {
	lc, inLive := b.liveIdx.Connector(name)
	if inLive && lc.HasConfig {
		return lc, true
	}
	if b.previous != nil {
		if c, ok := b.prevIdx.Connector(name); ok {
			c.HasConfig, c.TargetState, c.Tasks, c.ConfigHash = false, "", -1, ""
			return c, true
		}
	}
	if g, ok := b.liveIdx.SinkGroupOf(name); ok {
		return snapshot.Connector{Name: name, Type: snapshot.TypeSink, Group: g.Group, Tasks: -1}, true
	}
	if len(b.liveIdx.Positions(name)) > 0 {
		return snapshot.Connector{Name: name, Type: snapshot.TypeSource, Tasks: -1}, true
	}
	return snapshot.Connector{}, false
}

func (b *fileSnap) rest() {
	f, name := b.f, b.f.Connector
	conn, ok := b.known(name)
	if !ok {
		b.p.add("connector %q is unknown here: no config in %q, no offsets, and not in the latest snapshot (check the name; create the connector first)", name, b.opts.ConfigTopic)
		return
	}
	sinkShaped := 0
	for _, e := range f.Entries {
		if e.sinkShaped() {
			sinkShaped++
		}
	}
	typ := conn.Type
	if typ == snapshot.TypeUnknown {
		typ = snapshot.TypeSource
		if sinkShaped == len(f.Entries) {
			typ = snapshot.TypeSink
		}
	}
	b.out = b.live.Filter([]string{name})
	if _, ok := b.out.Connector(name); !ok {
		conn.Type = typ
		b.out.Connectors = append(b.out.Connectors, conn)
	}
	if typ == snapshot.TypeSink {
		b.restSink(conn)
		return
	}
	if sinkShaped == len(f.Entries) {
		b.p.add("every entry is a sink connector's {\"kafka_topic\",\"kafka_partition\"} -> {\"kafka_offset\"}, but %q is a source connector: is this the file of another connector?", name)
		return
	}
	b.restSource(conn)
}

func (b *fileSnap) restSink(conn snapshot.Connector) {
	var rows []FileRow
	var deletes []FileRow
	for _, e := range b.f.Entries {
		bad := false
		if !e.sinkShaped() {
			b.p.add("%s: %q is a sink connector: want {\"kafka_topic\":...,\"kafka_partition\":...} -> {\"kafka_offset\":...} or null, got %s -> %s", e.where(), conn.Name, connectjson.RESTMap(e.Partition), restOrNull(e.Offset))
			continue
		}
		topic, _ := e.Partition.Get(connectjson.SinkTopicKey)
		if topic.Kind() != connectjson.KindString {
			b.p.add("%s: kafka_topic must be a string", e.where())
			bad = true
		} else if err := checkTopic(topic.Str()); err != nil {
			b.p.add("%s: kafka_topic %q: %v", e.where(), topic.Str(), err)
			bad = true
		}
		pv, _ := e.Partition.Get(connectjson.SinkPartitionKey)
		part, ok := sinkNumber(pv, 32)
		if !ok {
			b.p.add("%s: kafka_partition %s: want a number from 0 to %d, or a string holding one", e.where(), pv, math.MaxInt32)
			bad = true
		}
		row := FileRow{Line: e.Line, Topic: topic.Str(), Partition: int32(part), Offset: -1}
		if e.Offset != nil {
			ov, _ := e.Offset.Get(connectjson.SinkOffsetKey)
			off, ok := sinkNumber(ov, 64)
			if !ok {
				b.p.add("%s: kafka_offset %s: want a number of 0 or more, or a string holding one", e.where(), ov)
				bad = true
			}
			row.Offset = off
		}
		if bad {
			continue
		}
		if e.Offset == nil {
			deletes = append(deletes, row)
		} else {
			rows = append(rows, row)
		}
	}
	group := conn.Group
	if group == "" {
		group = b.opts.GroupPrefix + conn.Name
	}
	b.applySink(conn.Name, group, rows, deletes)
}

func restOrNull(m connectjson.Map) string {
	if m == nil {
		return "null"
	}
	return string(connectjson.RESTMap(m))
}

// applySink sets rows and removes deletes in the group of connector in
// b.out.
func (b *fileSnap) applySink(connector, group string, rows, deletes []FileRow) {
	idx := -1
	for i, g := range b.out.SinkGroups {
		if g.Connector == connector {
			idx = i
		}
	}
	if idx < 0 {
		b.out.SinkGroups = append(b.out.SinkGroups, snapshot.SinkGroup{Group: group, Connector: connector, Offsets: []snapshot.SinkOffset{}})
		idx = len(b.out.SinkGroups) - 1
	}
	g := &b.out.SinkGroups[idx]
	offs := slices.Clone(g.Offsets)
	for _, r := range rows {
		i := slices.IndexFunc(offs, func(o snapshot.SinkOffset) bool { return o.Topic == r.Topic && o.Partition == r.Partition })
		switch {
		case i < 0:
			offs = append(offs, snapshot.SinkOffset{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, LeaderEpoch: -1})
		case offs[i].Offset != r.Offset:
			offs[i] = snapshot.SinkOffset{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, LeaderEpoch: -1}
		}
	}
	for _, r := range deletes {
		offs = slices.DeleteFunc(offs, func(o snapshot.SinkOffset) bool { return o.Topic == r.Topic && o.Partition == r.Partition })
	}
	g.Offsets = offs
}

// restSource applies a source connector's entries to its keys.
func (b *fileSnap) restSource(conn snapshot.Connector) {
	name := conn.Name
	type form struct {
		i int // index into offs
		m connectjson.Map
	}
	// The changed copy of the live offsets the file makes.
	offs := b.out.SourceTable().Collect()
	var forms []form
	for i, o := range offs {
		if o.Connector != name {
			continue
		}
		if n, m, _, err := connectjson.ParseKey(o.Key); err == nil && n == name {
			forms = append(forms, form{i, m})
		}
	}
	target := b.opts.OffsetsTopics[0]
	switch {
	case conn.OffsetsTopic != "":
		target = conn.OffsetsTopic
	case !conn.HasConfig && b.previous != nil:
		if pc, ok := b.prevIdx.Connector(name); ok && pc.OffsetsTopic != "" {
			target = pc.OffsetsTopic
		}
	}
	parts := b.live.PartitionCount(target)
	remove := map[int]bool{}
	for _, e := range b.f.Entries {
		canon := connectjson.CanonicalKey(name, e.Partition)
		var all, canonical []int
		for _, fm := range forms {
			if connectjson.Equal(fm.m, e.Partition) {
				all = append(all, fm.i)
				if bytes.Equal(offs[fm.i].Key, canon) {
					canonical = append(canonical, fm.i)
				}
			}
		}
		if e.Offset == nil {
			for _, i := range canonical {
				remove[i] = true
			}
			if len(canonical) == 0 && len(all) > 0 {
				b.warnf("connector %q: partition %s (%s) lives only under key %s, a byte form Connect's REST API does not show (not Java HashMap field order): the null leaves it, as Connect's PATCH would; restore a snapshot without it to remove it", name, connectjson.RESTMap(e.Partition), e.where(), restore.DisplayKey(offs[all[0]].Key))
			}
			continue
		}
		targets := canonical
		if len(targets) == 0 {
			targets = all
		}
		if len(targets) > 0 {
			for _, i := range targets {
				o := &offs[i]
				o.Value = snapshot.Bytes(offsetBytes(e.Offset, o.Value))
				o.SourceOffset = json.RawMessage(o.Value)
			}
			if len(canonical) > 0 && len(all) > len(canonical) {
				b.warnf("connector %q: partition %s (%s) also lives under another byte form of its key; the file sets the form Connect's REST API shows, %s, and leaves the other as it is", name, connectjson.RESTMap(e.Partition), e.where(), restore.DisplayKey(canon))
			}
			continue
		}
		key, old := canon, []byte(nil)
		if b.previous != nil {
			var pick *snapshot.SourceOffset
			for _, o := range b.previous.SourceOffsetsOf(name) {
				n, m, _, err := connectjson.ParseKey(o.Key)
				if err != nil || n != name || !connectjson.Equal(m, e.Partition) {
					continue
				}
				if pick == nil || bytes.Equal(o.Key, canon) {
					o := o
					pick = &o
				}
			}
			if pick != nil {
				key, old = pick.Key, pick.Value
			}
		}
		if parts == 0 {
			b.p.add("%s: offsets topic %q of connector %q does not exist here", e.where(), target, name)
			continue
		}
		_, _, raw, _ := connectjson.ParseKey(key)
		value := offsetBytes(e.Offset, old)
		offs = append(offs, snapshot.SourceOffset{
			Topic: target, Partition: snapshot.PartitionFor(key, parts), Offset: -1,
			Key: key, Value: value, Connector: name,
			SourcePartition: json.RawMessage(raw), SourceOffset: json.RawMessage(value),
		})
		// Later entries see this key as a live form.
		forms = append(forms, form{len(offs) - 1, e.Partition})
	}
	if len(remove) > 0 {
		kept := offs[:0:0]
		for i, o := range offs {
			if !remove[i] {
				kept = append(kept, o)
			}
		}
		offs = kept
	}
	b.out.SetSourceOffsets(offs)
}

// offsetBytes returns the bytes to store for offset m replacing old (nil
// when there is none): old itself when Connect would read it as equal;
// else m as a worker writes it, in old's field order when old has the
// same fields, else in m's.
func offsetBytes(m connectjson.Map, old []byte) []byte {
	if old != nil {
		om, err := connectjson.ParseMap(old)
		if err == nil && connectjson.Equal(om, m) {
			return old
		}
		if err == nil && sameKeys(om, m) {
			ordered := make(connectjson.Map, 0, len(m))
			for _, k := range om.Keys() {
				v, _ := m.Get(k)
				ordered = append(ordered, connectjson.Field{Key: k, Value: v})
			}
			return connectjson.Marshal(ordered)
		}
	}
	return connectjson.Marshal(m)
}

func sameKeys(a, b connectjson.Map) bool {
	ka, kb := a.Keys(), b.Keys()
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb) && len(slices.Compact(ka)) == len(kb)
}

// csv maps each group of the file to its sink connector and applies the
// rows.
func (b *fileSnap) csv() {
	byGroup := map[string]string{} // group -> connector
	why := map[string]string{}
	for _, c := range b.live.Connectors {
		if c.HasConfig && c.Type == snapshot.TypeSink && c.Group != "" {
			byGroup[c.Group], why[c.Group] = c.Name, "config"
		}
	}
	if b.previous != nil {
		for _, g := range b.previous.SinkGroups {
			if _, ok := byGroup[g.Group]; !ok && g.Connector != "" {
				if c, ok := b.liveIdx.Connector(g.Connector); ok && c.HasConfig {
					continue // its live config names another group
				}
				byGroup[g.Group], why[g.Group] = g.Connector, "snapshot"
			}
		}
	}
	groups := map[string][]FileRow{}
	var order []string
	for _, r := range b.f.Rows {
		if _, ok := groups[r.Group]; !ok {
			order = append(order, r.Group)
		}
		groups[r.Group] = append(groups[r.Group], r)
	}
	conns := map[string]string{} // connector -> group
	for _, g := range order {
		line := groups[g][0].Line
		name, ok := byGroup[g]
		if !ok {
			conv, isConv := strings.CutPrefix(g, b.opts.GroupPrefix)
			if !isConv || conv == "" {
				b.p.add("line %d: group %q belongs to no sink connector known here (no connector config names it, it is not %s<name>, and the latest snapshot does not have it)", line, g, b.opts.GroupPrefix)
				continue
			}
			if c, ok := b.liveIdx.Connector(conv); ok && c.HasConfig {
				if c.Type != snapshot.TypeSink {
					b.p.add("line %d: group %q would be connector %q's by the %s<name> convention, but %q is a %s connector", line, g, conv, b.opts.GroupPrefix, conv, c.Type)
				} else {
					b.p.add("line %d: group %q would be connector %q's by the %s<name> convention, but %q uses group %q", line, g, conv, b.opts.GroupPrefix, conv, c.Group)
				}
				continue
			}
			name = conv
		}
		if other, dup := conns[name]; dup {
			b.p.add("line %d: groups %q and %q both map to connector %q", line, other, g, name)
			continue
		}
		conns[name] = g
	}
	if len(b.p.list) > 0 {
		return
	}
	names := make([]string, 0, len(conns))
	for n := range conns {
		names = append(names, n)
	}
	sort.Strings(names)
	b.out = b.live.Filter(names)
	for _, name := range names {
		g := conns[name]
		if _, ok := b.out.Connector(name); !ok {
			c := snapshot.Connector{Name: name, Type: snapshot.TypeSink, Group: g, Tasks: -1}
			if b.previous != nil {
				if pc, ok := b.prevIdx.Connector(name); ok {
					c = pc
					c.HasConfig, c.TargetState, c.Tasks, c.ConfigHash = false, "", -1, ""
				}
			}
			b.out.Connectors = append(b.out.Connectors, c)
		}
		if _, ok := b.out.SinkGroupOf(name); !ok {
			// A group by convention the live capture did not tie to this
			// connector (captured without connector, or not existing yet).
			for _, lg := range b.live.SinkGroups {
				if lg.Group == g {
					lg.Connector = name
					lg.Offsets = slices.Clone(lg.Offsets)
					b.out.SinkGroups = append(b.out.SinkGroups, lg)
				}
			}
		}
		b.applySink(name, g, groups[g], nil)
	}
}
