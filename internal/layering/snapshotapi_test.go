package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// oneRoom are the exported types of package snapshot that one other
// package alone uses, and why each stays in the format all the same. Any
// other such type is a structure of that package (the journal tail's, a
// restore's, a capture's) and moves there or under snapshot/internal.
var oneRoom = map[string]string{
	// The seams: the format declares what a room plugs into it.
	"OffsetRun":  "what OffsetStream.Runs gives the encoder; capture implements it",
	"OffsetSink": "the sink of the streamed decoder, which store's GetWith takes",
	"TableSink":  "the decoder's sink into a SourceTable, whose unexported parts it fills; store.RestoreSink wraps it",
	"Piece":      "the encoder's unit, which store compresses in parallel",
	"Journal":    "an argument of ApplyPolicy, the retention policy",
}

// TestSnapshotTypesHaveTwoUsers: every exported type of package snapshot
// that another package uses (outside tests) is used by two of them, or
// oneRoom says why it is the format's. Regression: the journal tail's last values
// (TailSeed, SeedSink, LastValues) lived in snapshot, which only
// snapshot/capture's Tail reads (issue #38: "the structures that only the
// journal tail, restore or capture use move to those packages").
func TestSnapshotTypesHaveTwoUsers(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	users := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if pkg == "snapshot" {
			for _, n := range typeNames(f) {
				exported[n] = ast.IsExported(n)
			}
			return nil
		}
		for _, n := range uses(f, module+"snapshot") {
			if users[n] == nil {
				users[n] = map[string]bool{}
			}
			users[n][pkg] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(exported) < 20 {
		t.Fatalf("found %d types in package snapshot: not this module?", len(exported))
	}
	for n, us := range users {
		if !exported[n] || len(us) != 1 {
			continue
		}
		if _, ok := oneRoom[n]; ok {
			continue
		}
		for u := range us {
			t.Errorf("snapshot.%s is used by %s alone: move it there (or under snapshot/internal), or say in oneRoom why the format keeps it", n, u)
		}
	}
	for n := range oneRoom {
		if len(users[n]) != 1 {
			t.Errorf("oneRoom names snapshot.%s, which %d other packages use: drop it from oneRoom", n, len(users[n]))
		}
	}
}

// typeNames returns the types f declares.
func typeNames(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok {
			for _, s := range g.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					out = append(out, ts.Name.Name)
				}
			}
		}
	}
	return out
}

// uses returns the names f uses of the package at path, once each.
func uses(f *ast.File, path string) []string {
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			local = path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" || local == "_" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && !slices.Contains(out, sel.Sel.Name) {
				out = append(out, sel.Sel.Name)
			}
		}
		return true
	})
	return out
}
