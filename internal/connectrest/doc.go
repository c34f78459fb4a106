// Package connectrest is a client of the Kafka Connect REST API, for the
// parts a backup and restore of offsets needs: server info, connector
// status, stop, pause and resume, and reading and altering offsets
// (KIP-875).
//
// The two types to know are [Client], which talks to one Connect cluster
// through one or more of its workers, and [Error], the error of a request
// Connect answered with an error status (carrying its error_code and
// message). It reads nothing from Kafka: the config topic's view of the
// same connectors (snapshot.ReadConfigs) and waiting until both views agree
// (restore) live above it.
//
// Behaviour worth knowing:
//   - A connection error (refused, reset, TLS failure, the per-request
//     timeout) moves on to the next worker URL; the worker that answered
//     last is tried first next time. Connect's own 4xx and 5xx answers are
//     not retried on another worker: any worker forwards to the leader.
//   - 409 (a rebalance is pending, or the leader is unknown) is retried
//     with exponential backoff, up to Config.Retries times, then returned
//     as an *Error that matches ErrConflict.
//   - 404 is an *Error that matches ErrNotFound.
//   - 500 "Request timed out" is Connect giving up after its own 90 s; the
//     error says so, and that the operation may still complete.
//   - Passwords and tokens never appear in errors or logs.
//
// A Client is safe for concurrent use.
package connectrest
