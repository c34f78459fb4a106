// Package backend is the registry of the cloud backends a store can open:
// s3://, gs://, azblob:// and whatever else registers. It holds no driver
// itself, so the library packages (snapshot/store, restore, daemon) link no
// cloud SDK; the package internal/storedrivers registers the backends in
// its init, as litestream's replica clients register themselves, and only
// the commands import it.
//
// A URL whose scheme no backend registered is opened with blob.OpenBucket
// as it is (the gocloud driver, if one is linked, reads it), and its errors
// are told with the generic help. file:// and mem:// need no backend: the
// store opens them itself.
package backend

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/url"
	"strings"
	"sync"

	"gocloud.dev/blob"
)

// Backend is one cloud backend: how to open its bucket and how to tell
// its errors.
type Backend struct {
	// Scheme is the URL scheme, lower case: "s3".
	Scheme string
	// Open opens the bucket of u, after checking the credentials it would
	// use: a missing or broken credential is one error wrapping
	// snapshot.ErrNoCredentials that names what to set. Nil opens u with
	// blob.OpenBucket.
	Open func(ctx context.Context, u *url.URL) (*blob.Bucket, error)
	// Answer returns what the backend's server answered in err: its HTTP
	// status, error code and message (each one line), and whether err
	// came from this backend's SDK at all. Nil answers nothing.
	Answer func(err error) (status int, code, msg string, ok bool)
	// BucketMissing reports whether err says the bucket does not exist
	// where Answer's code and message do not tell it. Nil: never.
	BucketMissing func(err error) bool
	// Help is what to check when a call to the backend fails.
	Help Help
}

// Help is what to check, per backend, in the store's error messages.
type Help struct {
	// Bucket is what the backend calls a bucket: "bucket", "container".
	Bucket string
	// Creds, Missing and Reach are what to check when the credentials
	// are refused, when the bucket does not exist and when the server
	// cannot be reached.
	Creds, Missing, Reach string
}

// Generic is the help for a scheme no backend registered.
var Generic = Help{Bucket: "bucket", Creds: "check the store's credentials", Missing: "check --store / OFFSETKEEPER_STORE", Reach: "check --store and the network"}

var (
	mu       sync.RWMutex
	backends = map[string]Backend{}
	order    []string
)

// Register makes b the backend of its scheme; a second registration of a
// scheme replaces the first. Call it from an init function.
func Register(b Backend) {
	mu.Lock()
	defer mu.Unlock()
	b.Scheme = strings.ToLower(b.Scheme)
	if _, ok := backends[b.Scheme]; !ok {
		order = append(order, b.Scheme)
	}
	backends[b.Scheme] = b
}

// Lookup returns the backend registered for scheme (any case).
func Lookup(scheme string) (Backend, bool) {
	mu.RLock()
	defer mu.RUnlock()
	b, ok := backends[strings.ToLower(scheme)]
	return b, ok
}

// Answer returns what a cloud server answered in err, asking each
// registered backend in the order they registered; zero values if none
// knows err.
func Answer(err error) (status int, code, msg string) {
	mu.RLock()
	defer mu.RUnlock()
	for _, s := range order {
		if f := backends[s].Answer; f != nil {
			if status, code, msg, ok := f(err); ok {
				return status, code, msg
			}
		}
	}
	return 0, "", ""
}

// BucketMissing reports whether a registered backend says err is a bucket
// that does not exist.
func BucketMissing(err error) bool {
	mu.RLock()
	defer mu.RUnlock()
	for _, s := range order {
		if f := backends[s].BucketMissing; f != nil && f(err) {
			return true
		}
	}
	return false
}

// RootCause returns the part of err a person can act on, cut to one short
// line: the file or network operation that failed ("open /path: no such
// file or directory", "dial tcp 169.254.169.254:80: connect: connection
// refused") if there is one, else the innermost error of err's chain.
func RootCause(err error) string {
	var pathErr *fs.PathError
	var opErr *net.OpError
	switch {
	case errors.As(err, &pathErr):
		err = pathErr
	case errors.As(err, &opErr):
		err = opErr
	default:
		for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
			err = next
		}
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if len(msg) > 320 {
		msg = msg[:317] + "..."
	}
	return msg
}

// OneLine returns the first line of s, cut to 200 bytes.
func OneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
