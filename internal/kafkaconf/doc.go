// Package kafkaconf turns flags, environment and a Kafka Connect worker
// .properties file into franz-go client options. It is shared by the commands
// that talk to Kafka, so that every one of them connects, authenticates and
// explains failures the same way.
//
// The two types to know are Config, how to reach and authenticate to a
// cluster (brokers, TLS, SASL, timeouts), and Worker, the Connect internal
// topics and group. The flow is:
//
//	c, w, err := kafkaconf.ReadWorkerProperties("connect-distributed.properties")
//	c = c.Merge(flags)        // flags win over the worker file
//	cl, err := c.Connect(ctx) // or kgo.NewClient(opts...) with opts from c.Opts()
//	...
//	return kafkaconf.DescribeError(err) // "check --sasl-password", an *ACLError, ...
//
// Guarantees:
//   - ParseProperties reads exactly what java.util.Properties.load reads.
//   - Secrets (type Secret) never print: Config's String, GoString and
//     LogValue redact them, and no error of this package contains one.
//   - An unreachable cluster fails within a bounded time: DialTimeout per
//     connection attempt, RetryTimeout per request (10s and 30s by default).
//   - Only PEM is read; a JKS or PKCS12 store is an error that says how to
//     convert it.
//
// A Config is a value; its methods are safe for concurrent use.
package kafkaconf
