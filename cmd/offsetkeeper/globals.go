package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// defaultStore is where snapshots go when --store is not given.
const defaultStore = "file://./offsetkeeper-snapshots"

// globals are the flags every command shares.
type globals struct {
	fs *flag.FlagSet
	// command is the name of the command running, for its defaults.
	command string
	// stderr, when set, gets the "still trying" line of an unreachable
	// cluster (stillTrying).
	stderr io.Writer

	logLevel  string
	logFormat string
	store     string
	// storeTimeout bounds each store call without progress.
	storeTimeout time.Duration
	// encryptKey is a secret when it is a base64key:// URL: never print it.
	encryptKey string

	brokers       string
	workerConfig  string
	offsetsTopics listFlag
	configTopic   string
	statusTopic   string
	// layout and its patterns find several worker groups by topic name
	// (MSK Connect's per-connector topics).
	layout                                       string
	offsetsPattern, configPattern, statusPattern string
	groupPrefix                                  string
	clientID                                     string
	timeout                                      time.Duration

	// security, see docs/security.md
	saslMechanism, saslUsername, saslPassword, saslPasswordFile string
	tls                                                         bool
	tlsCA, tlsCert, tlsKey, tlsServerName                       string
	tlsInsecure                                                 bool
	tlsSkipHostname                                             bool
	oauthTokenFile                                              string

	// connect reaches the Kafka Connect REST API (--connect-url ...); the
	// commands that use it register its flags (see connect.go).
	connect connectFlags
	// connectUnused is set when the command does not register the
	// connect flags itself: they are accepted and ignored.
	connectUnused bool
	// cmdLine names the flags given on the command line (not from the
	// environment): the restore commands printed repeat those settings.
	cmdLine map[string]bool
}

// register adds the shared flags to fs: every command accepts them, and
// those that do not use one ignore it.
func (g *globals) register(fs *flag.FlagSet) {
	g.fs = fs
	fs.StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn or error (default warn: a command prints its result on stdout, and only warnings and errors on stderr; info for daemon, serve and demo)")
	fs.StringVar(&g.logFormat, "log-format", "text", "log format: text or json (logs go to stderr)")
	fs.StringVar(&g.store, "store", defaultStore, "snapshot store: a gocloud.dev/blob URL (file://, s3://, gs://, azblob://, mem://) or a local directory")
	fs.DurationVar(&g.storeTimeout, "store-timeout", store.DefaultStoreTimeout, "give up a store call (a read, a write, a listing page) that makes no progress for this long")
	fs.StringVar(&g.encryptKey, "encrypt-key", "", "encrypt new snapshots and decrypt stored ones with this key: base64key://<32-byte key in base64>, or a KMS key URL (awskms://, gcpkms://, azurekeyvault://); prefer OFFSETKEEPER_ENCRYPT_KEY: flags show in ps")
	fs.StringVar(&g.brokers, "brokers", "localhost:9092", "Kafka bootstrap brokers, comma-separated")
	fs.StringVar(&g.workerConfig, "worker-config", "", "a Kafka Connect worker .properties file to read bootstrap.servers, topics, group.id and security settings from; explicit flags win")
	fs.Var(&g.offsetsTopics, "offsets-topic", "worker offsets topic (offset.storage.topic); repeatable (default "+snapshot.DefaultOffsetsTopic+")")
	fs.StringVar(&g.configTopic, "config-topic", snapshot.DefaultConfigTopic, "worker config topic (config.storage.topic)")
	fs.StringVar(&g.statusTopic, "status-topic", capture.DefaultStatusTopic, "worker status topic (status.storage.topic), read for the page's worker-reported states")
	fs.StringVar(&g.layout, "layout", "", "topic layout with a worker group per connector: msk-connect (Amazon MSK Connect's __msk_connect_{offsets,configs,status}_<name>_<id> topics); sets the three --*-topic-pattern defaults")
	fs.StringVar(&g.offsetsPattern, "offsets-topic-pattern", "", "regular expression: every topic it matches is an offsets topic of a worker group, named by the first capture group (replaces --offsets-topic)")
	fs.StringVar(&g.configPattern, "config-topic-pattern", "", "regular expression: every topic it matches is a config topic of a worker group, named by the first capture group (replaces --config-topic)")
	fs.StringVar(&g.statusPattern, "status-topic-pattern", "", "regular expression: every topic it matches is a status topic of a worker group, named by the first capture group (replaces --status-topic)")
	fs.StringVar(&g.groupPrefix, "group-prefix", snapshot.DefaultGroupPrefix, "consumer groups with this prefix are sink connector groups")
	fs.StringVar(&g.clientID, "client-id", "offsetkeeper", "Kafka client id")
	fs.DurationVar(&g.timeout, "kafka-timeout", 30*time.Second, "how long to keep trying to reach Kafka before giving up")
	fs.StringVar(&g.saslMechanism, "sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM")
	fs.StringVar(&g.saslUsername, "sasl-username", "", "SASL username")
	fs.StringVar(&g.saslPassword, "sasl-password", "", "SASL password (prefer OFFSETKEEPER_SASL_PASSWORD or --sasl-password-file: flags show in ps)")
	fs.StringVar(&g.saslPasswordFile, "sasl-password-file", "", "file holding the SASL password")
	fs.BoolVar(&g.tls, "tls", false, "connect to Kafka with TLS")
	fs.StringVar(&g.tlsCA, "tls-ca", "", "PEM file of the CA certificates to trust (implies --tls)")
	fs.StringVar(&g.tlsCert, "tls-cert", "", "PEM client certificate for mTLS (implies --tls)")
	fs.StringVar(&g.tlsKey, "tls-key", "", "PEM client private key for mTLS")
	fs.StringVar(&g.tlsServerName, "tls-server-name", "", "server name to verify the brokers' certificates against")
	fs.BoolVar(&g.tlsInsecure, "tls-insecure-skip-verify", false, "do not verify the brokers' certificates (testing only)")
	fs.BoolVar(&g.tlsSkipHostname, "tls-skip-hostname-verification", false, "verify the certificate chain but not the host name (ssl.endpoint.identification.algorithm= in Kafka terms)")
	fs.StringVar(&g.oauthTokenFile, "sasl-oauth-token-file", "", "file holding the OAUTHBEARER token; read again at every authentication")
}

// infoLogs are the commands that log at info by default: those that keep
// running, whose log is their account of what they do. Other commands
// print their result on stdout and log only warnings and errors.
var infoLogs = map[string]bool{"daemon": true, "serve": true, "demo": true}

// explicit reports whether a flag was given on the command line or in the
// environment.
func (g *globals) explicit(name string) bool {
	found := false
	g.fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			found = true
		}
	})
	return found
}

// logger is the logger of the --log-level and --log-format flags; without
// --log-level, the command's default (infoLogs).
func (g *globals) logger(w io.Writer) (*slog.Logger, error) {
	name := g.logLevel
	if name == "" {
		name = "warn"
		if infoLogs[g.command] {
			name = "info"
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(name)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch g.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", g.logFormat)
}

// kafkaSettings resolves the Kafka client config and the Connect topic
// names from the flags and the worker file; explicit flags win.
func (g *globals) kafkaSettings() (kafkaconf.Config, capture.Options, error) {
	var (
		cfg    kafkaconf.Config
		worker kafkaconf.Worker
	)
	if g.workerConfig != "" {
		f, err := os.Open(g.workerConfig)
		if err != nil {
			return cfg, capture.Options{}, fmt.Errorf("read worker config: %w", err)
		}
		props, err := kafkaconf.ParseProperties(f)
		f.Close()
		if err != nil {
			return cfg, capture.Options{}, fmt.Errorf("read worker config %s: %w", g.workerConfig, err)
		}
		cfg, worker, err = kafkaconf.FromWorkerProperties(props)
		if err != nil {
			return cfg, capture.Options{}, fmt.Errorf("read worker config %s: %w", g.workerConfig, err)
		}
	}
	if g.explicit("brokers") || len(cfg.Brokers) == 0 {
		cfg.Brokers = splitList(g.brokers)
	}
	cfg.ClientID = g.clientID
	cfg.RetryTimeout = g.timeout
	g.applySecurity(&cfg)

	opts := capture.Options{
		OffsetsTopics:  []string(g.offsetsTopics),
		ConfigTopic:    g.configTopic,
		StatusTopic:    g.statusTopic,
		GroupPrefix:    g.groupPrefix,
		ProgramVersion: programVersion(),
	}
	if len(opts.OffsetsTopics) == 0 && worker.OffsetsTopic != "" {
		opts.OffsetsTopics = []string{worker.OffsetsTopic}
	}
	if !g.explicit("config-topic") && worker.ConfigTopic != "" {
		opts.ConfigTopic = worker.ConfigTopic
	}
	if !g.explicit("status-topic") && worker.StatusTopic != "" {
		opts.StatusTopic = worker.StatusTopic
	}
	l, err := g.topicLayout()
	if err != nil {
		return cfg, opts, err
	}
	opts.Layout = l
	return cfg, opts, nil
}

// applySecurity sets the SASL and TLS flags given on cfg, over what the
// worker file said.
func (g *globals) applySecurity(cfg *kafkaconf.Config) {
	if g.explicit("sasl-mechanism") {
		cfg.SASL.Mechanism = g.saslMechanism
	}
	if g.explicit("sasl-username") {
		cfg.SASL.Username = g.saslUsername
	}
	if g.explicit("sasl-password") {
		cfg.SASL.Password = kafkaconf.Secret(g.saslPassword)
	}
	if g.explicit("sasl-password-file") {
		cfg.SASL.PasswordFile = g.saslPasswordFile
	}
	if g.tls || g.tlsCA != "" || g.tlsCert != "" {
		cfg.TLS.Enabled = true
	}
	if g.tlsCA != "" {
		cfg.TLS.CAFile = g.tlsCA
	}
	if g.tlsCert != "" {
		cfg.TLS.CertFile = g.tlsCert
	}
	if g.tlsKey != "" {
		cfg.TLS.KeyFile = g.tlsKey
	}
	if g.tlsServerName != "" {
		cfg.TLS.ServerName = g.tlsServerName
	}
	if g.tlsInsecure {
		cfg.TLS.InsecureSkipVerify = true
	}
	if g.tlsSkipHostname {
		cfg.TLS.SkipHostnameVerification = true
	}
	if g.oauthTokenFile != "" {
		cfg.SASL.TokenFile = g.oauthTokenFile
	}
}

// topicLayout is the layout of --layout and the --*-topic-pattern
// settings; nil without them.
func (g *globals) topicLayout() (*capture.Layout, error) {
	offsets, config, status := g.offsetsPattern, g.configPattern, g.statusPattern
	switch g.layout {
	case "":
		if offsets == "" && config == "" && status == "" {
			return nil, nil
		}
	case capture.LayoutMSKConnect:
		offsets = cmp.Or(offsets, capture.MSKOffsetsPattern)
		config = cmp.Or(config, capture.MSKConfigPattern)
		status = cmp.Or(status, capture.MSKStatusPattern)
	default:
		return nil, usagef("--layout %q: the layout known is %s", g.layout, capture.LayoutMSKConnect)
	}
	if len(g.offsetsTopics) > 0 || g.explicit("config-topic") || g.explicit("status-topic") {
		return nil, usagef("a topic layout (--layout or --*-topic-pattern) finds the worker topics by name: drop --offsets-topic, --config-topic and --status-topic")
	}
	l, err := capture.NewLayout(offsets, config, status)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return l, nil
}

// discover finds the worker groups of opts.Layout and names their topics
// in opts, for the commands that need them up front (restore and the
// journal name the offsets topics before they capture); a capture with a
// layout finds them again itself.
func discover(ctx context.Context, cl *kgo.Client, opts *capture.Options) error {
	if opts.Layout == nil {
		return nil
	}
	gs, err := opts.Layout.Discover(ctx, kadm.NewClient(cl))
	if err != nil {
		return err
	}
	opts.UseGroups(gs)
	return nil
}

// kafkaClient opens a Kafka client from the flags and checks that the
// cluster answers (and accepts the credentials) before any work starts, so
// a wrong address or password fails fast with a clear message. The caller
// closes the client.
func (g *globals) kafkaClient(ctx context.Context, extra ...kgo.Opt) (*kgo.Client, capture.Options, error) {
	cfg, opts, err := g.kafkaSettings()
	if err != nil {
		return nil, opts, err
	}
	cfg.StillTrying = g.stillTrying(cfg)
	cl, err := cfg.Connect(ctx, extra...)
	if err != nil {
		return nil, opts, kafkaconf.DescribeError(err)
	}
	if err := discover(ctx, cl, &opts); err != nil {
		cl.Close()
		return nil, opts, err
	}
	return cl, opts, nil
}

// stillTrying says on stderr, once, that the brokers refuse connections
// and how long the command goes on trying, so that an unreachable
// cluster is not silent until --kafka-timeout runs out. The daemon logs
// instead.
func (g *globals) stillTrying(cfg kafkaconf.Config) func(time.Duration, error) {
	if g.stderr == nil || g.command == "daemon" {
		return nil
	}
	return func(waited time.Duration, err error) {
		fmt.Fprintf(g.stderr, "offsetkeeper %s: the Kafka brokers refuse connections (%s); still trying, for up to %s (--kafka-timeout)\n",
			g.command, nameList(cfg.Brokers, 40), g.timeout)
	}
}

// openStore opens the snapshot store named by --store, which must exist:
// a local directory that does not is an error naming it, and is not
// created. Commands that take snapshots (snapshot, daemon, demo) use
// createStore instead. With --encrypt-key, the store encrypts what it
// writes and decrypts what it reads with that key.
func (g *globals) openStore(ctx context.Context) (*store.Store, error) {
	return g.keyStore(ctx, store.OpenExistingStore)
}

// createStore is openStore that creates a missing local directory.
func (g *globals) createStore(ctx context.Context) (*store.Store, error) {
	return g.keyStore(ctx, store.OpenStore)
}

func (g *globals) keyStore(ctx context.Context, open func(context.Context, string) (*store.Store, error)) (*store.Store, error) {
	if g.storeTimeout < 0 {
		return nil, usagef("--store-timeout must be positive")
	}
	st, err := open(ctx, g.store)
	if err == nil {
		st.SetTimeout(g.storeTimeout)
	}
	if err != nil || g.encryptKey == "" {
		return st, err
	}
	k, err := store.OpenKeeper(ctx, g.encryptKey)
	if err != nil {
		st.Close()
		return nil, err
	}
	st.SetKeeper(k)
	return st, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// sharedOnly are the shared flags that are not about Kafka.
var sharedOnly = map[string]bool{"log-level": true, "log-format": true, "store": true, "store-timeout": true, "encrypt-key": true}

// kafkaFlag reports whether name is one of the shared Kafka flags
// (connection and security), which a command that does not use Kafka
// accepts and ignores.
func kafkaFlag(name string) bool {
	return !sharedOnly[name] && sharedFlagSet().Lookup(name) != nil
}

// sharedFlagSet is a flag set of the shared flags alone, to look names up in.
var sharedFlagSet = sync.OnceValue(func() *flag.FlagSet {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	(&globals{}).register(fs)
	return fs
})

// routeLibraryLog sends what libraries print with the standard log package
// (the AWS transfer manager does, on a refused multipart upload) to l at
// debug level, not to stderr: the error the command reports says it.
func routeLibraryLog(l *slog.Logger) {
	log.SetFlags(0)
	log.SetOutput(libraryLog{l})
}

type libraryLog struct{ l *slog.Logger }

func (w libraryLog) Write(p []byte) (int, error) {
	w.l.Debug(strings.TrimSpace(string(p)), "component", "sdk")
	return len(p), nil
}
