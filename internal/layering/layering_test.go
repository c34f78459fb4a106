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
	case p == "snapshot":
		return 1, true
	case strings.HasPrefix(p, "internal/"):
		return 0, true
	}
	return 0, false
}

// helpers are the test helpers under internal/ allowed to import snapshot.
var helpers = map[string]bool{module + "internal/connecttest": true, module + "internal/connectdemo": true}

// wrongWay says why pkg must not import imp, or "" when it may.
func wrongWay(pkg, imp string) string {
	if !strings.HasPrefix(imp, module) {
		return ""
	}
	ri, iok := rank(imp)
	if iok && ri == 4 {
		return "nothing imports a command"
	}
	rp, pok := rank(pkg)
	if !pok || !iok {
		return ""
	}
	switch {
	case rp == 0 && ri == 0:
		return ""
	case rp == 0 && helpers[pkg] && imp == module+"snapshot":
		return ""
	case rp == 0:
		return "nothing under internal/ imports snapshot, restore or daemon (test helpers connecttest and connectdemo: snapshot only)"
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
		{"internal/connecttest", "snapshot", false},
		{"reliability", "restore", false},
		{"snapshot", "restore", true},
		{"restore", "daemon", true},
		{"daemon", "cmd/offsetkeeper", true},
		{"snapshot", "snapshot/x", false},
		{"internal/connectrest", "snapshot", true},
		{"internal/connecttest", "restore", true},
		{"internal/kafkaconf", "daemon", true},
		{"reliability", "cmd/offsetkeeper", true},
	} {
		if got := wrongWay(module+tc.pkg, module+tc.imp) != ""; got != tc.wrong {
			t.Errorf("%s imports %s: wrong = %v, want %v", tc.pkg, tc.imp, got, tc.wrong)
		}
	}
}
