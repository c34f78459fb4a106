package restore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Actions of a Creation.
const (
	// CreateCreate: the target Connect does not have the connector; the
	// restore creates it STOPPED with the snapshot's config (a dry run
	// would).
	CreateCreate = "create"
	// CreateCreated: it was created.
	CreateCreated = "created"
	// CreateExists: the target has it with the snapshot's config.
	CreateExists = "exists"
	// CreateDiffers: the target has it with another config; it is left as
	// it is, never overwritten.
	CreateDiffers = "exists-with-other-config"
	// CreateNoConfig: the snapshot has no config for it (deleted, or
	// known only from its offsets): it cannot be created.
	CreateNoConfig = "no-config-in-snapshot"
)

// Creation is what Request.CreateConnectors does with one connector of
// the scope.
type Creation struct {
	Connector string `json:"connector"`
	Type      string `json:"type"`
	// Action is CreateCreate, CreateCreated, CreateExists, CreateDiffers
	// or CreateNoConfig.
	Action string `json:"action"`
	// Differs names the config keys whose values differ (or that only one
	// side has), for CreateDiffers.
	Differs []string `json:"differs,omitempty"`
	// Resume is the target state the connector has in the snapshot, which
	// Request.Resume puts it back to once restored.
	Resume string `json:"resume_to,omitempty"`
	// Rewritten are the config keys a translation rewrote in the config
	// it is created with (sinkconfig.go), for CreateCreate.
	Rewritten []ConfigRewrite `json:"config_rewritten,omitempty"`
	// PluginVersion is the version of its plugin on the target Connect
	// (GET /connector-plugins), for CreateCreate; "" if not given.
	PluginVersion string `json:"plugin_version,omitempty"`

	config map[string]string
	// tasks is its task count in the snapshot.
	tasks int
}

// planCreations compares the connectors of the plan with those the target
// Connect has (Request.CreateConnectors) and prints what it finds. It
// refuses when there is something to create and the workers are older
// than Kafka 3.7, and fails when the snapshot holds no configs for those
// to create. Nothing is written.
func (r *run) planCreations(ctx context.Context, plan *Plan) ([]Creation, error) {
	all, err := r.Connect.Connectors(ctx)
	if err != nil {
		return nil, fmt.Errorf("--create-connectors: read the connectors of the Connect REST API: %w; nothing was written", err)
	}
	var out []Creation
	var noConfigs []string
	for _, cp := range plan.Connectors {
		sc, _ := r.req.Snapshot.Connector(cp.Name)
		cr := Creation{Connector: cp.Name, Type: cp.Type, Resume: sc.TargetState, tasks: sc.Tasks}
		e, exists := all[cp.Name]
		switch {
		case !sc.HasConfig && !exists:
			cr.Action = CreateNoConfig
		case !sc.HasConfig:
			continue // nothing to compare: the target's is the one
		case sc.Config == nil && !exists:
			noConfigs = append(noConfigs, cp.Name)
			continue
		case !exists:
			cr.Action, cr.config = CreateCreate, configFor(cp.Name, sc.Config)
		case sc.Config == nil || e.Info == nil || e.Info.Config == nil:
			cr.Action = CreateExists // nothing to compare it with
		default:
			cr.Differs = differingKeys(configFor(cp.Name, sc.Config), e.Info.Config)
			cr.Action = CreateExists
			if len(cr.Differs) > 0 {
				cr.Action = CreateDiffers
			}
		}
		out = append(out, cr)
	}
	if gone := memoryOnly(plan, func(n string) bool { _, ok := all[n]; return ok }); len(gone) > 0 && !r.Connect.Cloud() {
		// Connect reports them, so none would be created: the workers
		// must drop them first.
		return nil, refusal{advise(fmt.Errorf("--create-connectors: %s; nothing was written", r.configGoneAdvice(gone)), r.configGoneCommands(gone)...)}
	}
	if len(noConfigs) > 0 {
		return nil, fmt.Errorf("--create-connectors: snapshot %s holds no config for %s, which the Connect REST API does not have (%s): it was taken by an offsetkeeper build that kept only a hash of each config; take a new snapshot of the old cluster if it still runs, or create those connectors by hand (POST /connectors with \"initial_state\":\"STOPPED\") and restore without --create-connectors; nothing was written",
			r.req.Snapshot.ID, plural(len(noConfigs), "connector", "connectors"), strings.Join(noConfigs, ", "))
	}
	if toCreate(out) > 0 {
		if err := r.requireInitialState(ctx, out); err != nil {
			return nil, err
		}
		if err := r.preflight(ctx, out); err != nil {
			return nil, err
		}
	}
	r.report.Created = out
	r.printCreations(out)
	return out, nil
}

// configFor is the config connector name is created with: the snapshot's,
// with the name it has here (a --rename-connector renames it).
func configFor(name string, config map[string]string) map[string]string {
	out := maps.Clone(config)
	if _, ok := out["name"]; ok {
		out["name"] = name
	}
	return out
}

// differingKeys are the keys whose values differ between want and have,
// sorted; Connect adds "name" to a config, so a missing name is no
// difference.
func differingKeys(want, have map[string]string) []string {
	var out []string
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			out = append(out, k)
		}
	}
	for k := range have {
		if _, ok := want[k]; !ok && k != "name" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func toCreate(cs []Creation) int {
	n := 0
	for _, c := range cs {
		if c.Action == CreateCreate {
			n++
		}
	}
	return n
}

// requireInitialState refuses --create-connectors on workers older than
// Kafka 3.7, which would start a created connector at once, before its
// offsets are written; the refusal says how to do it by hand.
func (r *run) requireInitialState(ctx context.Context, cs []Creation) error {
	_, err := r.Connect.RequireInitialState(ctx)
	if err == nil {
		return nil
	}
	if !errors.Is(err, connectrest.ErrUnsupported) {
		return fmt.Errorf("--create-connectors: %w; nothing was written", err)
	}
	steps, cmds := r.req.Commands.manualSteps(r.req.Snapshot.ID, r.Connect.URLs()[0], cs)
	return refusal{advise(fmt.Errorf("--create-connectors: %w; nothing was written\n%s", err, steps), cmds...)}
}

// manualSteps says how to bring connectors back on workers that cannot
// create them STOPPED: offsets first, while the connectors do not exist,
// then the connectors, which start from them. Each creation is a command
// to paste (returned in cmds too, for the layout): show prints the body of
// POST /connectors with the snapshot's config.
func (s CommandSettings) manualSteps(id, base string, cs []Creation) (text string, cmds []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "to do it by hand, in this order:\n")
	fmt.Fprintf(&b, "  1. run this restore again without --create-connectors and --resume: it writes the offsets while the connectors do not exist, so nothing overwrites them\n")
	fmt.Fprintf(&b, "  2. then create each connector from the snapshot's config; it starts from the restored offsets:")
	program := cmp.Or(s.Program, "offsetkeeper")
	post := Curl + " -X POST -H 'Content-Type: application/json' --data "
	url := ShellQuote(strings.TrimRight(base, "/") + "/connectors")
	for _, c := range cs {
		if c.Action != CreateCreate {
			continue
		}
		var cmd string
		if !hasSecret(c.config) {
			// The body itself, as the restore would create it (a
			// translation's rewrites and renames included).
			body, _ := json.Marshal(struct {
				Name   string            `json:"name"`
				Config map[string]string `json:"config"`
			}{c.Connector, c.config})
			cmd = post + ShellQuote(string(body)) + " " + url
		} else {
			// Secrets stay off the screen: show prints the body from the
			// stored snapshot, as it holds the connector.
			show := program + " " + quoteArgs(append([]string{"show", id, "--connector", c.Connector, "--show-secrets", "--output", "connect-create"}, s.Flags...))
			cmd = show + " | " + post + "@- " + url
		}
		cmds = append(cmds, cmd)
		fmt.Fprintf(&b, " %s;", cmd)
		for _, x := range c.Rewritten {
			if hasSecret(c.config) {
				fmt.Fprintf(&b, " (the restore would create it with %s=%s, the snapshot has %s=%s: change it in the body first);", x.Key, x.New, x.Key, x.Old)
			}
		}
	}
	return strings.TrimSuffix(b.String(), ";"), cmds
}

// hasSecret reports whether config holds a value show masks.
func hasSecret(config map[string]string) bool {
	for k, v := range config {
		if SecretValue(k, v) {
			return true
		}
	}
	return false
}

// printCreations prints what --create-connectors does or would do.
func (r *run) printCreations(cs []Creation) {
	var names []string
	for _, c := range cs {
		switch c.Action {
		case CreateCreate:
			names = append(names, c.Connector+" ("+c.Type+")")
		case CreateDiffers:
			fmt.Fprintln(r.Out, english.Wrap(fmt.Sprintf("connector %s exists on Connect with another config (%s differ): left as it is, never overwritten; its offsets are restored as any existing connector's", c.Connector, strings.Join(c.Differs, ", ")), lineWidth, "  "))
		case CreateNoConfig:
			fmt.Fprintln(r.Out, english.Wrap(fmt.Sprintf("connector %s has no config in the snapshot (deleted, or known only from its offsets): not created; its offsets are restored", c.Connector), lineWidth, "  "))
		}
	}
	if len(names) == 0 {
		return
	}
	verb := "creates"
	if r.req.DryRun {
		verb = "dry run: would create"
	}
	// One name a line would be long; wrapped, the list stays readable.
	fmt.Fprintln(r.Out, english.Wrap(fmt.Sprintf("--create-connectors %s %s STOPPED, with the snapshot's configs: %s", verb, plural(len(names), "connector", "connectors"), strings.Join(names, ", ")), lineWidth, "  "))
	r.printCreatedConfigs(r.Out, cs)
}

// create creates the connectors of cs that Connect does not have, STOPPED,
// and waits until the REST API and the config topic both say they are;
// the stopper then resumes them (Request.Resume) or names them as left
// stopped, as those it stopped.
func (r *run) create(ctx context.Context, cs []Creation) error {
	if toCreate(cs) == 0 {
		return nil
	}
	if r.stop == nil {
		r.stop = &stopper{rc: r.Connect, cl: r.Client, configTopic: r.req.Options.ConfigTopic, out: r.Out, log: r.Log, timeout: r.req.StopTimeout, resume: r.req.Resume}
		if r.stop.configTopic == "" {
			r.stop.configTopic = snapshot.DefaultConfigTopic
		}
	}
	if err := r.recordCreating(ctx, cs); err != nil {
		return fmt.Errorf("record the restore in the store: %w; nothing was written, no connector was created", err)
	}
	var names []string
	for i := range cs {
		c := &cs[i]
		if c.Action != CreateCreate {
			continue
		}
		if _, err := r.Connect.CreateConnector(ctx, c.Connector, c.config, connectrest.StateStopped); err != nil {
			return fmt.Errorf("create connector %q (POST /connectors): %w", c.Connector, err)
		}
		c.Action = CreateCreated
		names = append(names, c.Connector)
		// Resumed, it runs at least one task if it had any: how many
		// depends on the new workers (tasks.max is an upper bound).
		rw := resumeWant{tasks: min(max(c.tasks, 0), 1)}
		target := c.Resume
		if r.req.Start && target == snapshot.StateStopped {
			// --start: STOPPED in the state restored, started here (left
			// stopped, a sink's offsets would expire).
			target = snapshot.StateStarted
		}
		r.stop.stopped = append(r.stop.stopped, stoppedConnector{name: c.Connector, target: target, before: "created STOPPED by this restore", created: true, resumed: rw})
		r.Log.Debug("connector created", "connector", c.Connector)
	}
	r.report.Created = cs
	wctx, cancel := context.WithTimeout(ctx, r.req.StopTimeout)
	defer cancel()
	if err := waitStopped(wctx, r.Connect, r.Client, r.stop.configTopic, names, nil); err != nil {
		return fmt.Errorf("wait for the connectors created to be STOPPED (--stop-timeout %s): %w", r.req.StopTimeout, err)
	}
	fmt.Fprintln(r.Out, english.Wrap(fmt.Sprintf("created: %s STOPPED (POST /connectors with \"initial_state\":\"STOPPED\"): %s", plural(len(names), "connector", "connectors"), strings.Join(names, ", ")), lineWidth, "  "))
	return nil
}
