package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// CheckBinary checks that bin is an executable for p: a static ELF (no
// interpreter, no shared libraries) for linux, a Mach-O for darwin, of p's
// architecture.
func CheckBinary(bin []byte, p Platform) error {
	switch p.OS {
	case "linux":
		f, err := elf.NewFile(bytes.NewReader(bin))
		if err != nil {
			return fmt.Errorf("not an ELF executable for %s: %w", p, err)
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[p.Arch]
		if f.Class != elf.ELFCLASS64 || f.Machine != want || f.Type != elf.ET_EXEC {
			return fmt.Errorf("ELF %v %v %v, want ELFCLASS64 %v ET_EXEC for %s", f.Class, f.Machine, f.Type, want, p)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
				return fmt.Errorf("ELF for %s is dynamically linked (%v): build with CGO_ENABLED=0", p, prog.Type)
			}
		}
	case "darwin":
		f, err := macho.NewFile(bytes.NewReader(bin))
		if err != nil {
			return fmt.Errorf("not a Mach-O executable for %s: %w", p, err)
		}
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[p.Arch]
		if f.Cpu != want || f.Type != macho.TypeExec {
			return fmt.Errorf("Mach-O %v type %v, want %v executable for %s", f.Cpu, f.Type, want, p)
		}
	default:
		return fmt.Errorf("no check for %s", p)
	}
	return nil
}

// BuildFlags are the go build settings every release binary carries.
type BuildFlags struct {
	Tags    string // -tags, e.g. "disable_grpc_modules"
	Ldflags string // -ldflags, with the version and commit stamped by -X
}

// CheckBuild checks the build settings Go recorded in bin (debug/buildinfo):
// built for p with CGO_ENABLED=0, -trimpath, without VCS stamping (as the
// Dockerfile, whose context has no .git), and with exactly want's -tags.
// Go leaves -ldflags out of the build info of a -trimpath build
// (golang/go#52372), so the value of each -X in want.Ldflags is looked for
// in the binary's data instead.
func CheckBuild(bin []byte, p Platform, want BuildFlags) error {
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("read build info: %w", err)
	}
	got := map[string]string{}
	for _, s := range info.Settings {
		got[s.Key] = s.Value
	}
	for _, k := range []string{"GOOS", "GOARCH", "CGO_ENABLED", "-trimpath", "-tags"} {
		v := map[string]string{"GOOS": p.OS, "GOARCH": p.Arch, "CGO_ENABLED": "0", "-trimpath": "true", "-tags": want.Tags}[k]
		if got[k] != v {
			return fmt.Errorf("built with %s=%q, want %q", k, got[k], v)
		}
	}
	if ld, ok := got["-ldflags"]; ok && ld != want.Ldflags {
		return fmt.Errorf("built with -ldflags=%q, want %q", ld, want.Ldflags)
	}
	if rev, ok := got["vcs.revision"]; ok {
		return fmt.Errorf("built with VCS stamping (vcs.revision=%s), want GOFLAGS=-buildvcs=false as deploy/Dockerfile", rev)
	}
	fields := strings.Fields(want.Ldflags)
	for i, f := range fields {
		if f != "-X" || i+1 == len(fields) {
			continue
		}
		_, val, _ := strings.Cut(fields[i+1], "=")
		if val != "" && !bytes.Contains(bin, []byte(val)) {
			return fmt.Errorf("-X %s is not stamped: the binary does not hold %q", fields[i+1], val)
		}
	}
	return nil
}

// ImageCheck is what VerifyImage found in a valid image.
type ImageCheck struct {
	// IndexDigest is the digest of the image index, the one a registry would show.
	IndexDigest string
	// Manifests maps each platform to its manifest's digest.
	Manifests map[Platform]string
	// Binaries maps each platform to the binary found in its layer.
	Binaries map[Platform][]byte
}

// VerifyImage reads an OCI image layout tar stream, as WriteImage writes it,
// and checks it whole: every blob's name is its digest and every size is
// right; index.json names want.RefName and one image index whose
// manifests are ImagePlatforms; each config has the platform, the user,
// entrypoint, cmd, port and the version and commit labels of want; each
// layer's digest is its config's diff_id and holds want.CACerts, the
// nonroot user and a static binary for its platform; no blob is left over.
func VerifyImage(r io.Reader, want ImageSpec) (*ImageCheck, error) {
	files, err := readLayout(r)
	if err != nil {
		return nil, err
	}
	if v := string(files["oci-layout"]); v != `{"imageLayoutVersion":"1.0.0"}` {
		return nil, fmt.Errorf("oci-layout is %q, want imageLayoutVersion 1.0.0", v)
	}
	used := map[string]bool{}
	blob := func(d Descriptor, mediaType string) ([]byte, error) {
		if d.MediaType != mediaType || !digestRE.MatchString(d.Digest) {
			return nil, fmt.Errorf("descriptor %s of %s, want a sha256 digest of %s", d.Digest, d.MediaType, mediaType)
		}
		name := "blobs/sha256/" + strings.TrimPrefix(d.Digest, "sha256:")
		data, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("blob %s is missing", d.Digest)
		}
		if int64(len(data)) != d.Size {
			return nil, fmt.Errorf("blob %s is %d bytes, its descriptor says %d", d.Digest, len(data), d.Size)
		}
		used[name] = true
		return data, nil
	}
	var top Index
	if err := strictJSON(files["index.json"], &top); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	if top.SchemaVersion != 2 || len(top.Manifests) != 1 {
		return nil, fmt.Errorf("index.json: schemaVersion %d with %d manifests, want 2 with one image index", top.SchemaVersion, len(top.Manifests))
	}
	d := top.Manifests[0]
	if ref := d.Annotations["io.containerd.image.name"]; ref != want.RefName() || d.Annotations["org.opencontainers.image.ref.name"] != want.Version {
		return nil, fmt.Errorf("index.json names %q (tag %q), want %q", ref, d.Annotations["org.opencontainers.image.ref.name"], want.RefName())
	}
	data, err := blob(d, MediaTypeIndex)
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := strictJSON(data, &idx); err != nil {
		return nil, fmt.Errorf("image index: %w", err)
	}
	if len(idx.Manifests) != len(ImagePlatforms) {
		return nil, fmt.Errorf("image index has %d manifests, want %v", len(idx.Manifests), ImagePlatforms)
	}
	c := &ImageCheck{IndexDigest: d.Digest, Manifests: map[Platform]string{}, Binaries: map[Platform][]byte{}}
	for i, p := range ImagePlatforms {
		md := idx.Manifests[i]
		if md.Platform == nil || *md.Platform != p {
			return nil, fmt.Errorf("manifest %d is for %v, want %s", i, md.Platform, p)
		}
		bin, err := verifyManifest(md, p, want, blob)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", p, err)
		}
		c.Manifests[p], c.Binaries[p] = md.Digest, bin
	}
	for name := range files {
		if strings.HasPrefix(name, "blobs/") && !used[name] {
			return nil, fmt.Errorf("%s is not referenced by the index", name)
		}
	}
	return c, nil
}

func verifyManifest(md Descriptor, p Platform, want ImageSpec, blob func(Descriptor, string) ([]byte, error)) ([]byte, error) {
	data, err := blob(md, MediaTypeManifest)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := strictJSON(data, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if m.SchemaVersion != 2 || m.MediaType != MediaTypeManifest || len(m.Layers) != 1 {
		return nil, fmt.Errorf("manifest schemaVersion %d, %s, %d layers; want 2, %s, 1 layer", m.SchemaVersion, m.MediaType, len(m.Layers), MediaTypeManifest)
	}
	data, err = blob(m.Config, MediaTypeConfig)
	if err != nil {
		return nil, err
	}
	var cfg Config
	if err := strictJSON(data, &cfg); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	rc := cfg.Config
	switch {
	case cfg.OS != p.OS || cfg.Architecture != p.Arch:
		return nil, fmt.Errorf("config is for %s/%s", cfg.OS, cfg.Architecture)
	case rc.User != User || !slices.Equal(rc.Entrypoint, Entrypoint) || !slices.Equal(rc.Cmd, Cmd) || rc.WorkingDir != WorkingDir:
		return nil, fmt.Errorf("config runs %v %v as %q in %q, want %v %v as %q in %q",
			rc.Entrypoint, rc.Cmd, rc.User, rc.WorkingDir, Entrypoint, Cmd, User, WorkingDir)
	case !slices.Equal(slices.Collect(maps.Keys(rc.ExposedPorts)), []string{ExposedPort}):
		return nil, fmt.Errorf("config exposes %v, want %s", rc.ExposedPorts, ExposedPort)
	case rc.Labels["org.opencontainers.image.version"] != want.Version || rc.Labels["org.opencontainers.image.revision"] != want.Commit:
		return nil, fmt.Errorf("config labels version %q revision %q, want %q %q", rc.Labels["org.opencontainers.image.version"],
			rc.Labels["org.opencontainers.image.revision"], want.Version, want.Commit)
	case cfg.RootFS.Type != "layers" || len(cfg.RootFS.DiffIDs) != 1:
		return nil, fmt.Errorf("config rootfs %s with %d diff_ids, want layers with 1", cfg.RootFS.Type, len(cfg.RootFS.DiffIDs))
	}
	layer, err := blob(m.Layers[0], MediaTypeLayer)
	if err != nil {
		return nil, err
	}
	bin, err := verifyLayer(layer, cfg.RootFS.DiffIDs[0], want.CACerts)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", m.Layers[0].Digest, err)
	}
	if err := CheckBinary(bin, p); err != nil {
		return nil, fmt.Errorf("/%s: %w", BinaryPath, err)
	}
	return bin, nil
}

// verifyLayer checks the gzipped layer against diffID and its files, and
// returns the binary.
func verifyLayer(layer []byte, diffID string, caCerts []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != diffID {
		return nil, fmt.Errorf("uncompressed digest is not the config's diff_id %s", diffID)
	}
	type file struct {
		h    *tar.Header
		data []byte
	}
	fs := map[string]file{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read tar: %w", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", h.Name, err)
		}
		fs[strings.TrimSuffix(h.Name, "/")] = file{h, data}
	}
	want := []struct {
		name     string
		typeflag byte
		mode     int64
		uid      int
	}{
		{BinaryPath, tar.TypeReg, 0o755, 0}, {CACertsPath, tar.TypeReg, 0o644, 0},
		{"etc/passwd", tar.TypeReg, 0o644, 0}, {"etc/group", tar.TypeReg, 0o644, 0},
		{"home/nonroot", tar.TypeDir, 0o700, 65532}, {"tmp", tar.TypeDir, 0o1777, 0},
	}
	for _, w := range want {
		f, ok := fs[w.name]
		if !ok {
			return nil, fmt.Errorf("no /%s", w.name)
		}
		if f.h.Typeflag != w.typeflag || f.h.Mode != w.mode || f.h.Uid != w.uid {
			return nil, fmt.Errorf("/%s: type %c mode %o uid %d, want %c %o %d", w.name, f.h.Typeflag, f.h.Mode, f.h.Uid, w.typeflag, w.mode, w.uid)
		}
	}
	if !bytes.Equal(fs[CACertsPath].data, caCerts) {
		return nil, fmt.Errorf("/%s is not the build machine's CA bundle", CACertsPath)
	}
	if !bytes.Contains(fs["etc/passwd"].data, []byte("\nnonroot:x:65532:65532:")) {
		return nil, fmt.Errorf("/etc/passwd has no nonroot user 65532")
	}
	return fs[BinaryPath].data, nil
}

// readLayout reads the layout's regular files by name, refusing names that
// are not clean relative paths and names given twice.
func readLayout(r io.Reader) (map[string][]byte, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read image tar: %w", err)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Typeflag != tar.TypeReg || path.Clean(h.Name) != h.Name || strings.HasPrefix(h.Name, "/") || strings.HasPrefix(h.Name, "..") {
			return nil, fmt.Errorf("image tar entry %q (type %c) is not a plain file of the layout", h.Name, h.Typeflag)
		}
		if _, dup := files[h.Name]; dup {
			return nil, fmt.Errorf("image tar holds %s twice", h.Name)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", h.Name, err)
		}
		if hexd, ok := strings.CutPrefix(h.Name, "blobs/sha256/"); ok {
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hexd {
				return nil, fmt.Errorf("blob %s: its content's digest is sha256:%x", h.Name, sum)
			}
		} else if h.Name != "oci-layout" && h.Name != "index.json" {
			return nil, fmt.Errorf("image tar holds %s, which is not part of an OCI layout", h.Name)
		}
		files[h.Name] = data
	}
	return files, nil
}

// strictJSON decodes data into v, refusing unknown fields and trailing data.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}
