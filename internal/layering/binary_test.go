package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// testOnly are the packages that exist for tests: the binary links none
// of them. kfake is not among them: it is the demo's and the drill's
// cluster, a product dependency.
var testOnly = []string{
	"testing", "net/http/httptest",
	module + "internal/testkit", module + "internal/realconnect", module + "internal/s3test",
	module + "internal/cloudfake", module + "internal/storeservers", module + "snapshot/storetest",
	module + "internal/connectsim/connectsimtest",
}

// TestBinaryLinksNoTestPackage: the binary links no package that exists
// for tests. Regression: the demo ran the Connect REST stand-in from
// internal/connecttest, over net/http/httptest, so both shipped in the
// binary under a test name; it is internal/connectsim now.
func TestBinaryLinksNoTestPackage(t *testing.T) {
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", module+"cmd/offsetkeeper").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps lists %d packages: %s", len(deps), out)
	}
	for _, d := range deps {
		bad := strings.HasPrefix(d, module) && strings.HasSuffix(d, "test")
		for _, x := range testOnly {
			bad = bad || d == x
		}
		if bad {
			t.Errorf("cmd/offsetkeeper links %s, a package that exists for tests", d)
		}
	}
}

// testHooks are the fault hooks and records of the Connect REST stand-in
// that only tests use: they live in internal/connectsim/connectsimtest.
var testHooks = []string{"InjectConflicts", "InjectTimeouts", "FailTasks", "HideStatus", "SetHealth", "SetVersion", "Requests"}

// TestBinaryHasNoTestHooks: the built binary holds no symbol of the
// stand-in's test hooks, nor of connectsimtest. Regression: the demo's
// stand-in (internal/connectsim) carried the faults tests inject
// (InjectTimeouts, FailTasks, ...), so they shipped in the binary.
func TestBinaryHasNoTestHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := filepath.Join(t.TempDir(), "offsetkeeper")
	if out, err := exec.Command(goTool, "build", "-o", bin, module+"cmd/offsetkeeper").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(goTool, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	syms := string(out)
	if !strings.Contains(syms, "internal/connectsim.Start") {
		t.Fatalf("go tool nm lists no internal/connectsim.Start: not the demo's binary?\n%.2000s", syms)
	}
	for _, line := range strings.Split(syms, "\n") {
		if strings.Contains(line, "connectsimtest") {
			t.Errorf("the binary holds %s", strings.TrimSpace(line))
		}
		for _, h := range testHooks {
			if strings.Contains(line, "internal/connectsim.(*Server)."+h) {
				t.Errorf("the binary holds the test hook %s", strings.TrimSpace(line))
			}
		}
	}
}

// standInSeams are the exported methods of the stand-in's Server that no
// product code calls, on purpose: the http.Handler connectsimtest wraps.
var standInSeams = map[string]bool{"ServeHTTP": true}

// TestStandInMethodsHaveProductCallers: every exported method of the
// Connect REST stand-in's Server (internal/connectsim, which the demo
// runs and the binary ships) is called by product code; a knob only tests
// use belongs in internal/connectsim/connectsimtest. Regression: the
// stand-in carried InjectConflicts, InjectTimeouts, FailTasks, HideStatus,
// SetHealth, SetVersion and Requests for tests alone.
func TestStandInMethodsHaveProductCallers(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, filepath.Join(root, "internal", "connectsim"), func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || !fd.Name.IsExported() || standInSeams[fd.Name.Name] {
					continue
				}
				if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && id.Name == "Server" {
						methods = append(methods, fd.Name.Name)
					}
				}
			}
		}
	}
	if len(methods) == 0 {
		t.Fatal("internal/connectsim declares no exported method of Server")
	}
	// Product code: the module's .go files but tests, the stand-in itself
	// and the packages that exist for tests.
	var product strings.Builder
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path == root {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "internal/connectsim" || isTestOnly(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		product.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range methods {
		if !regexp.MustCompile(`\.` + m + `\b`).MatchString(product.String()) {
			t.Errorf("connectsim.(*Server).%s has no caller but tests: move it to internal/connectsim/connectsimtest", m)
		}
	}
}

// isTestOnly tells whether the package at rel (a path in the module)
// exists for tests.
func isTestOnly(rel string) bool {
	if strings.HasSuffix(rel, "test") {
		return true
	}
	for _, x := range testOnly {
		if module+rel == x {
			return true
		}
	}
	return false
}
