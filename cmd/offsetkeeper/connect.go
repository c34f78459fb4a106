package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// connectFlags reach the Kafka Connect REST API. show, diff and restore
// register them; with --connect-url they report each connector's REST
// state next to the config topic's, and restore can stop and resume
// connectors and alter offsets through Connect.
type connectFlags struct {
	urls     listFlag
	user     string
	password string
	token    string
	tlsCA    string
	tlsCert  string
	tlsKey   string
	timeout  time.Duration
	// Confluent Cloud (fully-managed connectors): see docs/confluent-cloud.md.
	platform    string
	environment string
	cluster     string
}

func (f *connectFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.urls, "connect-url", "a Kafka Connect worker's REST `URL` (http://connect:8083); repeatable, the next is tried when one does not answer")
	fs.StringVar(&f.user, "connect-user", "", "user name for HTTP basic auth to the Connect REST API")
	fs.StringVar(&f.password, "connect-password", "", "password for --connect-user (prefer OFFSETKEEPER_CONNECT_PASSWORD: flags show in ps)")
	fs.StringVar(&f.token, "connect-token", "", "bearer token for the Connect REST API (prefer OFFSETKEEPER_CONNECT_TOKEN)")
	fs.StringVar(&f.tlsCA, "connect-tls-ca", "", "PEM file of the CA certificates that sign the Connect workers' certificates (default the system roots)")
	fs.StringVar(&f.tlsCert, "connect-tls-cert", "", "PEM client certificate for mTLS to the Connect REST API")
	fs.StringVar(&f.tlsKey, "connect-tls-key", "", "PEM private key of --connect-tls-cert")
	fs.DurationVar(&f.timeout, "connect-timeout", connectrest.DefaultTimeout, "how long one Connect REST request may take before the next worker is tried (offset alterations get at least 95s); with Confluent Cloud also the whole wait for an offsets request to be applied")
	fs.StringVar(&f.platform, "platform", "", "what --connect-url is: empty for a Kafka Connect cluster, or "+connectrest.PlatformConfluentCloud+" for fully-managed connectors through the Confluent Cloud API (--connect-url default "+connectrest.DefaultCloudURL+"; --connect-user and --connect-password carry a Cloud API key and secret)")
	fs.StringVar(&f.environment, "environment", "", "the Confluent Cloud environment `ID` (env-...) of --platform "+connectrest.PlatformConfluentCloud)
	fs.StringVar(&f.cluster, "cluster", "", "the Confluent Cloud Kafka cluster `ID` (lkc-...) of --platform "+connectrest.PlatformConfluentCloud)
}

// given reports whether --connect-url (or --platform confluent-cloud,
// whose URL has a default) was given.
func (f *connectFlags) given() bool { return len(f.urls) > 0 || f.platform != "" }

// client returns a Connect REST client, or nil without --connect-url.
func (f *connectFlags) client() (*connectrest.Client, error) {
	if !f.given() {
		if f.user != "" || f.token != "" || f.tlsCA != "" || f.tlsCert != "" {
			return nil, usagef("--connect-user, --connect-token and --connect-tls-* need --connect-url")
		}
		if f.environment != "" || f.cluster != "" {
			return nil, usagef("--environment and --cluster need --platform %s", connectrest.PlatformConfluentCloud)
		}
		return nil, nil
	}
	var urls []string
	for _, u := range f.urls {
		urls = append(urls, splitList(u)...)
	}
	rc, err := connectrest.New(connectrest.Config{
		URLs:     urls,
		Username: f.user,
		Password: kafkaconf.Secret(f.password),
		Token:    kafkaconf.Secret(f.token),
		CAFile:   f.tlsCA,
		CertFile: f.tlsCert,
		KeyFile:  f.tlsKey,
		Timeout:  f.timeout,

		Platform:    f.platform,
		Environment: f.environment,
		Cluster:     f.cluster,
	})
	if errors.Is(err, connectrest.ErrConfig) {
		return nil, usageError{err.Error()}
	}
	return rc, err
}

// connectorFileName is the file name show --output-dir gives a
// connector's offsets: the name with every byte other than A-Z, a-z, 0-9,
// '-', '_' and '.' written as %XX (upper-case hex of its UTF-8 bytes, as
// in a URL), a leading '.' too, then ".json". The name comes back with
// url.PathUnescape.
func connectorFileName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		safe := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !safe || (i == 0 && c == '.') {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String() + ".json"
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, renamed into place once whole.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.part")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// printStates prints, for diff, one line per connector named (or that has
// changes) with its REST state, and with live its config topic state from
// b: "state  <name>  REST <state>  config topic <state>" (the REST state
// alone when b was read through REST too).
func printStates(ctx context.Context, w io.Writer, rc *connectrest.Client, changes []restore.Change, named []string, s diffSides) error {
	b, live := s.b, s.live
	states, err := rc.States(ctx)
	if err != nil {
		return err
	}
	names := slices.Clone(named)
	for _, ch := range changes {
		if !slices.Contains(names, ch.Connector) {
			names = append(names, ch.Connector)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		line := fmt.Sprintf("state  %s  REST %s", name, connectrest.StateOf(states, name))
		if live && !b.ViaREST() {
			// A live state read through REST has no config topic: its
			// state is the REST state just printed.
			conf := "no config"
			if c, ok := b.Connector(name); ok && c.HasConfig {
				conf = restore.ConnectorPlan{Live: c}.State()
			}
			line += "  config topic " + conf
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// connectFlag reports whether a flag is one of connectFlags'.
func connectFlag(name string) bool {
	switch name {
	case "platform", "environment", "cluster":
		return true
	}
	return strings.HasPrefix(name, "connect-")
}
