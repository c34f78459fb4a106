// Command releasetool packs and checks a release directory for
// deploy/release, after it has built the binaries into
// DIR/offsetkeeper_OS_ARCH/offsetkeeper:
//
//	releasetool pack   -dir DIR -version V -commit C -created UNIX -tags T -ldflags L [-ca FILE] [FILE...]
//	releasetool verify -dir DIR -version V -commit C -created UNIX -tags T -ldflags L [-ca FILE] [FILE...]
//
// pack writes offsetkeeper_V_OS_ARCH.tar.gz (the binary and the FILEs,
// README.md and LICENSE), offsetkeeper-image.tar (OCI image layout,
// linux/amd64 and linux/arm64 from scratch with the -ca bundle) and
// checksums.txt. verify checks all of them and runs the binary of this
// machine's platform, from its archive and from the image's layer, to see
// the stamped version. Exit codes: 0 ok, 1 a check failed, 2 usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/deploy/internal/release"
)

// ImageFile is the image's file name in the release directory.
const ImageFile = "offsetkeeper-image.tar"

// Platforms are the release binaries' platforms.
var Platforms = []release.Platform{
	{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"},
	{OS: "darwin", Arch: "amd64"}, {OS: "darwin", Arch: "arm64"},
}

type options struct {
	dir, version, commit, ca string
	created                  int64
	flags                    release.BuildFlags
	files                    []string
}

func (o options) binary(p release.Platform) string {
	return filepath.Join(o.dir, "offsetkeeper_"+p.OS+"_"+p.Arch, "offsetkeeper")
}

func (o options) spec() (release.ImageSpec, error) {
	ca, err := os.ReadFile(o.ca)
	if err != nil {
		return release.ImageSpec{}, fmt.Errorf("read CA certificates: %w", err)
	}
	s := release.ImageSpec{Binaries: map[release.Platform]string{}, CACerts: ca, Name: "docker.io/library/offsetkeeper",
		Version: o.version, Commit: o.commit, Created: time.Unix(o.created, 0)}
	for _, p := range release.ImagePlatforms {
		s.Binaries[p] = o.binary(p)
	}
	return s, nil
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "pack" && os.Args[1] != "verify") {
		fmt.Fprintln(os.Stderr, "usage: releasetool pack|verify -dir DIR -version V -commit C -created UNIX -tags T -ldflags L [-ca FILE] [FILE...]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("releasetool "+os.Args[1], flag.ContinueOnError)
	var o options
	fs.StringVar(&o.dir, "dir", "dist", "release directory")
	fs.StringVar(&o.version, "version", "", "version stamped in the binaries; the image's tag")
	fs.StringVar(&o.commit, "commit", "", "commit stamped in the binaries")
	fs.Int64Var(&o.created, "created", 0, "Unix time of every archive entry and of the image")
	fs.StringVar(&o.flags.Tags, "tags", "", "go build -tags of the binaries")
	fs.StringVar(&o.flags.Ldflags, "ldflags", "", "go build -ldflags of the binaries")
	fs.StringVar(&o.ca, "ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied into the image")
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	o.files = fs.Args()
	if o.version == "" || o.commit == "" || o.flags.Ldflags == "" {
		fmt.Fprintln(os.Stderr, "releasetool: -version, -commit and -ldflags are required")
		os.Exit(2)
	}
	run := pack
	if os.Args[1] == "verify" {
		run = verify
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "releasetool %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// pack writes the archives, the image and the checksums.
func pack(o options, out io.Writer) error {
	mtime := time.Unix(o.created, 0)
	var names []string
	for _, p := range Platforms {
		bin, err := os.ReadFile(o.binary(p))
		if err != nil {
			return err
		}
		if err := checkBinary(bin, p, o.flags); err != nil {
			return fmt.Errorf("%s: %w", o.binary(p), err)
		}
		name := release.ArchiveName(o.version, p)
		if err := release.WriteArchive(filepath.Join(o.dir, name), o.binary(p), o.files, mtime); err != nil {
			return err
		}
		names = append(names, name)
	}
	spec, err := o.spec()
	if err != nil {
		return err
	}
	err = release.WriteFileAtomic(filepath.Join(o.dir, ImageFile), func(w io.Writer) error { return release.WriteImage(w, spec) })
	if err != nil {
		return err
	}
	if err := release.WriteChecksums(o.dir, append(names, ImageFile)); err != nil {
		return err
	}
	for _, n := range append(names, ImageFile, release.ChecksumsFile) {
		fi, err := os.Stat(filepath.Join(o.dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-48s %6.1f MiB\n", filepath.Join(o.dir, n), float64(fi.Size())/(1<<20))
	}
	return nil
}

func checkBinary(bin []byte, p release.Platform, flags release.BuildFlags) error {
	if err := release.CheckBinary(bin, p); err != nil {
		return err
	}
	return release.CheckBuild(bin, p, flags)
}

// verify checks every artifact pack wrote.
func verify(o options, out io.Writer) error {
	host := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	archived := map[release.Platform][]byte{}
	var names []string
	for _, p := range Platforms {
		name := release.ArchiveName(o.version, p)
		bin, err := verifyArchive(filepath.Join(o.dir, name), p, o)
		if err != nil {
			return err
		}
		archived[p] = bin
		names = append(names, name)
		fmt.Fprintf(out, "release check: %s: %s executable, -tags %s, -trimpath, static, stamped %s\n",
			name, map[string]string{"linux": "ELF", "darwin": "Mach-O"}[p.OS], o.flags.Tags, o.version)
	}
	if err := release.VerifyChecksums(o.dir, append(names, ImageFile)); err != nil {
		return err
	}
	fmt.Fprintf(out, "release check: %s: %d files, every SHA-256 matches\n", release.ChecksumsFile, len(names)+1)
	spec, err := o.spec()
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(o.dir, ImageFile))
	if err != nil {
		return err
	}
	img, err := release.VerifyImage(f, spec)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", ImageFile, err)
	}
	for _, p := range release.ImagePlatforms {
		if string(img.Binaries[p]) != string(archived[p]) {
			return fmt.Errorf("%s: the %s binary is not the one in %s", ImageFile, p, release.ArchiveName(o.version, p))
		}
	}
	fmt.Fprintf(out, "release check: %s: %s %s, %s and %s, user %s, entrypoint %v\n", ImageFile, spec.RefName(),
		img.IndexDigest[:19], release.ImagePlatforms[0], release.ImagePlatforms[1], release.User, release.Entrypoint)
	if archived[host] == nil {
		return fmt.Errorf("no release binary for this machine's platform %s to run", host)
	}
	runs := []struct {
		what string
		bin  []byte
	}{{release.ArchiveName(o.version, host), archived[host]}, {ImageFile + " /" + release.BinaryPath, img.Binaries[host]}}
	for _, r := range runs {
		if r.bin == nil {
			continue // darwin: the image is linux only
		}
		got, err := runVersion(r.bin, o)
		if err != nil {
			return fmt.Errorf("%s: %w", r.what, err)
		}
		fmt.Fprintf(out, "release check: %s runs: %s\n", r.what, got)
	}
	return nil
}

// verifyArchive checks an archive's entries and its binary, and returns the binary.
func verifyArchive(path string, p release.Platform, o options) ([]byte, error) {
	files, modes, err := release.ReadArchive(path)
	if err != nil {
		return nil, err
	}
	if len(files) != len(o.files)+1 || modes["offsetkeeper"] != 0o755 {
		return nil, fmt.Errorf("%s holds %d files (offsetkeeper mode %o), want offsetkeeper (0755) and %v", path, len(files), modes["offsetkeeper"], o.files)
	}
	for _, f := range o.files {
		want, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if string(files[filepath.Base(f)]) != string(want) {
			return nil, fmt.Errorf("%s: %s is not the repository's %s", path, filepath.Base(f), f)
		}
	}
	if err := checkBinary(files["offsetkeeper"], p, o.flags); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return files["offsetkeeper"], nil
}

// runVersion writes bin to a temporary file, runs its version command and
// checks the version and commit it prints.
func runVersion(bin []byte, o options) (string, error) {
	dir, err := os.MkdirTemp("", "releasetool")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "offsetkeeper")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := exec.CommandContext(ctx, path, "version").Output()
	got := strings.TrimSpace(string(b))
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "", fmt.Errorf("offsetkeeper version: %w: %s", err, exit.Stderr)
	} else if err != nil {
		return "", fmt.Errorf("offsetkeeper version: %w", err)
	}
	if want := "offsetkeeper " + o.version + " (commit " + o.commit + ","; !strings.HasPrefix(got, want) {
		return "", fmt.Errorf("offsetkeeper version printed %q, want %q...", got, want)
	}
	return got, nil
}
