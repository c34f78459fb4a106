package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The release configurations (.goreleaser.yaml for the binaries, .ko.yaml
// for the image, both run by deploy/release) build what the Dockerfile
// builds: static, without the gRPC transport, version and commit stamped,
// on the same base image. CI builds with these flags (deploy/release
// --check) but does not run goreleaser or ko, which would compile for
// many minutes; this test keeps the configurations from drifting.
func TestReleaseConfigsMatchDockerfile(t *testing.T) {
	docker, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	base := regexp.MustCompile(`(?m)^FROM (\S+)\s*$`).FindStringSubmatch(string(docker))
	if base == nil {
		t.Fatal("no final FROM in the Dockerfile")
	}
	type build struct {
		ID      string   `yaml:"id"`
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		Tags    []string `yaml:"tags"`
		Ldflags []string `yaml:"ldflags"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
	}
	var gr struct {
		Version int     `yaml:"version"`
		Builds  []build `yaml:"builds"`
	}
	var ko struct {
		DefaultBaseImage string   `yaml:"defaultBaseImage"`
		DefaultPlatforms []string `yaml:"defaultPlatforms"`
		Builds           []build  `yaml:"builds"`
	}
	for path, v := range map[string]any{"../.goreleaser.yaml": &gr, "../.ko.yaml": &ko} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(v); err != nil && path == "../.ko.yaml" {
			t.Fatalf("%s: %v", path, err)
		} else if err != nil {
			// goreleaser has more sections than this test reads.
			if err := yaml.Unmarshal(b, v); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
	}
	if gr.Version != 2 || len(gr.Builds) != 1 || len(ko.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml version %d with %d builds, .ko.yaml %d builds", gr.Version, len(gr.Builds), len(ko.Builds))
	}
	g, k := gr.Builds[0], ko.Builds[0]
	for name, b := range map[string]build{".goreleaser.yaml": g, ".ko.yaml": k} {
		flags := strings.Join(append(slices.Clone(b.Flags), "-tags="+strings.Join(b.Tags, ",")), " ")
		ld := strings.Join(b.Ldflags, " ")
		if b.Main != "./cmd/offsetkeeper" || !slices.Contains(b.Env, "CGO_ENABLED=0") || !strings.Contains(flags, "-trimpath") ||
			!strings.Contains(flags, "disable_grpc_modules") || !strings.Contains(ld, "-s -w -X main.version=") || !strings.Contains(ld, "-X main.commit=") {
			t.Errorf("%s builds otherwise than the Dockerfile: %+v", name, b)
		}
	}
	if !slices.Equal(g.Goos, []string{"linux", "darwin"}) || !slices.Equal(g.Goarch, []string{"amd64", "arm64"}) {
		t.Errorf(".goreleaser.yaml targets %v × %v, want linux and darwin, amd64 and arm64", g.Goos, g.Goarch)
	}
	if ko.DefaultBaseImage != base[1] || !slices.Equal(ko.DefaultPlatforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf(".ko.yaml: base %s on %v, want the Dockerfile's %s on linux/amd64 and linux/arm64", ko.DefaultBaseImage, ko.DefaultPlatforms, base[1])
	}
}
