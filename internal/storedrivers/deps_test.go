package storedrivers_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryLinksNoCloudSDK: the library packages link no cloud SDK; only
// the commands do, through this package (issue #38: ./restore linked 986
// packages, the three cloud SDKs among them, through snapshot/store).
func TestLibraryLinksNoCloudSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "./restore", "./snapshot/...", "./daemon/...")
	cmd.Dir = strings.TrimSpace(string(root))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var sdk []string
	for _, p := range strings.Fields(string(out)) {
		for _, prefix := range []string{"cloud.google.com/", "github.com/aws/", "github.com/Azure/"} {
			if strings.HasPrefix(p, prefix) {
				sdk = append(sdk, p)
			}
		}
	}
	if len(sdk) > 0 {
		t.Errorf("the library packages link %d cloud SDK packages, e.g. %v; blank-import drivers in internal/storedrivers only", len(sdk), sdk[:min(len(sdk), 5)])
	}
	// The commands still link every backend.
	cmd = exec.Command("go", "list", "-deps", "./cmd/offsetkeeper")
	cmd.Dir = strings.TrimSpace(string(root))
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/offsetkeeper: %v", err)
	}
	for _, want := range []string{"gocloud.dev/blob/s3blob", "gocloud.dev/blob/gcsblob", "gocloud.dev/blob/azureblob", "gocloud.dev/secrets/awskms", "gocloud.dev/secrets/gcpkms", "gocloud.dev/secrets/azurekeyvault"} {
		if !strings.Contains("\n"+string(out), "\n"+want+"\n") {
			t.Errorf("cmd/offsetkeeper does not link %s", want)
		}
	}
}
