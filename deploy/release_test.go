package deploy

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/deploy/internal/release"
)

// The release build (deploy/release, with deploy/internal/release for the
// archives and the image) builds what deploy/Dockerfile builds: the same
// go build flags (static, without the gRPC transport, version and commit
// stamped, no VCS stamping), and an image of the same shape that runs the
// same way (from scratch with the CA bundle, the nonroot user by number, its
// home, entrypoint, cmd, port, the labels). CI runs the release build
// (deploy/release --check), whose checks read these flags back from every
// binary; this test keeps the two builds from drifting apart.
func TestReleaseBuildMatchesDockerfile(t *testing.T) {
	docker, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("release")
	if err != nil {
		t.Fatal(err)
	}
	d, s := string(docker), string(script)
	dockerBuild := regexp.MustCompile(`go build (.*) -o /out/offsetkeeper (\S+)`).FindStringSubmatch(d)
	releaseBuild := regexp.MustCompile(`(?m)^\s*go build (.*) -o "\$1/offsetkeeper_\$\{os\}_\$\{arch\}/offsetkeeper" (\S+)$`).FindStringSubmatch(s)
	tags := regexp.MustCompile(`(?m)^TAGS=(\S+)$`).FindStringSubmatch(s)
	ldflags := regexp.MustCompile(`(?m)^LDFLAGS="(.*)"$`).FindStringSubmatch(s)
	if dockerBuild == nil || releaseBuild == nil || tags == nil || ldflags == nil {
		t.Fatalf("go build lines: Dockerfile %q, deploy/release %q (TAGS %q, LDFLAGS %q)", dockerBuild, releaseBuild, tags, ldflags)
	}
	flags := strings.NewReplacer(`"$TAGS"`, tags[1], `"$LDFLAGS"`, `"`+ldflags[1]+`"`).Replace(releaseBuild[1])
	if flags != dockerBuild[1] || releaseBuild[2] != dockerBuild[2] {
		t.Errorf("deploy/release builds %s %s, deploy/Dockerfile %s %s", flags, releaseBuild[2], dockerBuild[1], dockerBuild[2])
	}
	for _, env := range []string{"CGO_ENABLED=0", "GOFLAGS=-buildvcs=false"} {
		if !strings.Contains(d, env) || !strings.Contains(s, env) {
			t.Errorf("%s is not set by both deploy/Dockerfile and deploy/release", env)
		}
	}
	if !strings.Contains(s, `PLATFORMS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"`) {
		t.Error("deploy/release does not build linux and darwin, amd64 and arm64")
	}

	// The image: run the same way.
	var entrypoint, cmd []string
	for directive, v := range map[string]*[]string{"ENTRYPOINT": &entrypoint, "CMD": &cmd} {
		m := regexp.MustCompile(`(?m)^` + directive + ` (\[.*\])$`).FindStringSubmatch(d)
		if m == nil || json.Unmarshal([]byte(m[1]), v) != nil {
			t.Fatalf("Dockerfile: no JSON %s", directive)
		}
	}
	if !slices.Equal(entrypoint, release.Entrypoint) || !slices.Equal(cmd, release.Cmd) {
		t.Errorf("the release image runs %v %v, the Dockerfile's %v %v", release.Entrypoint, release.Cmd, entrypoint, cmd)
	}
	if !strings.Contains(d, "\nEXPOSE "+strings.TrimSuffix(release.ExposedPort, "/tcp")+"\n") {
		t.Errorf("the release image exposes %s, the Dockerfile otherwise", release.ExposedPort)
	}
	// The same shape: from scratch, the user by number (Kubernetes'
	// runAsNonRoot checks it), its home the working directory, the CA
	// bundle where Go looks first, and the environment. Regression: the
	// Dockerfile built on distroless while the release image shipped
	// from scratch.
	for _, want := range []string{
		"\nFROM scratch\n",
		"\nUSER " + release.User + "\n",
		"\nWORKDIR " + release.WorkingDir + "\n",
		"\nENV PATH=/ SSL_CERT_FILE=/" + release.CACertsPath + "\n",
		"/" + release.CACertsPath,
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the Dockerfile lacks %q, which the release image has", strings.TrimSpace(want))
		}
	}
	if strings.Contains(d, "distroless") {
		t.Error("the Dockerfile builds on distroless; the release image is from scratch")
	}
	labels := map[string]string{}
	for _, m := range regexp.MustCompile(`(org\.opencontainers\.image\.[a-z]+)="([^"]*)"`).FindAllStringSubmatch(d, -1) {
		labels[m[1]] = m[2]
	}
	ours := release.ImageSpec{}.Labels()
	if !slices.Equal(slices.Sorted(maps.Keys(labels)), slices.Sorted(maps.Keys(ours))) {
		t.Errorf("labels: the Dockerfile's %v, the release image's %v", slices.Sorted(maps.Keys(labels)), slices.Sorted(maps.Keys(ours)))
	}
	for k, v := range labels {
		if !strings.Contains(v, "$") && ours[k] != v {
			t.Errorf("label %s: the Dockerfile's %q, the release image's %q", k, v, ours[k])
		}
	}
	for _, gone := range []string{"../.goreleaser.yaml", "../.ko.yaml"} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s is back, but deploy/release does not use it", gone)
		}
	}
}
