package main

// This file is the standby's settings (daemon and failover, see
// docs/standby.md): the standby cluster's brokers and security, its
// worker topics, its Connect REST API and how sink offsets are translated
// into it. They are settings: each has its environment twin
// (--standby-brokers is OFFSETKEEPER_STANDBY_BROKERS). The standby's
// security settings are its own: none is taken from the primary's.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// standbyFlags are the standby's settings.
type standbyFlags struct {
	brokers string
	// security, as the primary's (globals), for the standby
	saslMechanism, saslUsername, saslPassword, saslPasswordFile string
	tls                                                         bool
	tlsCA, tlsCert, tlsKey, tlsServerName                       string
	tlsInsecure                                                 bool
	oauthTokenFile                                              string

	offsetsTopics listFlag
	configTopic   string
	groupPrefix   string

	connectURLs                  listFlag
	connectUser, connectPassword string
	connectToken, connectTLSCA   string
	translate, alias, aliasCLI   string
	margin                       time.Duration
	// mapTopics and topicPrefix name the standby's copies of the sink
	// topics (standby_maptopic.go); mapCLI and prefixCLI are their
	// command-line spellings, restore's --map-topic and --topic-prefix.
	mapTopics, mapCLI      listFlag
	topicPrefix, prefixCLI string
	interval               time.Duration
	createTopics           bool
	replicationFactor      int
}

func (f *standbyFlags) register(fs *flag.FlagSet, daemonFlags bool) {
	fs.StringVar(&f.brokers, "standby-brokers", "", "the standby Kafka cluster's bootstrap brokers, comma-separated: the daemon keeps its Connect offsets (and, with --standby-connect-url, configs) in step with this cluster's; see docs/standby.md")
	fs.StringVar(&f.saslMechanism, "standby-sasl-mechanism", "", "the standby's SASL mechanism (as --sasl-mechanism; nothing is taken from the primary's settings)")
	fs.StringVar(&f.saslUsername, "standby-sasl-username", "", "the standby's SASL username")
	fs.StringVar(&f.saslPassword, "standby-sasl-password", "", "the standby's SASL password (prefer OFFSETKEEPER_STANDBY_SASL_PASSWORD or --standby-sasl-password-file: flags show in ps)")
	fs.StringVar(&f.saslPasswordFile, "standby-sasl-password-file", "", "file holding the standby's SASL password")
	fs.BoolVar(&f.tls, "standby-tls", false, "connect to the standby with TLS")
	fs.StringVar(&f.tlsCA, "standby-tls-ca", "", "PEM file of the CA certificates of the standby's brokers (implies --standby-tls)")
	fs.StringVar(&f.tlsCert, "standby-tls-cert", "", "PEM client certificate for mTLS to the standby (implies --standby-tls)")
	fs.StringVar(&f.tlsKey, "standby-tls-key", "", "PEM client private key for mTLS to the standby")
	fs.StringVar(&f.tlsServerName, "standby-tls-server-name", "", "server name to verify the standby brokers' certificates against")
	fs.BoolVar(&f.tlsInsecure, "standby-tls-insecure-skip-verify", false, "do not verify the standby brokers' certificates (testing only)")
	fs.StringVar(&f.oauthTokenFile, "standby-sasl-oauth-token-file", "", "file holding the standby's OAUTHBEARER token")
	fs.Var(&f.offsetsTopics, "standby-offsets-topic", "the standby workers' offsets topic; repeatable (default --offsets-topic's)")
	fs.StringVar(&f.configTopic, "standby-config-topic", "", "the standby workers' config topic (default --config-topic's)")
	fs.StringVar(&f.groupPrefix, "standby-group-prefix", "", "sink connector group prefix on the standby (default --group-prefix's)")
	fs.Var(&f.connectURLs, "standby-connect-url", "the standby's Kafka Connect REST `URL`; repeatable. With it connectors are created there STOPPED and their configs kept in step, and failover resumes them; without it, failover prints the resume commands")
	fs.StringVar(&f.connectUser, "standby-connect-user", "", "user name for HTTP basic auth to the standby's Connect REST API")
	fs.StringVar(&f.connectPassword, "standby-connect-password", "", "password for --standby-connect-user (prefer OFFSETKEEPER_STANDBY_CONNECT_PASSWORD)")
	fs.StringVar(&f.connectToken, "standby-connect-token", "", "bearer token for the standby's Connect REST API (prefer OFFSETKEEPER_STANDBY_CONNECT_TOKEN)")
	fs.StringVar(&f.connectTLSCA, "standby-connect-tls-ca", "", "PEM file of the CA certificates of the standby's Connect workers")
	fs.StringVar(&f.translate, "standby-translate", standby.TranslateNone, "how sink offsets move to the standby: none (the same topics, offsets as they are), mm2 (MirrorMaker 2's checkpoints, then timestamps; needs the MM2 alias of the primary) or timestamp")
	fs.StringVar(&f.alias, "standby-mm2-source-alias", "", "with --standby-translate mm2: MirrorMaker 2's alias of the primary cluster (its copies are ALIAS.<topic> on the standby); also --mm2-source-alias")
	fs.DurationVar(&f.margin, "standby-translate-margin", 0, "with --standby-translate timestamp or mm2: look this much before the last consumed record's timestamp")
	f.registerTopicNames(fs, daemonFlags)
	if daemonFlags {
		// restore's per-run flag, as the issue spells it (no twin: use
		// OFFSETKEEPER_STANDBY_MM2_SOURCE_ALIAS).
		fs.StringVar(&f.aliasCLI, "mm2-source-alias", "", "with --standby-translate mm2: the same as --standby-mm2-source-alias")
		fs.DurationVar(&f.interval, "standby-interval", 0, "how often the daemon brings the standby in step (default 5s)")
		fs.BoolVar(&f.createTopics, "standby-create-topics", false, "create the standby's Connect internal topics (offsets, config, status) that are missing, cleanup.policy=compact, with the primary's partition counts (status: Connect's default 5); without it they are named and nothing is written")
		fs.IntVar(&f.replicationFactor, "standby-replication-factor", 0, "with --standby-create-topics: the replication factor of the topics created (default the broker's default.replication.factor)")
	}
}

// given reports whether a standby is configured.
func (f *standbyFlags) given() bool { return f.brokers != "" }

// check validates the flags: usage errors.
func (f *standbyFlags) check() error {
	if f.aliasCLI != "" {
		if f.alias != "" && f.alias != f.aliasCLI {
			return usagef("--mm2-source-alias %q and --standby-mm2-source-alias %q differ: give one", f.aliasCLI, f.alias)
		}
		f.alias = f.aliasCLI
	}
	if err := f.checkTopicNames(); err != nil {
		return err
	}
	if !f.given() {
		if len(f.connectURLs) > 0 || f.alias != "" || f.translate != standby.TranslateNone || f.createTopics || f.renamesTopics() {
			return usagef("the --standby-* settings need --standby-brokers")
		}
		return nil
	}
	switch {
	case f.translate != standby.TranslateNone && f.translate != standby.TranslateMM2 && f.translate != standby.TranslateTimestamp:
		return usagef("--standby-translate %q: want none, mm2 or timestamp", f.translate)
	case f.translate == standby.TranslateMM2 && f.alias == "":
		return usagef("--standby-translate mm2 needs --mm2-source-alias ALIAS (MirrorMaker 2's name of the primary cluster)")
	case f.translate != standby.TranslateMM2 && f.alias != "":
		return usagef("--mm2-source-alias goes with --standby-translate mm2")
	case f.margin < 0 || f.interval < 0:
		return usagef("--standby-translate-margin and --standby-interval: want a duration of 0 or more")
	case f.replicationFactor < 0 || f.replicationFactor > 0 && !f.createTopics:
		return usagef("--standby-replication-factor goes with --standby-create-topics, and wants 1 or more")
	}
	return nil
}

// kafka is the standby's Kafka client settings: the brokers and security
// of the --standby-* flags, the client id and timeout of the primary's.
func (f *standbyFlags) kafka(g *globals) kafkaconf.Config {
	cfg := kafkaconf.Config{Brokers: splitList(f.brokers), ClientID: g.clientID + "-standby", RetryTimeout: g.timeout}
	cfg.SASL.Mechanism, cfg.SASL.Username = f.saslMechanism, f.saslUsername
	cfg.SASL.Password, cfg.SASL.PasswordFile = kafkaconf.Secret(f.saslPassword), f.saslPasswordFile
	cfg.SASL.TokenFile = f.oauthTokenFile
	cfg.TLS.Enabled = f.tls || f.tlsCA != "" || f.tlsCert != ""
	cfg.TLS.CAFile, cfg.TLS.CertFile, cfg.TLS.KeyFile = f.tlsCA, f.tlsCert, f.tlsKey
	cfg.TLS.ServerName, cfg.TLS.InsecureSkipVerify = f.tlsServerName, f.tlsInsecure
	return cfg
}

// connect is the standby's Connect REST client, nil without a URL.
func (f *standbyFlags) connect() (*connectrest.Client, error) {
	if len(f.connectURLs) == 0 {
		if f.connectUser != "" || f.connectToken != "" || f.connectTLSCA != "" {
			return nil, usagef("--standby-connect-user, --standby-connect-token and --standby-connect-tls-ca need --standby-connect-url")
		}
		return nil, nil
	}
	var urls []string
	for _, u := range f.connectURLs {
		urls = append(urls, splitList(u)...)
	}
	rc, err := connectrest.New(connectrest.Config{URLs: urls, Username: f.connectUser, Password: kafkaconf.Secret(f.connectPassword),
		Token: kafkaconf.Secret(f.connectToken), CAFile: f.connectTLSCA})
	if errors.Is(err, connectrest.ErrConfig) {
		return nil, usageError{"--standby-connect-url: " + err.Error()}
	}
	return rc, err
}

// open connects to the standby and makes its Syncer; the caller closes
// the client. primary are the primary's restore options, whose topic
// names the standby takes unless its own are given.
func (f *standbyFlags) open(ctx context.Context, g *globals, primary restore.Options, log *slog.Logger, set func(*standby.Config)) (*kgo.Client, *standby.Syncer, error) {
	rc, err := f.connect()
	if err != nil {
		return nil, nil, err
	}
	cfg := f.kafka(g)
	cl, err := cfg.Connect(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to the standby cluster (--standby-brokers %s): %w", f.brokers, kafkaconf.DescribeError(err))
	}
	opts := restore.Options{}
	// The caller's scope (failover --connector) is the standby's too.
	opts.Connectors = slices.Clone(primary.Connectors)
	opts.OffsetsTopics = primary.OffsetsTopics
	if len(f.offsetsTopics) > 0 {
		opts.OffsetsTopics = []string(f.offsetsTopics)
	}
	opts.ConfigTopic, opts.GroupPrefix = primary.ConfigTopic, primary.GroupPrefix
	if f.configTopic != "" {
		opts.ConfigTopic = f.configTopic
	}
	if f.groupPrefix != "" {
		opts.GroupPrefix = f.groupPrefix
	}
	opts.ProgramVersion, opts.StatusTopic = primary.ProgramVersion, primary.StatusTopic
	if opts.ConfigTopic == "" {
		opts.ConfigTopic = snapshot.DefaultConfigTopic
	}
	scfg := standby.Config{Client: cl, Options: opts, Translate: f.translate, MM2SourceAlias: f.alias,
		Margin: f.margin, Connect: rc, Log: log, CreateTopics: f.createTopics, ReplicationFactor: f.replicationFactor,
		MapTopics: f.topicMap(), TopicPrefix: f.topicPrefix}
	if set != nil {
		set(&scfg)
	}
	s, err := standby.New(scfg)
	if err != nil {
		cl.Close()
		return nil, nil, usageError{err.Error()}
	}
	return cl, s, nil
}

// attachStandby gives d the standby of the --standby-* settings, if any;
// the returned func closes its client.
func (c *daemonCmd) attachStandby(ctx context.Context, d *daemon.Daemon, opts restore.Options) (func(), error) {
	if err := c.standby.check(); err != nil {
		return nil, err
	}
	if !c.standby.given() {
		return func() {}, nil
	}
	// The record of the configs written to the standby is kept in the
	// store: a restarted daemon still tells its own from an operator's.
	cl, s, err := c.standby.open(ctx, c.g, opts, c.log.With("component", "standby"), func(cfg *standby.Config) { cfg.Store = d.Store })
	if err != nil {
		return nil, err
	}
	d.Standby = &daemon.Standby{Syncer: s, Interval: c.standby.interval, Name: c.standby.brokers}
	return cl.Close, nil
}
