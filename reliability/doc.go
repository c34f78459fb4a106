// Package reliability holds no code, only the cross-package fault suite of
// offsetkeeper: tests that prove the promises of docs/reliability.md under
// broker faults, store faults, SIGKILL, concurrent runs, bad input and a
// long soak. Every test runs against real parts: a 3-broker kfake cluster
// (franz-go's in-process Kafka) seeded by internal/connectdemo, real
// fileblob and memblob buckets (behind a small fault-injecting driver for
// store faults) and the in-process S3 server of internal/s3test (behind an
// HTTP proxy that drops and truncates). Process-level tests build the
// offsetkeeper binary once and drive it with os/exec, exactly as an
// operator would.
//
// The soak test runs for a few seconds by default; set OFFSETKEEPER_SOAK=1
// (or pass -soak) for the several-minute run, OFFSETKEEPER_SOAK_DURATION to
// choose its length.
package reliability
