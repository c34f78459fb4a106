package restore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
)

// preflight asks the target Connect, before anything is written, whether
// it would accept each connector cs would create: its plugin must be
// installed (GET /connector-plugins) and its config valid there (PUT
// /connector-plugins/{class}/config/validate, which applies the workers'
// client config override policy too). Every problem is listed at once, with
// the key and the worker setting that would allow it; any is a refusal
// (exit 3). It also records the target's plugin version in each Creation
// and says when it differs from the snapshot's.
func (r *run) preflight(ctx context.Context, cs []Creation) error {
	if toCreate(cs) == 0 {
		return nil
	}
	plugins, err := r.Connect.Plugins(ctx)
	listKnown := err == nil
	if err != nil && !errors.Is(err, connectrest.ErrNotFound) {
		return fmt.Errorf("--create-connectors: read the connector plugins of the target Connect (GET /connector-plugins): %w; nothing was written", err)
	}
	var problems []string
	for i := range cs {
		c := &cs[i]
		if c.Action != CreateCreate {
			continue
		}
		class := c.config["connector.class"]
		p, listed := connectrest.FindPlugin(plugins, class)
		if listKnown && !listed {
			problems = append(problems, fmt.Sprintf("connector %q: plugin %s is not installed on the target workers "+
				"(GET /connector-plugins lists %d connector plugins): add it to each worker's plugin.path and restart them", c.Connector, class, len(plugins)))
			continue
		}
		// Validated under the config's own class name: Connect refuses a
		// config whose connector.class does not end with the path's.
		refused, err := r.Connect.ValidateConfig(ctx, class, c.config)
		var apiErr *connectrest.Error
		switch {
		case errors.Is(err, connectrest.ErrNotFound):
			// A front end (a proxy, a managed service) that does not pass
			// validate on: nothing to check with.
			fmt.Fprintln(r.Out, english.Wrap(fmt.Sprintf("connector %s: the target Connect does not serve PUT /connector-plugins/%s/config/validate (404): its config is not checked before the create", c.Connector, class), 120, "  "))
			continue
		case err != nil && !listed && errors.As(err, &apiErr) && apiErr.Status != http.StatusConflict:
			problems = append(problems, fmt.Sprintf("connector %q: plugin %s is not installed on the target workers "+
				"(validate answered %d %s): add it to each worker's plugin.path and restart them", c.Connector, class, apiErr.Status, apiErr.Message))
			continue
		case err != nil:
			return fmt.Errorf("--create-connectors: validate the config of connector %q on the target Connect: %w; nothing was written", c.Connector, err)
		}
		c.PluginVersion = p.Version
		if sc, ok := r.req.Snapshot.Connector(c.Connector); ok && sc.PluginVersion != "" && p.Version != "" && sc.PluginVersion != p.Version {
			fmt.Fprintln(r.Out, english.Wrap(fmt.Sprintf("connector %s: plugin %s is version %s on the target, %s in the snapshot: check that its offsets mean the same to both",
				c.Connector, p.Class, p.Version, sc.PluginVersion), 120, "  "))
		}
		for _, pr := range refused {
			problems = append(problems, fmt.Sprintf("connector %q: key %s refused: %s%s", c.Connector, pr.Key, strings.Join(pr.Errors, "; "), allowedBy(pr.Key)))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return refusal{errors.New(wrapLines(fmt.Sprintf("--create-connectors: the target Connect would refuse %s (checked with its own validate; nothing was written):\n  - %s",
		plural(len(problems), "thing", "things"), strings.Join(problems, "\n  - "))))}
}

// allowedBy names the worker setting that would allow key, "" if none is
// known.
func allowedBy(key string) string {
	for _, p := range []string{"consumer.override.", "producer.override.", "admin.override."} {
		if strings.HasPrefix(key, p) {
			return fmt.Sprintf(" (allowed by the workers' connector.client.config.override.policy=All, or on Kafka 4.2+ "+
				"Allowlist with %s in connector.client.config.override.allowlist; or leave the key out of the connector's config)", strings.TrimPrefix(key, p))
		}
	}
	return ""
}
