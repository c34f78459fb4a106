package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"time"
)

// OCI media types of the image's parts.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// The image's run settings: those of deploy/Dockerfile (deploy's tests hold
// the two to the same), with the nonroot user by number, so that
// Kubernetes' runAsNonRoot can check it.
const (
	User        = "65532:65532"
	WorkingDir  = "/home/nonroot"
	ExposedPort = "9464/tcp"
	// BinaryPath is where the binary lies in the layer (no leading slash, as tar names are).
	BinaryPath = "offsetkeeper"
	// CACertsPath is where the CA bundle lies, the first place Go's crypto/x509 looks on Linux.
	CACertsPath = "etc/ssl/certs/ca-certificates.crt"
)

var (
	// Entrypoint is the image's ENTRYPOINT.
	Entrypoint = []string{"/offsetkeeper"}
	// Cmd is the image's CMD.
	Cmd = []string{"daemon"}
	// ImagePlatforms are the platforms of the image index, in its order.
	ImagePlatforms = []Platform{{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"}}
)

// tagRE is the syntax of an image tag (distribution/reference).
var tagRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// Platform is an OS and architecture as Go and OCI both spell them.
type Platform struct {
	OS   string `json:"os"`
	Arch string `json:"architecture"`
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Descriptor points at a blob (OCI image-spec descriptor.md).
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Index is an image index, also the layout's index.json.
type Index struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []Descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Manifest is an image manifest.
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        Descriptor        `json:"config"`
	Layers        []Descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Config is an image configuration (OCI image-spec config.md).
type Config struct {
	Created      string    `json:"created,omitempty"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       RunConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []History `json:"history,omitempty"`
}

// RunConfig is the part of Config a runtime uses to start a container.
type RunConfig struct {
	User         string              `json:"User,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
	Labels       map[string]string   `json:"Labels,omitempty"`
}

// History describes how a layer was made.
type History struct {
	Created   string `json:"created,omitempty"`
	CreatedBy string `json:"created_by,omitempty"`
	Comment   string `json:"comment,omitempty"`
}

// ImageSpec is what WriteImage puts in the image.
type ImageSpec struct {
	// Binaries maps each of ImagePlatforms to the path of its static binary.
	Binaries map[Platform]string
	// CACerts is the CA bundle copied to CACertsPath.
	CACerts []byte
	// Name is the repository the image is named after in index.json, in
	// full as docker save writes it: "docker.io/library/offsetkeeper"
	// loads as offsetkeeper:Version.
	Name string
	// Version and Commit are stamped in the labels; Version is also the tag.
	Version, Commit string
	// Created is every file's time and the image's creation time: the
	// commit's time makes the same commit give the same digests.
	Created time.Time
}

// Labels returns the image's OCI labels, those of deploy/Dockerfile.
func (s ImageSpec) Labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":         "offsetkeeper",
		"org.opencontainers.image.description":   "Backs up and restores Kafka Connect offsets",
		"org.opencontainers.image.source":        "https://github.com/offsetkeeper/offsetkeeper",
		"org.opencontainers.image.documentation": "https://github.com/offsetkeeper/offsetkeeper/blob/main/deploy/README.md",
		"org.opencontainers.image.version":       s.Version,
		"org.opencontainers.image.revision":      s.Commit,
		"org.opencontainers.image.created":       s.created(),
	}
}

func (s ImageSpec) created() string { return s.Created.UTC().Format(time.RFC3339) }

// RefName returns the image's name in index.json: Name:Version.
func (s ImageSpec) RefName() string { return s.Name + ":" + s.Version }

// blobs collects content-addressed blobs.
type blobs map[string][]byte

func (b blobs) add(mediaType string, data []byte) Descriptor {
	sum := sha256.Sum256(data)
	d := "sha256:" + hex.EncodeToString(sum[:])
	b[d] = data
	return Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(data))}
}

func (b blobs) addJSON(mediaType string, v any) (Descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return Descriptor{}, fmt.Errorf("encode %s: %w", mediaType, err)
	}
	return b.add(mediaType, data), nil
}

// WriteImage writes the image as an OCI image layout in a tar stream to w:
// oci-layout, index.json and blobs/sha256/, loadable by docker load,
// podman load and skopeo (oci-archive:). index.json names one image index,
// annotated with RefName, that holds a manifest for each of ImagePlatforms.
// Each image is one layer from scratch: the binary, the CA bundle, the
// nonroot user in /etc/passwd and /etc/group, its home and /tmp. The same
// spec gives the same bytes.
func WriteImage(w io.Writer, s ImageSpec) error {
	if !tagRE.MatchString(s.Version) {
		return fmt.Errorf("write image: version %q is not a valid image tag (letters, digits, _ . -)", s.Version)
	}
	if len(s.CACerts) == 0 {
		return fmt.Errorf("write image: no CA certificates")
	}
	b := blobs{}
	var manifests []Descriptor
	for _, p := range ImagePlatforms {
		path, ok := s.Binaries[p]
		if !ok {
			return fmt.Errorf("write image: no binary for %s", p)
		}
		bin, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("write image: %w", err)
		}
		if err := CheckBinary(bin, p); err != nil {
			return fmt.Errorf("write image: %s: %w", path, err)
		}
		d, err := addImage(b, s, p, bin)
		if err != nil {
			return fmt.Errorf("write image for %s: %w", p, err)
		}
		manifests = append(manifests, d)
	}
	idx, err := b.addJSON(MediaTypeIndex, Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: manifests})
	if err != nil {
		return err
	}
	idx.Annotations = map[string]string{
		"org.opencontainers.image.ref.name": s.Version,
		"io.containerd.image.name":          s.RefName(),
	}
	top, err := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{idx}})
	if err != nil {
		return fmt.Errorf("encode index.json: %w", err)
	}
	return writeLayout(w, b, top, s.Created)
}

// addImage adds one platform's layer, config and manifest to b.
func addImage(b blobs, s ImageSpec, p Platform, bin []byte) (Descriptor, error) {
	layer, diffID, err := rootFS(s, bin)
	if err != nil {
		return Descriptor{}, err
	}
	ld := b.add(MediaTypeLayer, layer)
	cfg := Config{Created: s.created(), Architecture: p.Arch, OS: p.OS, Config: RunConfig{
		User:         User,
		ExposedPorts: map[string]struct{}{ExposedPort: {}},
		Env:          []string{"PATH=/", "SSL_CERT_FILE=/" + CACertsPath},
		Entrypoint:   Entrypoint,
		Cmd:          Cmd,
		WorkingDir:   WorkingDir,
		Labels:       s.Labels(),
	}}
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{diffID}
	cfg.History = []History{{Created: s.created(), CreatedBy: "deploy/release", Comment: "offsetkeeper " + s.Version + " from scratch"}}
	cd, err := b.addJSON(MediaTypeConfig, cfg)
	if err != nil {
		return Descriptor{}, err
	}
	md, err := b.addJSON(MediaTypeManifest, Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, Config: cd, Layers: []Descriptor{ld}})
	if err != nil {
		return Descriptor{}, err
	}
	md.Platform = &p
	return md, nil
}

// rootFS returns the gzipped layer and the digest of its uncompressed tar.
func rootFS(s ImageSpec, bin []byte) (layer []byte, diffID string, err error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	type entry struct {
		name string
		mode int64
		uid  int
		data []byte
		dir  bool
	}
	for _, e := range []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: CACertsPath, mode: 0o644, data: s.CACerts},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, uid: 65532, dir: true},
		{name: BinaryPath, mode: 0o755, data: bin},
		{name: "tmp/", mode: 0o1777, dir: true},
	} {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, Size: int64(len(e.data)),
			ModTime: s.Created.UTC().Truncate(time.Second), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if e.dir {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, "", fmt.Errorf("write layer entry %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, "", fmt.Errorf("write layer entry %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", fmt.Errorf("write layer: %w", err)
	}
	sum := sha256.Sum256(raw.Bytes())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz) // no name, no time: the same input gives the same bytes
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", fmt.Errorf("compress layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, "", fmt.Errorf("compress layer: %w", err)
	}
	return gz.Bytes(), "sha256:" + hex.EncodeToString(sum[:]), nil
}

// writeLayout writes the layout's files to w as a tar stream, the blobs in
// digest order.
func writeLayout(w io.Writer, b blobs, index []byte, created time.Time) error {
	tw := tar.NewWriter(w)
	mtime := created.UTC().Truncate(time.Second)
	file := func(name string, data []byte) error {
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", index); err != nil {
		return err
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Mode: 0o755, ModTime: mtime, Typeflag: tar.TypeDir, Format: tar.FormatUSTAR}); err != nil {
			return fmt.Errorf("write %s: %w", dir, err)
		}
	}
	digests := make([]string, 0, len(b))
	for d := range b {
		digests = append(digests, d)
	}
	slices.Sort(digests)
	for _, d := range digests {
		if err := file("blobs/sha256/"+d[len("sha256:"):], b[d]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write image layout: %w", err)
	}
	return nil
}
