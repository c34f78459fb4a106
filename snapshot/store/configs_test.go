package store

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// TestJournalConfigs: a state rebuilt from journal entries decoded from a
// segment (no Conn.Config) has each connector's config, also after a
// merge whose last entry of the connector is a target state.
func TestJournalConfigs(t *testing.T) {
	conn := &snapshot.Connector{Type: snapshot.TypeSource, HasConfig: true, TargetState: snapshot.StateStarted, Tasks: -1}
	stopped := &snapshot.Connector{Type: snapshot.TypeSource, HasConfig: true, TargetState: snapshot.StateStopped, Tasks: -1}
	entries := []journal.Entry{
		{Kind: journal.EntryConfig, Offset: 1, Time: 1, Key: []byte("connector-a"), Value: []byte(`{"properties":{"name":"a","tasks.max":"1"}}`), Connector: "a", Conn: conn},
		{Kind: journal.EntryConfig, Offset: 2, Time: 2, Key: []byte("connector-a"), Value: []byte(`{"properties":{"name":"a","tasks.max":"2"}}`), Connector: "a", Conn: conn},
		{Kind: journal.EntryConfig, Offset: 3, Time: 3, Key: []byte("target-state-a"), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`), Connector: "a", Conn: stopped},
	}
	decoded, err := journal.DecodeEntries(journal.EncodeEntries(entries), len(entries))
	if err != nil {
		t.Fatal(err)
	}
	m := journal.NewMerger(journal.LevelMinute)
	m.Add(&journal.Segment{Entries: decoded})
	merged, err := journal.DecodeEntries(journal.EncodeEntries(m.Entries()), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"name": "a", "tasks.max": "2"}
	for name, es := range map[string][]journal.Entry{"raw": decoded, "merged": merged} {
		st := journal.NewReplayState(&snapshot.Snapshot{})
		st.Apply(es, 10, &journal.StateInfo{})
		c := st.Conns["a"]
		if !maps.Equal(c.Config, want) || c.TargetState != snapshot.StateStopped {
			t.Errorf("%s: connector a = %+v, want config %v, STOPPED", name, c, want)
		}
	}
}

// TestFixtureConfigsStored: the configs of the configs fixture survive a
// store's Put, Get and GetForRestore.
func TestFixtureConfigsStored(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(docDir, "v1-configs.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	if _, err := st.Snapshots().Put(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, _, err := st.Snapshots().GetWith(ctx, "latest", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Connectors {
		g, ok := got.Connector(c.Name)
		if !ok || !maps.Equal(g.Config, c.Config) || (g.Config == nil) != (c.Config == nil) {
			t.Errorf("connector %s config = %v, want %v", c.Name, g.Config, c.Config)
		}
	}
	want, ok := s.Connector("s3-sink")
	if !ok || want.Config == nil {
		t.Fatal("the fixture has no s3-sink config")
	}
	forRestore, _, err := st.Snapshots().For([]string{"s3-sink"}).GetWith(ctx, "latest", RestoreSink(RestoreRead{}))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := forRestore.Connector("s3-sink"); !ok || !maps.Equal(c.Config, want.Config) {
		t.Errorf("GetForRestore: s3-sink = %+v", c)
	}
}
