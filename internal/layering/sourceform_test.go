package layering

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// sourceTypes are the types a Snapshot's source offsets could be held in.
var sourceTypes = []string{"SourceOffset", "SourceTable", "OffsetStream", "OffsetRun", "TableRec"}

// TestSnapshotHoldsSourceOffsetsInOneForm: a Snapshot holds its source
// offsets in one field, the unexported src *SourceTable, which every reader
// and builder goes through (SourceTable, SetSourceOffsets). Regression: it
// held them in three (the exported SourceOffsets, a stream and a compact
// table), and readers of the exported slice saw no offsets in the other
// two (issue #38: "Snapshot holds its source offsets in one form").
func TestSnapshotHoldsSourceOffsetsInOneForm(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "snapshot", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var fields []string
	found := false
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		// The package's own type (not a function's local one).
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				if ts := spec.(*ast.TypeSpec); ts.Name.Name == "Snapshot" {
					fields = append(fields, sourceFields(t, fset, ts)...)
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatal("no type Snapshot in package snapshot: not this module?")
	}
	if len(fields) != 1 || fields[0] != "src *SourceTable" {
		t.Errorf("Snapshot holds its source offsets in %q; want one field, src *SourceTable", fields)
	}
}

// sourceFields are the fields of ts that hold source offsets, as "name type".
func sourceFields(t *testing.T, fset *token.FileSet, ts *ast.TypeSpec) []string {
	t.Helper()
	var fields []string
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		t.Fatalf("snapshot.Snapshot is not a struct")
	}
	for _, fl := range st.Fields.List {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, fl.Type); err != nil {
			t.Fatal(err)
		}
		typ := b.String()
		for _, s := range sourceTypes {
			if !strings.Contains(typ, s) {
				continue
			}
			if len(fl.Names) == 0 {
				t.Errorf("Snapshot embeds %s: its source offsets are the unexported src *SourceTable alone", typ)
			}
			for _, nm := range fl.Names {
				if nm.IsExported() {
					t.Errorf("Snapshot.%s (%s) is an exported form of its source offsets: they are the unexported src *SourceTable alone, read through SourceTable()", nm.Name, typ)
				}
				fields = append(fields, nm.Name+" "+typ)
			}
			break
		}
	}
	return fields
}
