package connectsim

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// The REST API of the Kafka version Options.Version reports
// (connectsimtest's SetVersion restarts the worker at another), where it
// differs from the newest: Kafka 3.5 added GET /connectors/{name}/offsets
// and PUT .../stop (KIP-875's first part), 3.6 PATCH and DELETE of the
// offsets, 3.7 POST /connectors' "initial_state"
// (KIP-980; an older worker ignores the field and starts the connector).
// A version that is not Kafka 3.x or later (Confluent's "7.6.0-ccs") is
// served as the newest.

// kafkaMinor is the minor of a Kafka 3.x version, 99 for a later or
// unknown one.
func (s *Server) kafkaMinor() int {
	major, rest, _ := strings.Cut(s.version(), ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || ma != 3 {
		return 99
	}
	return mi
}

// since serves h from Kafka 3.minor on; before, the endpoint is missing
// as Jersey answers it: 404 for a path it does not know, 405 for a method
// the path does not take.
func (s *Server) since(minor, status int, h handler) handler {
	return func(ctx context.Context, r *http.Request) (int, any, error) {
		if s.kafkaMinor() < minor {
			return 0, nil, apiError(status, "HTTP %d %s", status, http.StatusText(status))
		}
		return h(ctx, r)
	}
}
