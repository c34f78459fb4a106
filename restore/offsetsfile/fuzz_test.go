package offsetsfile

import (
	"errors"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"os"
	"path/filepath"
	"testing"
)

// The parsers of files and records an operator hands to restore: each
// either returns what it read or an error, never panics, and a file error
// wraps restore.ErrBadFile. Seed corpora are under testdata/fuzz; .ci/run fuzzes
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
		if err != nil && !errors.Is(err, restore.ErrBadFile) {
			t.Fatalf("error does not wrap restore.ErrBadFile: %v", err)
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
		if err != nil && !errors.Is(err, restore.ErrBadFile) {
			t.Fatalf("error does not wrap restore.ErrBadFile: %v", err)
		}
	})
}
