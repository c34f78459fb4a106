package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
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
}

func (f *connectFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.urls, "connect-url", "a Kafka Connect worker's REST `URL` (http://connect:8083); repeatable, the next is tried when one does not answer")
	fs.StringVar(&f.user, "connect-user", "", "user name for HTTP basic auth to the Connect REST API")
	fs.StringVar(&f.password, "connect-password", "", "password for --connect-user (prefer OFFSETKEEPER_CONNECT_PASSWORD: flags show in ps)")
	fs.StringVar(&f.token, "connect-token", "", "bearer token for the Connect REST API (prefer OFFSETKEEPER_CONNECT_TOKEN)")
	fs.StringVar(&f.tlsCA, "connect-tls-ca", "", "PEM file of the CA certificates that sign the Connect workers' certificates (default the system roots)")
	fs.StringVar(&f.tlsCert, "connect-tls-cert", "", "PEM client certificate for mTLS to the Connect REST API")
	fs.StringVar(&f.tlsKey, "connect-tls-key", "", "PEM private key of --connect-tls-cert")
	fs.DurationVar(&f.timeout, "connect-timeout", connectrest.DefaultTimeout, "how long one Connect REST request may take before the next worker is tried (offset alterations get at least 95s)")
}

// given reports whether --connect-url was given.
func (f *connectFlags) given() bool { return len(f.urls) > 0 }

// client returns a Connect REST client, or nil without --connect-url.
func (f *connectFlags) client() (*connectrest.Client, error) {
	if !f.given() {
		if f.user != "" || f.token != "" || f.tlsCA != "" || f.tlsCert != "" {
			return nil, usagef("--connect-user, --connect-token and --connect-tls-* need --connect-url")
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
	})
	if errors.Is(err, connectrest.ErrConfig) {
		return nil, usageError{err.Error()}
	}
	return rc, err
}

// restStates reads every connector's REST status with one request.
func restStates(ctx context.Context, rc *connectrest.Client) (map[string]connectrest.Status, error) {
	all, err := rc.Connectors(ctx)
	if err != nil {
		return nil, fmt.Errorf("read connector states from the Connect REST API: %w", err)
	}
	out := make(map[string]connectrest.Status, len(all))
	for name, e := range all {
		if e.Status != nil {
			out[name] = *e.Status
		}
	}
	return out, nil
}

// restState describes a connector's REST status, or its absence.
func restState(states map[string]connectrest.Status, name string) string {
	if st, ok := states[name]; ok {
		return st.String()
	}
	return "unknown to Connect"
}

// sameCluster refuses when the Connect workers keep their topics in
// another Kafka cluster than the one the brokers given belong to: stopping
// or altering through them would act on another cluster's connectors.
// --force does not skip it.
func sameCluster(ctx context.Context, rc *connectrest.Client, clusterID string) error {
	info, err := rc.ServerInfo(ctx)
	if err != nil {
		return fmt.Errorf("read the Connect REST API: %w; nothing was written", err)
	}
	if info.KafkaClusterID != clusterID {
		return refused{fmt.Errorf("the Connect REST API at %s belongs to Kafka cluster %q, the brokers given are cluster %q: point --connect-url at the workers of this cluster; nothing was written, no connector was stopped", strings.Join(rc.URLs(), ", "), info.KafkaClusterID, clusterID)}
	}
	return nil
}

// restRefusals sets each connector's REST state on the plan and returns
// the refusals the REST view adds to the safety checks: workers of another
// Kafka cluster, a connector with a config whose REST status is not
// STOPPED with no tasks (or that Connect does not know), and a connector
// with no config that Connect reports anyway.
func restRefusals(ctx context.Context, rc *connectrest.Client, plan *restore.Plan) ([]restore.Refusal, error) {
	info, err := rc.ServerInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the Connect REST API: %w", err)
	}
	states, err := restStates(ctx, rc)
	if err != nil {
		return nil, err
	}
	var out []restore.Refusal
	add := func(connector, format string, args ...any) {
		out = append(out, restore.Refusal{Connector: connector, Check: restore.CheckConnectState, Reason: fmt.Sprintf(format, args...)})
	}
	if info.KafkaClusterID != plan.ClusterID {
		add("", "the Connect REST API at %s belongs to Kafka cluster %q, the brokers given are cluster %q: point --connect-url at the workers of this cluster", strings.Join(rc.URLs(), ", "), info.KafkaClusterID, plan.ClusterID)
	}
	for i := range plan.Connectors {
		cp := &plan.Connectors[i]
		st, known := states[cp.Name]
		cp.REST = restState(states, cp.Name)
		switch {
		case cp.Live.HasConfig && !known:
			add(cp.Name, "has a config in the config topic, but the Connect REST API does not know it: check that --connect-url and --config-topic name the same Connect cluster")
		case cp.Live.HasConfig && !st.Stopped():
			name := url.PathEscape(cp.Name)
			add(cp.Name, "its REST status is %s: stop it with PUT /connectors/%s/stop and wait until GET /connectors/%s/status shows STOPPED with no tasks (or restore with --stop-connectors)", st, name, name)
		case !cp.Live.HasConfig && known && !st.Stopped():
			add(cp.Name, "has no config in the config topic, but the Connect REST API reports it %s: check --config-topic", st)
		}
	}
	return out, nil
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

// stopper stops the connectors of a restore's scope before it writes, and
// resumes them after, or says what state it left them in.
type stopper struct {
	rc          *connectrest.Client
	cl          *kgo.Client
	configTopic string
	out         io.Writer
	log         *slog.Logger
	timeout     time.Duration
	resume      bool

	// stopped are the connectors this restore stopped, with what they were.
	stopped []stoppedConnector
	// waited are every connector of the scope with a config; groups the
	// sink groups that must be empty.
	waited, groups []string
}

type stoppedConnector struct {
	name string
	// target is the config topic's target state before: STARTED or PAUSED
	// (a STOPPED one with tasks is stopped again and stays so).
	target string
	// before is the state before, for the report.
	before string
}

// toStop lists the connectors of the plan that a stop concerns, and sets
// s.waited and s.groups.
func (s *stopper) toStop(plan *restore.Plan) []restore.ConnectorPlan {
	var out []restore.ConnectorPlan
	s.waited, s.groups = nil, nil
	for _, cp := range plan.Connectors {
		if !cp.Live.HasConfig {
			continue // no config here: nothing runs
		}
		s.waited = append(s.waited, cp.Name)
		if cp.Sink != nil && cp.Sink.Group != "" {
			s.groups = append(s.groups, cp.Sink.Group)
		} else if cp.Live.Type == snapshot.TypeSink && cp.Live.Group != "" {
			s.groups = append(s.groups, cp.Live.Group)
		}
		if !cp.Live.Stopped() {
			out = append(out, cp)
		}
	}
	return out
}

// stop stops every connector of the plan that is not stopped and waits
// until all of the scope are STOPPED with no tasks, per the REST API and
// the config topic, and their sink groups are empty.
func (s *stopper) stop(ctx context.Context, plan *restore.Plan) error {
	began := time.Now()
	todo := s.toStop(plan)
	if len(todo) > 0 {
		names := make([]string, len(todo))
		for i, cp := range todo {
			names[i] = cp.Name
		}
		fmt.Fprintf(s.out, "stopping %d connectors: %s\n", len(todo), strings.Join(names, ", "))
	}
	for _, cp := range todo {
		if err := s.rc.Stop(ctx, cp.Name); err != nil {
			return fmt.Errorf("stop connector %q: %w", cp.Name, err)
		}
		s.stopped = append(s.stopped, stoppedConnector{name: cp.Name, target: cp.Live.TargetState, before: cp.State()})
		s.log.Debug("connector stopped", "connector", cp.Name, "was", cp.State())
	}
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.rc.WaitStopped(wctx, s.cl, s.configTopic, s.waited, s.groups); err != nil {
		return fmt.Errorf("wait for the connectors to stop (--stop-timeout %s): %w", s.timeout, err)
	}
	fmt.Fprintf(s.out, "stopped: %d connectors STOPPED with no tasks, %d sink groups empty (%s)\n", len(s.waited), len(s.groups), time.Since(began).Round(time.Millisecond))
	return nil
}

// resolved reports whether stopping would resolve a refusal: a connector
// running, its group's members or its REST state, for a connector with a
// config.
func (s *stopper) resolved(plan *restore.Plan, r restore.Refusal) bool {
	switch r.Check {
	case restore.CheckRunning, restore.CheckGroupMembers, restore.CheckConnectState:
	default:
		return false
	}
	for _, cp := range plan.Connectors {
		if cp.Name == r.Connector {
			return cp.Live.HasConfig
		}
	}
	return false
}

// finish resumes, with --resume, the connectors this restore stopped
// (STARTED ones with PUT .../resume, PAUSED ones with PUT .../pause), and
// waits until they run (or are paused) again; without it, it says which
// are left stopped.
func (s *stopper) finish(ctx context.Context) error {
	if s == nil || len(s.stopped) == 0 {
		return nil
	}
	if !s.resume {
		fmt.Fprintf(s.out, "left STOPPED (no --resume): %s; resume each with PUT /connectors/<name>/resume\n", strings.Join(s.names(), ", "))
		return nil
	}
	want := map[string]string{}
	for _, sc := range s.stopped {
		var err error
		if sc.target == connectrest.TargetPaused {
			err, want[sc.name] = s.rc.Pause(ctx, sc.name), connectrest.StatePaused
		} else {
			err, want[sc.name] = s.rc.Resume(ctx, sc.name), connectrest.StateRunning
		}
		if err != nil {
			return fmt.Errorf("the restore is done and verified, but resuming connector %q failed: %w", sc.name, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.rc.WaitStates(wctx, s.cl, s.configTopic, want); err != nil {
		return fmt.Errorf("the restore is done and verified, and the connectors were resumed, but not all of them run yet: %w", err)
	}
	states, err := restStates(ctx, s.rc)
	if err != nil {
		return err
	}
	for _, sc := range s.stopped {
		verb := "resumed"
		if want[sc.name] == connectrest.StatePaused {
			verb = "paused again"
		}
		fmt.Fprintf(s.out, "%s: connector %s (%s)\n", verb, sc.name, restState(states, sc.name))
	}
	return nil
}

func (s *stopper) names() []string {
	out := make([]string, len(s.stopped))
	for i, sc := range s.stopped {
		out[i] = sc.name
	}
	return out
}

// fail adds to err, which happened after connectors were stopped, the
// state each of them is in now: they are left stopped.
func (s *stopper) fail(ctx context.Context, err error) error {
	if len(s.stopped) == 0 || err == nil {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var b strings.Builder
	fmt.Fprintf(&b, "the connectors this restore stopped are left as they are now; their state:")
	states, serr := restStates(rctx, s.rc)
	configs, cerr := connectrest.ReadConfigTopic(rctx, s.cl, s.configTopic)
	names := s.names()
	sort.Strings(names)
	for _, name := range names {
		sc := s.stopped[slices.IndexFunc(s.stopped, func(x stoppedConnector) bool { return x.name == name })]
		rest := "unknown (" + fmt.Sprint(serr) + ")"
		if serr == nil {
			rest = restState(states, name)
		}
		conf := "unknown (" + fmt.Sprint(cerr) + ")"
		if cerr == nil {
			if c, ok := configs[name]; ok {
				conf = c.String()
			} else {
				conf = "no config"
			}
		}
		verb := "resume"
		if sc.target == connectrest.TargetPaused {
			verb = "pause"
		}
		fmt.Fprintf(&b, "\n  connector %s: REST %s; config topic %s; was %s (PUT /connectors/%s/%s to put it back)", name, rest, conf, sc.before, url.PathEscape(name), verb)
	}
	return fmt.Errorf("%w\n%s", err, b.String())
}

// printStates prints, for diff, one line per connector named (or that has
// changes) with its REST state, and with live its config topic state from
// b: "state  <name>  REST <state>  config topic <state>".
func printStates(ctx context.Context, w io.Writer, rc *connectrest.Client, changes []restore.Change, named []string, b *snapshot.Snapshot, live bool) error {
	states, err := restStates(ctx, rc)
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
		line := fmt.Sprintf("state  %s  REST %s", name, restState(states, name))
		if live {
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
