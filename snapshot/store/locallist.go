package store

// This file lists a local store (a directory opened by OpenStore) from the
// file system rather than through fileblob. fileblob reads a directory and
// then stats each name: a file renamed or deleted in between (its own
// *.tmp files, renamed into place by every write; another process's
// retention) failed the whole listing with "lstat ...: no such file or
// directory", and the daemon failed one run in 16 on file://. Here a
// temporary file is never listed and a name that vanished is absent.

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
)

// tempSuffix ends the temporary files fileblob writes an object to before
// renaming it into place; attrsSuffix the files that hold its attributes.
const (
	tempSuffix  = ".tmp"
	attrsSuffix = ".attrs"
)

// eachLocal is eachObject for a local store: every object under
// opts.Prefix in key order, directories collapsed at opts.Delimiter as a
// bucket LIST does. Temporary and attribute files are skipped, and so is
// a file that is gone by the time it is looked at.
func (s *Store) eachLocal(ctx context.Context, opts *blob.ListOptions, fn func(*blob.ListObject) error) error {
	root := filepath.Join(s.dir, filepath.FromSlash(opts.Prefix))
	if opts.Prefix == "" || !strings.HasSuffix(opts.Prefix, "/") {
		root = filepath.Dir(root) // the prefix ends within a name
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // the store, or a directory, is not there (any more)
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(s.dir, path)
		if err != nil || rel == "." {
			return nil
		}
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			key += "/"
			switch {
			case len(key) <= len(opts.Prefix):
				if !strings.HasPrefix(opts.Prefix, key) {
					return fs.SkipDir
				}
				return nil
			case !strings.HasPrefix(key, opts.Prefix):
				return fs.SkipDir
			case opts.Delimiter != "":
				if err := fn(&blob.ListObject{Key: key, IsDir: true}); err != nil {
					return err
				}
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(key, opts.Prefix) || strings.HasSuffix(key, tempSuffix) || strings.HasSuffix(key, attrsSuffix) || strings.HasSuffix(key, exclSuffix) {
			return nil
		}
		if s.testHookListed != nil {
			s.testHookListed(path)
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // renamed or deleted since the directory was read
		}
		if err != nil {
			return err
		}
		return fn(&blob.ListObject{Key: key, ModTime: fi.ModTime(), Size: fi.Size()})
	})
	if err != nil && !errors.Is(err, ctx.Err()) {
		return &fs.PathError{Op: "list", Path: root, Err: err}
	}
	return err
}
