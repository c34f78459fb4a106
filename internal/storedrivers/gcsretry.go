package storedrivers

import (
	"errors"
	"net"
	"syscall"

	"cloud.google.com/go/storage"
	"gocloud.dev/blob"
)

// refusedAttempts is how many attempts a Cloud Storage call makes while
// the endpoint refuses the connection: the client's backoff (1 s, then
// doubling, jittered) spends a few seconds on them, enough for an
// endpoint that is restarting.
const refusedAttempts = 3

// failFastGCS makes the Cloud Storage client behind b give up a call once
// its endpoint has refused the connection refusedAttempts times, instead
// of retrying it until the store timeout (a minute by default) ends it:
// nothing listens there, and waiting does not change that. Every other
// error is retried as the client retries it, so a slow endpoint still has
// the store timeout. A bucket of another driver is left as it is.
func failFastGCS(b *blob.Bucket) {
	var client *storage.Client
	if !b.As(&client) || client == nil {
		return
	}
	client.SetRetry(storage.WithErrorFuncWithContext(func(err error, rc *storage.RetryContext) bool {
		if refused(err) {
			return rc != nil && rc.Attempt < refusedAttempts
		}
		return storage.ShouldRetry(err)
	}))
}

// refused reports whether err is a connection the endpoint refused, or a
// host name that does not resolve: no one to wait for.
func refused(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) && dns.IsNotFound
}
