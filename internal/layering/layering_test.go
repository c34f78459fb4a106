package layering

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/offsetkeeper/offsetkeeper/"

// rank is a package's layer: higher layers import lower ones only. ok is
// false for packages outside the layers.
func rank(pkg string) (r int, ok bool) {
	p := strings.TrimPrefix(pkg, module)
	switch {
	case p == "cmd" || strings.HasPrefix(p, "cmd/"):
		return 4, true
	case p == "daemon":
		return 3, true
	case p == "restore":
		return 2, true
	case p == "snapshot" || strings.HasPrefix(p, "snapshot/"):
		return 1, true
	case strings.HasPrefix(p, "internal/"):
		return 0, true
	}
	return 0, false
}

// helpers are the packages under internal/ allowed to import snapshot:
// the demo's Connect stand-in and its seeded data.
var helpers = map[string]bool{module + "internal/connectsim": true, module + "internal/connectdemo": true}

// drivers is the package of the store's cloud backends: it registers
// them with snapshot/store/backend, so it imports that layer; only cmd
// imports it (a library package linking it would link every cloud SDK).
const drivers = module + "internal/storedrivers"

// pure are the packages that hold no Kafka client and no bucket: data
// structures and formats, which read and write bytes and nothing else. A
// format that can be read without a cluster or a store is one a test, a
// fuzzer or a future version can always open.
var pure = map[string]bool{
	module + "snapshot/internal/keyview": true,
	module + "snapshot/internal/frames":  true,
	module + "snapshot":                  true,
	module + "snapshot/journal":          true,
	module + "snapshot/internal/build":   true,
	module + "internal/connectjson":      true,
	module + "internal/english":          true,
	module + "internal/retry":            true,
}

// snapshotRooms ranks the packages of the snapshot layer among
// themselves, lowest first: a package of the layer imports only those
// ranked below it. Two rooms of one rank never import each other.
var snapshotRooms = map[string]int{
	"snapshot/internal/keyview": 0, // the views of a compacted topic
	"snapshot/internal/frames":  0, // zstd frames, the store's and an early capture's
	"snapshot/internal/kread":   1, // reading compacted topics through Fetch
	"snapshot":                  2, // the format: documents, Info, retention
	"snapshot/internal/build":   3, // building a snapshot's entries, for capture and the journal's replay
	"snapshot/journal":          4, // entries, segments, replay, merge and events, over the format
	"snapshot/capture":          5, // reading a cluster into snapshots and the journal's entries
	"snapshot/store/backend":    3, // the registry of the store's backends (internal/storedrivers fills it)
	"snapshot/store":            5, // snapshots and the journal in a bucket; never imports capture, nor capture it
	"snapshot/storetest":        6, // the store conformance kit
}

// client says whether imp is a Kafka client or bucket package.
func client(imp string) bool {
	return strings.HasPrefix(imp, "github.com/twmb/franz-go/") || imp == "gocloud.dev" || strings.HasPrefix(imp, "gocloud.dev/")
}

// wrongWay says why pkg must not import imp, or "" when it may.
func wrongWay(pkg, imp string) string {
	if pure[pkg] && client(imp) {
		return "a pure package holds no Kafka client and no bucket"
	}
	if !strings.HasPrefix(imp, module) {
		return ""
	}
	if strings.HasPrefix(imp, module+"snapshot/internal/") && !strings.HasPrefix(pkg, module+"snapshot/") && pkg != module+"snapshot" {
		return "snapshot's internal packages are snapshot's own"
	}
	ri, iok := rank(imp)
	if iok && ri == 4 {
		return "nothing imports a command"
	}
	if imp == drivers && !strings.HasPrefix(pkg, module+"cmd/") {
		return "only cmd links the cloud drivers"
	}
	if pkg == drivers && (imp == module+"snapshot" || imp == module+"snapshot/store/backend") {
		return ""
	}
	rp, pok := rank(pkg)
	if !pok || !iok {
		return ""
	}
	switch {
	case rp == 0 && ri == 0:
		return ""
	case rp == 0 && helpers[pkg] && (imp == module+"snapshot" || imp == module+"snapshot/capture"):
		return ""
	case rp == 0:
		return "nothing under internal/ imports snapshot, restore or daemon (connectsim and connectdemo: snapshot and snapshot/capture only; storedrivers: snapshot/store/backend)"
	case rp == 1 && ri == 1:
		a, aok := snapshotRooms[strings.TrimPrefix(pkg, module)]
		b, bok := snapshotRooms[strings.TrimPrefix(imp, module)]
		switch {
		case !aok || !bok:
			return "a package of the snapshot layer must be ranked in snapshotRooms"
		case b >= a:
			return "in the snapshot layer, imports flow storetest → store, capture (never each other) → journal → internal/build → snapshot → internal/kread → internal/keyview, internal/frames"
		}
		return ""
	case ri >= rp:
		return "imports flow cmd → daemon, restore → snapshot → internal/*"
	}
	return ""
}

// TestLayering reads the (non-test) imports of every package of the
// module with go/build, which opens the files itself: go test's cache sees
// them change.
func TestLayering(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	n := 0
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(dir, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read package %s: %w", dir, err)
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		pkg := module + filepath.ToSlash(rel)
		n++
		for _, imp := range p.Imports {
			if why := wrongWay(pkg, imp); why != "" {
				t.Errorf("%s imports %s: %s", filepath.ToSlash(rel), strings.TrimPrefix(imp, module), why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Fatalf("found %d packages under %s: not this module?", n, root)
	}
}

// TestWrongWay: the rules themselves.
func TestWrongWay(t *testing.T) {
	for _, tc := range []struct {
		pkg, imp string
		wrong    bool
	}{
		{"cmd/offsetkeeper", "daemon", false},
		{"cmd/offsetkeeper", "restore", false},
		{"daemon", "restore", false},
		{"daemon", "snapshot", false},
		{"restore", "snapshot", false},
		{"restore", "internal/connectrest", false},
		{"snapshot", "internal/connectjson", false},
		{"internal/connectrest", "internal/kafkaconf", false},
		{"internal/connectsim", "snapshot", false},
		{"reliability", "restore", false},
		{"snapshot", "restore", true},
		{"restore", "daemon", true},
		{"daemon", "cmd/offsetkeeper", true},
		{"snapshot", "snapshot/x", true},
		{"snapshot/storetest", "snapshot", false},
		{"snapshot/capture", "snapshot", false},
		{"snapshot/capture", "snapshot/internal/kread", false},
		{"snapshot", "snapshot/capture", true},
		{"snapshot/capture", "snapshot/store", true},
		{"snapshot/store", "snapshot/capture", true},
		{"snapshot/store", "snapshot", false},
		{"snapshot/storetest", "snapshot/store", false},
		{"snapshot", "snapshot/store", true},
		{"snapshot/journal", "snapshot", false},
		{"snapshot", "snapshot/journal", true},
		{"snapshot/journal", "snapshot/store", true},
		{"snapshot/store", "snapshot/journal", false},
		{"snapshot/capture", "snapshot/journal", false},
		{"snapshot/journal", "../gocloud.dev/blob", true},
		{"snapshot", "../gocloud.dev/blob", true},
		{"snapshot", "../github.com/twmb/franz-go/pkg/kgo", true},
		{"snapshot/store", "../gocloud.dev/blob", false},
		{"snapshot/capture", "snapshot/storetest", true},
		{"snapshot/internal/keyview", "snapshot/internal/kread", true},
		{"snapshot", "snapshot/internal/kread", false},
		{"snapshot/internal/kread", "snapshot/internal/keyview", false},
		{"snapshot/internal/keyview", "snapshot", true},
		{"snapshot/internal/kread", "restore", true},
		{"internal/connectrest", "snapshot", true},
		{"internal/connectsim", "restore", true},
		{"internal/kafkaconf", "daemon", true},
		{"reliability", "cmd/offsetkeeper", true},
		{"snapshot/internal/keyview", "../github.com/twmb/franz-go/pkg/kgo", true},
		{"snapshot/internal/keyview", "../gocloud.dev/blob", true},
		{"internal/retry", "../gocloud.dev", true},
		{"snapshot/internal/kread", "../github.com/twmb/franz-go/pkg/kgo", false},
		{"snapshot/journal", "snapshot/internal/build", false},
		{"snapshot/capture", "snapshot/internal/build", false},
		{"snapshot/internal/build", "snapshot", false},
		{"snapshot", "snapshot/internal/build", true},
		{"snapshot/internal/build", "snapshot/journal", true},
		{"snapshot/internal/build", "../github.com/twmb/franz-go/pkg/kgo", true},
		{"restore", "snapshot/internal/build", true},
	} {
		imp := module + tc.imp
		if strings.HasPrefix(tc.imp, "../") {
			imp = strings.TrimPrefix(tc.imp, "../")
		}
		if got := wrongWay(module+tc.pkg, imp) != ""; got != tc.wrong {
			t.Errorf("%s imports %s: wrong = %v, want %v", tc.pkg, tc.imp, got, tc.wrong)
		}
	}
}
