package restore

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
)

// Restoring fully-managed connectors through the Confluent Cloud Connect
// v1 API (connectrest in cloud mode) differs from a Connect cluster in
// three ways, which the functions here hold:
//   - Cloud pauses a connector itself while it applies an offsets request
//     and resumes it afterwards ("Manage Offsets for Fully-Managed
//     Connectors in Confluent Cloud"), so the connector need not be
//     STOPPED first, and there is no stop to ask for.
//   - Cloud has no GET /: the REST side's Kafka cluster id is the lkc id
//     of the URL, comparable only with another lkc id.
//   - An offsets request is asynchronous: one still pending when the
//     client gives up may be applied later.

// restClusterDiffers reports whether the Connect REST API's Kafka cluster
// id (restID) names another cluster than the brokers' (kafkaID). In cloud
// mode restID is the lkc id the URL named, which is compared with an lkc
// id only: a cluster id of another form says nothing either way.
func restClusterDiffers(rc *connectrest.Client, restID, kafkaID string) bool {
	if rc.Cloud() {
		return strings.HasPrefix(kafkaID, "lkc-") && restID != kafkaID
	}
	return restID != kafkaID
}

// validateCloud refuses what a restore through Confluent Cloud cannot do.
func (r *run) validateCloud() error {
	if r.Connect == nil || !r.Connect.Cloud() {
		return nil
	}
	if r.req.StopConnectors {
		return errors.New("restore: --stop-connectors: Confluent Cloud has no stop; it pauses a fully-managed connector itself while it applies an offsets request, and resumes it after: restore without --stop-connectors")
	}
	if r.req.Via != ViaConnect {
		return fmt.Errorf("restore: a fully-managed connector's offsets are reachable only through the Confluent Cloud API: restore --via %s", ViaConnect)
	}
	return nil
}

// requestLine describes the request that restores one connector, for the
// plan's output.
func requestLine(rc *connectrest.Client, x ConnectRequest) string {
	n := plural(len(x.Entries), "partition", "partitions")
	if rc.Cloud() {
		return fmt.Sprintf("via connect: POST /connectors/%s/offsets/request {\"type\":\"PATCH\"} with %s (%s), then its status polled until APPLIED (Confluent Cloud pauses the connector meanwhile and resumes it)", x.Connector, n, x.Type)
	}
	return fmt.Sprintf("via connect: PATCH /connectors/%s/offsets with %s (%s)", x.Connector, n, x.Type)
}

// progressLine says how an offsets request went, for a request that
// went through phases (Confluent Cloud), or "" for Connect's synchronous
// answer.
func progressLine(x ConnectResult) string {
	if len(x.Phases) == 0 {
		return ""
	}
	return fmt.Sprintf("offsets request for connector %s: %s in %s", x.Connector, strings.Join(x.Phases, " ... "), x.Took.Round(100*time.Millisecond))
}

// pendingNote is what a restore that ended on a request still pending
// says about it: it may still be applied.
func pendingNote(err error, undo string) string {
	if !errors.Is(err, connectrest.ErrRequestPending) {
		return ""
	}
	return fmt.Sprintf("the pending request may still be applied by Confluent Cloud: check its status before anything else; if it is applied and you want it undone, restore the undo snapshot %s", undo)
}
