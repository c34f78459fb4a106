package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ChecksumsFile is the name of the checksums file in the release directory.
const ChecksumsFile = "checksums.txt"

// ArchiveName returns the name of the archive of one platform's binary,
// the name goreleaser gave it: offsetkeeper_VERSION_OS_ARCH.tar.gz.
func ArchiveName(version string, p Platform) string {
	return "offsetkeeper_" + version + "_" + p.OS + "_" + p.Arch + ".tar.gz"
}

// WriteFileAtomic writes dst through a .part file renamed into place, so
// that dst is either whole or absent.
func WriteFileAtomic(dst string, write func(io.Writer) error) error {
	part := dst + ".part"
	f, err := os.Create(part)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(part, dst)
	}
	if err != nil {
		os.Remove(part)
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// WriteArchive writes a .tar.gz at dst holding the binary as offsetkeeper
// (mode 0755) and each of files by its base name (0644), every entry owned
// by root and dated mtime, so that the same inputs give the same bytes.
func WriteArchive(dst, binary string, files []string, mtime time.Time) error {
	return WriteFileAtomic(dst, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		tw := tar.NewWriter(zw)
		add := func(name, src string, mode int64) error {
			data, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			h := &tar.Header{Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime.UTC().Truncate(time.Second),
				Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		if err := add("offsetkeeper", binary, 0o755); err != nil {
			return err
		}
		for _, f := range files {
			if err := add(filepath.Base(f), f, 0o644); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return zw.Close()
	})
}

// ReadArchive returns the files of a .tar.gz by name; it refuses anything
// but regular files at the top level.
func ReadArchive(path string) (map[string][]byte, map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	files, modes := map[string][]byte{}, map[string]int64{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, modes, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg || strings.Contains(h.Name, "/") || files[h.Name] != nil {
			return nil, nil, fmt.Errorf("read %s: entry %q is not a single top-level file", path, h.Name)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		modes[h.Name] = h.Mode
	}
}

// WriteChecksums writes dir/checksums.txt with the SHA-256 of each named
// file of dir, in the form sha256sum -c reads ("HEX  NAME"), sorted by name.
func WriteChecksums(dir string, names []string) error {
	names = slices.Sorted(slices.Values(names))
	var b bytes.Buffer
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return WriteFileAtomic(filepath.Join(dir, ChecksumsFile), func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

// VerifyChecksums checks dir/checksums.txt: it lists exactly the names
// given, each with its file's SHA-256.
func VerifyChecksums(dir string, names []string) error {
	data, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		return err
	}
	var listed []string
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			return fmt.Errorf("%s line %d: %q is not \"SHA256  NAME\"", ChecksumsFile, i+1, line)
		}
		got, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("%s line %d: %w", ChecksumsFile, i+1, err)
		}
		if got != sum {
			return fmt.Errorf("%s: %s has SHA-256 %s, the file lists %s", ChecksumsFile, name, got, sum)
		}
		listed = append(listed, name)
	}
	if want := slices.Sorted(slices.Values(names)); !slices.Equal(listed, want) {
		return fmt.Errorf("%s lists %v, want %v", ChecksumsFile, listed, want)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
