package release

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// elfHeader returns the 64-byte header of a 64-bit little-endian ELF
// executable for machine, with a PT_INTERP program header when dynamic:
// all debug/elf needs to tell a platform, with no toolchain for it.
func elfHeader(machine uint16, dynamic bool) []byte {
	b := make([]byte, 64)
	copy(b, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le := binary.LittleEndian
	le.PutUint16(b[16:], 2) // ET_EXEC
	le.PutUint16(b[18:], machine)
	le.PutUint32(b[20:], 1)
	le.PutUint16(b[52:], 64) // ehsize
	le.PutUint16(b[54:], 56) // phentsize
	le.PutUint16(b[58:], 64) // shentsize
	if dynamic {
		le.PutUint64(b[32:], 64) // phoff
		le.PutUint16(b[56:], 1)  // phnum
		ph := make([]byte, 56)
		le.PutUint32(ph, 3) // PT_INTERP
		b = append(b, ph...)
	}
	return b
}

// machoHeader returns the 32-byte header of a 64-bit Mach-O executable for cpu.
func machoHeader(cpu uint32) []byte {
	b := make([]byte, 32)
	le := binary.LittleEndian
	le.PutUint32(b, 0xfeedfacf)
	le.PutUint32(b[4:], cpu)
	le.PutUint32(b[12:], 2) // MH_EXECUTE
	return b
}

var (
	amd64ELF = elfHeader(62, false)  // EM_X86_64
	arm64ELF = elfHeader(183, false) // EM_AARCH64
	linuxAMD = Platform{OS: "linux", Arch: "amd64"}
	linuxARM = Platform{OS: "linux", Arch: "arm64"}
)

func TestCheckBinary(t *testing.T) {
	for _, c := range []struct {
		name string
		bin  []byte
		p    Platform
		ok   bool
	}{
		{"linux/amd64", amd64ELF, linuxAMD, true},
		{"linux/arm64", arm64ELF, linuxARM, true},
		{"darwin/amd64", machoHeader(0x01000007), Platform{"darwin", "amd64"}, true},
		{"darwin/arm64", machoHeader(0x0100000c), Platform{"darwin", "arm64"}, true},
		{"amd64 ELF as arm64", amd64ELF, linuxARM, false},
		{"dynamic ELF", elfHeader(62, true), linuxAMD, false},
		{"Mach-O as linux", machoHeader(0x01000007), linuxAMD, false},
		{"arm64 Mach-O as amd64", machoHeader(0x0100000c), Platform{"darwin", "amd64"}, false},
		{"a script", []byte("#!/bin/sh\necho offsetkeeper\n"), linuxAMD, false},
		{"windows", amd64ELF, Platform{"windows", "amd64"}, false},
	} {
		if err := CheckBinary(c.bin, c.p); (err == nil) != c.ok {
			t.Errorf("%s: CheckBinary = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

// TestCheckBuild builds a small program with the release's flags (for
// this machine's platform only: the others would compile the standard
// library again) and checks what its build info is compared with.
func TestCheckBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nvar version = \"dev\"\n\nfunc main() { println(version) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := BuildFlags{Tags: "disable_grpc_modules", Ldflags: "-s -w -X main.version=v1.2.3"}
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", flags.Tags, "-ldflags", flags.Ldflags, "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	host := Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	if err := CheckBuild(data, host, flags); err != nil {
		t.Errorf("CheckBuild of a release-flags build: %v", err)
	}
	for name, c := range map[string]struct {
		p     Platform
		flags BuildFlags
		want  string
	}{
		"other ldflags": {host, BuildFlags{flags.Tags, "-s -w -X main.version=v1.2.4"}, "not stamped"},
		"other tags":    {host, BuildFlags{"", flags.Ldflags}, "-tags"},
		"other arch":    {Platform{host.OS, "riscv64"}, flags, "GOARCH"},
	} {
		if err := CheckBuild(data, c.p, c.flags); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckBuild = %v, want an error about %s", name, err, c.want)
		}
	}
	// This test's own binary is built without -trimpath or the tags.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(self); err != nil {
		t.Fatal(err)
	}
	if err := CheckBuild(data, host, flags); err == nil {
		t.Error("CheckBuild of the test binary passed")
	}
}

// testSpec writes fake binaries for the image's platforms.
func testSpec(t *testing.T) ImageSpec {
	t.Helper()
	dir := t.TempDir()
	s := ImageSpec{Binaries: map[Platform]string{}, CACerts: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
		Name: "docker.io/library/offsetkeeper", Version: "v1.2.3-4-gabcdef0", Commit: strings.Repeat("ab", 20), Created: time.Unix(1796635386, 0)}
	for p, bin := range map[Platform][]byte{linuxAMD: amd64ELF, linuxARM: arm64ELF} {
		path := filepath.Join(dir, p.Arch)
		if err := os.WriteFile(path, append(bin, []byte(p.Arch+" payload")...), 0o755); err != nil {
			t.Fatal(err)
		}
		s.Binaries[p] = path
	}
	return s
}

func writeImage(t *testing.T, s ImageSpec) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteImage(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestWriteImageVerifies(t *testing.T) {
	s := testSpec(t)
	img := writeImage(t, s)
	c, err := VerifyImage(bytes.NewReader(img), s)
	if err != nil {
		t.Fatalf("VerifyImage: %v", err)
	}
	for _, p := range ImagePlatforms {
		want, _ := os.ReadFile(s.Binaries[p])
		if !bytes.Equal(c.Binaries[p], want) {
			t.Errorf("%s: the layer's binary is not the one given", p)
		}
	}
	// The same spec, the same bytes: a commit's image has one digest.
	if again := writeImage(t, s); !bytes.Equal(again, img) {
		t.Error("two writes of the same spec differ")
	}
	// What docker load, podman load and skopeo read: index.json names the
	// image index, and the index each platform's manifest.
	files, err := readLayout(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	var top Index
	if err := json.Unmarshal(files["index.json"], &top); err != nil {
		t.Fatal(err)
	}
	if top.Manifests[0].Annotations["io.containerd.image.name"] != "docker.io/library/offsetkeeper:v1.2.3-4-gabcdef0" ||
		top.Manifests[0].Digest != c.IndexDigest {
		t.Errorf("index.json: %+v", top)
	}
}

func TestWriteImageRefuses(t *testing.T) {
	s := testSpec(t)
	s.Version = "v1.2.3+build"
	if err := WriteImage(io.Discard, s); err == nil {
		t.Error("a version that is no valid tag was written")
	}
	s = testSpec(t)
	s.Binaries[linuxARM] = s.Binaries[linuxAMD]
	if err := WriteImage(io.Discard, s); err == nil || !strings.Contains(err.Error(), "EM_X86_64") {
		t.Errorf("an amd64 binary as arm64: %v", err)
	}
	s = testSpec(t)
	s.CACerts = nil
	if err := WriteImage(io.Discard, s); err == nil {
		t.Error("an image without CA certificates was written")
	}
}

// rewrite returns the image tar with edit applied to each file's content.
func rewrite(t *testing.T, img []byte, edit func(name string, data []byte) (string, []byte)) []byte {
	t.Helper()
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	tr := tar.NewReader(bytes.NewReader(img))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if h.Typeflag == tar.TypeReg {
			h.Name, data = edit(h.Name, data)
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	return out.Bytes()
}

func TestVerifyImageFindsDamage(t *testing.T) {
	s := testSpec(t)
	img := writeImage(t, s)
	files, err := readLayout(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	// The first platform's config, found through the index.
	var top, idx Index
	var m Manifest
	json.Unmarshal(files["index.json"], &top)
	json.Unmarshal(files["blobs/sha256/"+top.Manifests[0].Digest[7:]], &idx)
	json.Unmarshal(files["blobs/sha256/"+idx.Manifests[0].Digest[7:]], &m)
	configName := "blobs/sha256/" + m.Config.Digest[7:]

	// renamed gives a changed blob its new digest as name, leaving the
	// descriptors that point at the old one.
	renamed := func(data []byte) string {
		sum := sha256.Sum256(data)
		return "blobs/sha256/" + hex.EncodeToString(sum[:])
	}
	for name, c := range map[string]struct {
		edit func(string, []byte) (string, []byte)
		spec func(*ImageSpec)
		want string
	}{
		"a flipped byte": {edit: func(n string, d []byte) (string, []byte) {
			if n == configName {
				d = bytes.Replace(d, []byte("65532"), []byte("65533"), 1)
			}
			return n, d
		}, want: "digest"},
		"a config running as root": {edit: func(n string, d []byte) (string, []byte) {
			if n == configName {
				d = bytes.Replace(d, []byte(`"User":"65532:65532"`), []byte(`"User":"0"`), 1)
				return renamed(d), d
			}
			return n, d
		}, want: "missing"},
		"an unknown file": {edit: func(n string, d []byte) (string, []byte) {
			if n == "oci-layout" {
				return "extra", d
			}
			return n, d
		}, want: "not part of an OCI layout"},
		"another version": {spec: func(s *ImageSpec) { s.Version = "v9" }, want: "index.json names"},
		"another commit":  {spec: func(s *ImageSpec) { s.Commit = "c0ffee" }, want: "revision"},
		"other CA certs":  {spec: func(s *ImageSpec) { s.CACerts = []byte("other") }, want: "CA bundle"},
	} {
		data, want := img, s
		if c.edit != nil {
			data = rewrite(t, img, c.edit)
		}
		if c.spec != nil {
			c.spec(&want)
		}
		if _, err := VerifyImage(bytes.NewReader(data), want); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: VerifyImage = %v, want an error with %q", name, err, c.want)
		}
	}
}

func TestArchiveAndChecksums(t *testing.T) {
	dir := t.TempDir()
	bin, readme := filepath.Join(dir, "bin"), filepath.Join(dir, "README.md")
	os.WriteFile(bin, amd64ELF, 0o755)
	os.WriteFile(readme, []byte("# offsetkeeper\n"), 0o644)
	out := t.TempDir()
	name := ArchiveName("v1.0.0", linuxAMD)
	if name != "offsetkeeper_v1.0.0_linux_amd64.tar.gz" {
		t.Errorf("ArchiveName = %s", name)
	}
	if err := WriteArchive(filepath.Join(out, name), bin, []string{readme}, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	files, modes, err := ReadArchive(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["offsetkeeper"], amd64ELF) || modes["offsetkeeper"] != 0o755 ||
		string(files["README.md"]) != "# offsetkeeper\n" || modes["README.md"] != 0o644 || len(files) != 2 {
		t.Errorf("archive holds %d files, modes %v", len(files), modes)
	}
	os.WriteFile(filepath.Join(out, "image.tar"), []byte("image"), 0o644)
	names := []string{name, "image.tar"}
	if err := WriteChecksums(out, names); err != nil {
		t.Fatal(err)
	}
	if err := VerifyChecksums(out, names); err != nil {
		t.Errorf("VerifyChecksums: %v", err)
	}
	// The tool operators use reads the same file.
	if sha, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command(sha, "-c", ChecksumsFile)
		cmd.Dir = out
		if b, err := cmd.CombinedOutput(); err != nil || strings.Count(string(b), ": OK") != 2 {
			t.Errorf("sha256sum -c: %v\n%s", err, b)
		}
	}
	if err := VerifyChecksums(out, append(names, "missing.tar")); err == nil {
		t.Error("a file left out of the checksums passed")
	}
	os.WriteFile(filepath.Join(out, "image.tar"), []byte("imagE"), 0o644)
	if err := VerifyChecksums(out, names); err == nil || !strings.Contains(err.Error(), "image.tar") {
		t.Errorf("a changed file: VerifyChecksums = %v", err)
	}
}
