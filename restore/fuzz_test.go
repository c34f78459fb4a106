package restore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The parsers of files and records an operator hands to restore: each
// either returns what it read or an error, never panics, and a file error
// wraps ErrBadFile. Seed corpora are under testdata/fuzz; .ci/run fuzzes
// each briefly.

// FuzzParseOffsetsFile covers the three formats ParseOffsetsFile tells
// apart: a Connect REST body, CSV and a standalone worker's file.
func FuzzParseOffsetsFile(f *testing.F) {
	f.Add([]byte(`{"offsets":[{"partition":{"file":"/var/log/a"},"offset":{"position":42}}]}`), "file-source")
	f.Add([]byte("group,topic,partition,offset\nconnect-s3,clicks,0,90\n"), "")
	f.Add([]byte("connect-s3,clicks,0,90\nconnect-s3,clicks,1,x\n"), "")
	f.Add([]byte("\ufeff{\"offsets\":[]}"), "c")
	files, _ := filepath.Glob(filepath.Join("testdata", "standalone", "*.offsets"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "")
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, connector string) {
		file, err := ParseOffsetsFile("fuzz.csv", data, connector)
		if file == nil {
			t.Fatalf("no file returned (error %v)", err)
		}
		if err != nil && !errors.Is(err, ErrBadFile) {
			t.Fatalf("error does not wrap ErrBadFile: %v", err)
		}
		if IsStandaloneFile(data) != (file.Format == FormatStandalone) {
			t.Fatalf("format %q for a file that is standalone: %v", file.Format, IsStandaloneFile(data))
		}
	})
}

// FuzzParseGroupCSV: one consumer group's CSV export.
func FuzzParseGroupCSV(f *testing.F) {
	f.Add([]byte("TOPIC,PARTITION,NEW-OFFSET\nclicks,0,90\nclicks,1,12\n"), "connect-s3")
	f.Add([]byte("connect-s3,clicks,0,90\n"), "connect-s3")
	f.Add([]byte("clicks,0,-1\nclicks,0,5\n"), "g")
	f.Add([]byte(`{"offsets":[]}`), "g")
	f.Fuzz(func(t *testing.T, data []byte, group string) {
		file, err := ParseGroupCSV("fuzz.csv", data, group)
		if file == nil {
			t.Fatalf("no file returned (error %v)", err)
		}
		if err != nil && !errors.Is(err, ErrBadFile) {
			t.Fatalf("error does not wrap ErrBadFile: %v", err)
		}
	})
}

// FuzzParseCheckpoint: MirrorMaker 2's checkpoint and offset-sync records
// (read from a cluster the operator points at) decode or are refused, and
// a decoded record encodes back to the bytes it was read from.
func FuzzParseCheckpoint(f *testing.F) {
	c := Checkpoint{Group: "connect-s3", Topic: "clicks", Partition: 3, Upstream: 90, Downstream: 45, Metadata: ""}
	f.Add(c.AppendKey(nil), c.AppendValue(nil))
	s := OffsetSync{Topic: "clicks", Partition: 1, Upstream: 10, Downstream: 7}
	f.Add(s.AppendKey(nil), s.AppendValue(nil))
	f.Add([]byte{0, 1}, []byte{0, 1, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if c, err := ParseCheckpoint(key, value); err == nil {
			if k := c.AppendKey(nil); !bytes.HasPrefix(key, k) {
				t.Fatalf("checkpoint key %x re-encodes as %x", key, k)
			}
			if v := c.AppendValue(nil); !bytes.HasPrefix(value, v) {
				t.Fatalf("checkpoint value %x re-encodes as %x", value, v)
			}
		}
		if s, err := ParseOffsetSync(key, value); err == nil {
			if v := s.AppendValue(nil); !bytes.HasPrefix(value, v) {
				t.Fatalf("offset sync value %x re-encodes as %x", value, v)
			}
		}
	})
}
