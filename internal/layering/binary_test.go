package layering

import (
	"os/exec"
	"path/filepath"
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
