package connectrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
)

// cloudRequest is an offsets request as POST .../offsets/request takes
// it and as the 202 answer and the status's "request" show it.
type cloudRequest struct {
	ID          any             `json:"id,omitempty"`
	Name        string          `json:"name,omitempty"`
	Type        string          `json:"type"`
	Offsets     json.RawMessage `json:"offsets,omitempty"`
	RequestedAt string          `json:"requested_at,omitempty"`
}

// cloudStatus is the answer of GET .../offsets/request/status: the
// latest offsets request of the connector, whichever client sent it.
type cloudStatus struct {
	Request cloudRequest `json:"request"`
	Status  struct {
		Phase   string `json:"phase"`
		Message string `json:"message"`
	} `json:"status"`
	PreviousOffsets json.RawMessage `json:"previous_offsets"`
	AppliedAt       string          `json:"applied_at"`
}

// requestStatus asks GET .../offsets/request/status; found is false when
// Cloud has no request of the connector (404).
func (c *Client) requestStatus(ctx context.Context, name string) (st cloudStatus, found bool, err error) {
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: pathOf("connectors", name, "offsets", "request", "status")})
	if errors.Is(err, ErrNotFound) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, false, fmt.Errorf("decode the offsets request status of connector %q: %w", name, err)
	}
	return st, true, nil
}

// cloudOffsetsWrite sends an offsets request (typ PATCH with the offsets
// of body, or DELETE) and polls its status every Config.PollInterval
// until Cloud says APPLIED or FAILED. Config.Timeout bounds the whole
// wait from the POST on: a request still PENDING then is ErrRequestPending.
func (c *Client) cloudOffsetsWrite(ctx context.Context, typ, name string, body []byte) (AlterResult, error) {
	sent := cloudRequest{Type: typ}
	if typ == http.MethodPatch {
		var b struct {
			Offsets json.RawMessage `json:"offsets"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return AlterResult{}, fmt.Errorf("offsets request for connector %q: the body is not {\"offsets\":[...]}: %w", name, err)
		}
		sent.Offsets = b.Offsets
	}
	// The status endpoint shows the latest request: what it says before
	// ours tells an older request from ours when the 202 gives no time.
	before, _, err := c.requestStatus(ctx, name)
	if err != nil {
		return AlterResult{}, err
	}
	reqBody, err := json.Marshal(sent)
	if err != nil {
		return AlterResult{}, fmt.Errorf("encode the offsets request of connector %q: %w", name, err)
	}
	start := time.Now()
	// Cloud answers 409 to a second request while one is in progress,
	// which waiting a few seconds does not resolve.
	_, resp, err := c.do(ctx, request{method: http.MethodPost, path: pathOf("connectors", name, "offsets", "request"), body: reqBody, noRetry: true})
	if err != nil {
		return AlterResult{}, err
	}
	var accepted cloudRequest
	if err := json.Unmarshal(resp, &accepted); err != nil {
		return AlterResult{}, fmt.Errorf("decode the 202 answer to the offsets request of connector %q: %w", name, err)
	}
	return c.awaitRequest(ctx, name, sent, accepted, before.Request.RequestedAt, start)
}

// awaitRequest polls the status of the request sent (Cloud's answer
// accepted) until it is applied or failed, or Config.Timeout since start.
func (c *Client) awaitRequest(ctx context.Context, name string, sent, accepted cloudRequest, before string, start time.Time) (AlterResult, error) {
	pollCtx, cancel := context.WithDeadline(ctx, start.Add(c.cfg.Timeout))
	defer cancel()
	var phases []string
	phase := "not yet shown by the status endpoint"
	for {
		st, found, err := c.requestStatus(pollCtx, name)
		if err != nil && pollCtx.Err() == nil {
			return AlterResult{}, fmt.Errorf("offsets request (%s) for connector %q was accepted, reading its status: %w; Confluent Cloud may still apply it: %s", sent.Type, name, err, c.checkStatusHint(name))
		}
		if err == nil && found && st.isFor(sent, accepted, before) {
			phase = strings.ToUpper(st.Status.Phase)
			if len(phases) == 0 || phases[len(phases)-1] != phase {
				phases = append(phases, phase)
			}
			switch phase {
			case PhaseApplied:
				return c.applied(name, st, phases, time.Since(start)), nil
			case PhaseFailed:
				return AlterResult{Phases: phases, Took: time.Since(start)}, fmt.Errorf("%w: connector %q: offsets request (%s) phase %s: %s", ErrRequestFailed, name, sent.Type, phase, orNone(st.Status.Message))
			}
		}
		if err == nil {
			err = sleep(pollCtx, c.cfg.PollInterval)
		}
		if err != nil {
			why := fmt.Sprintf("after %s (--connect-timeout)", c.cfg.Timeout)
			if ctx.Err() != nil {
				why = "when the restore was interrupted"
			}
			return AlterResult{Phases: phases, Took: time.Since(start)}, fmt.Errorf("%w: connector %q: offsets request (%s) still %s %s; Confluent Cloud may still apply it later: %s before retrying", ErrRequestPending, name, sent.Type, phase, why, c.checkStatusHint(name))
		}
	}
}

// applied records when Cloud applied a request (see cloudOffsets) and
// returns its result.
func (c *Client) applied(name string, st cloudStatus, phases []string, took time.Duration) AlterResult {
	if at, err := time.Parse(time.RFC3339Nano, st.AppliedAt); err == nil {
		c.cloud.mu.Lock()
		c.cloud.applied[name] = at
		c.cloud.mu.Unlock()
	}
	msg := st.Status.Message
	if msg == "" {
		msg = "offsets request " + PhaseApplied
	}
	return AlterResult{Message: msg, FrameworkOnly: frameworkOnly(msg), Phases: phases, Took: took}
}

// checkStatusHint says where to see a request's status.
func (c *Client) checkStatusHint(name string) string {
	return fmt.Sprintf("check `confluent connect offset status describe <connector id> --environment %s --cluster %s` or GET %s%s", c.cloud.env, c.cloud.cluster, c.bases[0].Redacted(), unescapedPath(pathOf("connectors", name, "offsets", "request", "status")))
}

func orNone(msg string) string {
	if msg == "" {
		return "(no message)"
	}
	return msg
}

// isFor reports whether the status is that of the request sent, which
// Cloud accepted as accepted, rather than of an older one (before is the
// requested_at the status showed before it was sent).
func (st cloudStatus) isFor(sent, accepted cloudRequest, before string) bool {
	if !strings.EqualFold(st.Request.Type, sent.Type) {
		return false
	}
	if accepted.RequestedAt != "" {
		return sameTime(st.Request.RequestedAt, accepted.RequestedAt)
	}
	if before != "" && sameTime(st.Request.RequestedAt, before) {
		return false
	}
	return sameOffsets(st.Request.Offsets, sent.Offsets)
}

func sameTime(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339Nano, a)
	tb, errB := time.Parse(time.RFC3339Nano, b)
	if errA == nil && errB == nil {
		return ta.Equal(tb)
	}
	return a == b
}

// sameOffsets compares two offsets arrays as Connect compares maps.
func sameOffsets(a, b json.RawMessage) bool {
	decode := func(raw json.RawMessage) ([]connectjson.OffsetEntry, bool) {
		if len(raw) == 0 || string(raw) == "null" {
			return nil, true
		}
		es, err := connectjson.DecodeOffsets([]byte(`{"offsets":`+string(raw)+`}`), connectjson.DecodeOptions{})
		return es, err == nil
	}
	ea, okA := decode(a)
	eb, okB := decode(b)
	if !okA || !okB || len(ea) != len(eb) {
		return false
	}
	for _, x := range ea {
		found := false
		for _, y := range eb {
			if connectjson.Equal(x.Partition, y.Partition) && (x.Offset == nil) == (y.Offset == nil) && (x.Offset == nil || connectjson.Equal(x.Offset, y.Offset)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
