package restore

import (
	"context"
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// refuseStrimzi refuses StopConnectors, before anything is stopped or
// written, when the connectors to stop run on Strimzi's workers (or the
// REST URL is Strimzi's Service): the Cluster Operator puts back each
// KafkaConnector's spec.state, undoing a stop made through the REST API.
// The refusal gives the kubectl commands to stop them instead.
// Request.NotStrimziManaged skips it; Force does not.
func (r *run) refuseStrimzi(ctx context.Context, todo []ConnectorPlan) error {
	if r.req.NotStrimziManaged || len(todo) == 0 {
		return nil
	}
	states, err := r.Connect.States(ctx)
	if err != nil {
		return fmt.Errorf("read the Connect REST API: %w; nothing was written, nothing was stopped", err)
	}
	var statuses []connectrest.Status
	for _, cp := range todo {
		if st, ok := states[cp.Name]; ok {
			statuses = append(statuses, st)
		}
	}
	s, ok := connectrest.DetectStrimzi(r.Connect.URLs(), statuses)
	if !ok {
		return nil
	}
	return refusal{strimziRefusal(s, todo)}
}

// strimziRefusal says why --stop-connectors is refused on Strimzi and what
// to run instead.
func strimziRefusal(s connectrest.Strimzi, todo []ConnectorPlan) error {
	ns := s.Namespace
	if ns == "" {
		ns = "<namespace>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--stop-connectors: these Connect workers belong to the Strimzi %s %q (%s).\n", s.Kind, s.Name, s.Evidence)
	if s.Kind == connectrest.KindKafkaMirrorMaker2 {
		fmt.Fprintf(&b, "The Cluster Operator owns the state of MirrorMaker 2's connectors and puts it back, undoing a stop made through the REST API; nothing was stopped or written.\n")
		fmt.Fprintf(&b, "Stop them in the resource instead (Strimzi 0.38 or later): set state: stopped on each spec.mirrors[].sourceConnector and checkpointConnector of\n  kubectl -n %s edit kafkamirrormaker2 %s\n", ns, s.Name)
		fmt.Fprintf(&b, "wait until their status shows STOPPED, restore without --stop-connectors, then set state: running (or paused, as it was) again.\n")
	} else {
		fmt.Fprintf(&b, "With strimzi.io/use-connector-resources: \"true\" the Cluster Operator puts back each KafkaConnector's spec.state, undoing a stop made through the REST API; nothing was stopped or written.\n")
		fmt.Fprintf(&b, "Stop them through their KafkaConnector resources instead (Strimzi 0.38 or later):\n")
		for _, cp := range todo {
			fmt.Fprintf(&b, "  kubectl -n %s patch kafkaconnector %s --type merge -p '{\"spec\":{\"state\":\"stopped\"}}'\n", ns, cp.Name)
		}
		for _, cp := range todo {
			fmt.Fprintf(&b, "  kubectl -n %s wait kafkaconnector/%s --for=jsonpath='{.status.connectorStatus.connector.state}'=STOPPED\n", ns, cp.Name)
		}
		fmt.Fprintf(&b, "then restore without --stop-connectors, and once it is verified resume each:\n")
		for _, cp := range todo {
			state := "running"
			if cp.Live.TargetState == snapshot.StatePaused {
				state = "paused"
			}
			fmt.Fprintf(&b, "  kubectl -n %s patch kafkaconnector %s --type merge -p '{\"spec\":{\"state\":%q}}'\n", ns, cp.Name, state)
		}
	}
	fmt.Fprintf(&b, "If the operator does not manage these connectors (no strimzi.io/use-connector-resources on the %s, or strimzi.io/pause-reconciliation=\"true\" on each KafkaConnector), run again with --not-strimzi-managed.", s.Kind)
	return fmt.Errorf("%w: %s", ErrRefused, b.String())
}
