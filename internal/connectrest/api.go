package connectrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Connector and task states as the REST API spells them
// (AbstractStatus.State).
const (
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateUnassigned = "UNASSIGNED"
	StateRestarting = "RESTARTING"
)

// ServerInfo is the answer of GET /.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// Status is a connector's ConnectorStateInfo, as GET
// /connectors/{name}/status answers it: what the status topic last said.
type Status struct {
	Name      string         `json:"name"`
	Connector ConnectorState `json:"connector"`
	Tasks     []TaskState    `json:"tasks"`
	// Type is source, sink or unknown.
	Type string `json:"type"`
}

// ConnectorState is the connector part of a Status.
type ConnectorState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskState is one task of a Status.
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// Stopped reports whether the status is STOPPED with no tasks, which is
// what the worker requires before offsets may be altered.
func (s Status) Stopped() bool { return s.Connector.State == StateStopped && len(s.Tasks) == 0 }

// String describes the status in a few words: "RUNNING, 2 tasks",
// "STOPPED", "RUNNING, 2 tasks (1 FAILED)".
func (s Status) String() string {
	out := s.Connector.State
	if out == "" {
		out = "no state"
	}
	if len(s.Tasks) == 0 {
		return out
	}
	if len(s.Tasks) == 1 {
		out += ", 1 task"
	} else {
		out += fmt.Sprintf(", %d tasks", len(s.Tasks))
	}
	odd := map[string]int{}
	var order []string
	for _, t := range s.Tasks {
		if t.State != s.Connector.State {
			if odd[t.State] == 0 {
				order = append(order, t.State)
			}
			odd[t.State]++
		}
	}
	if len(order) > 0 {
		parts := make([]string, len(order))
		for i, st := range order {
			parts[i] = fmt.Sprintf("%d %s", odd[st], st)
		}
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	return out
}

// Info is a connector's ConnectorInfo (expand=info, GET /connectors/{name}).
type Info struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   string            `json:"type"`
}

// TaskID names one task.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// Expanded is one connector of GET /connectors?expand=status&expand=info.
type Expanded struct {
	Status *Status `json:"status"`
	Info   *Info   `json:"info"`
}

// ServerInfo asks GET / for the worker's version, commit and Kafka
// cluster id.
func (c *Client) ServerInfo(ctx context.Context) (ServerInfo, error) {
	var si ServerInfo
	if c.cloud != nil {
		return c.cloudServerInfo(), nil
	}
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: "/"})
	if err != nil {
		return si, err
	}
	if err := json.Unmarshal(body, &si); err != nil {
		return si, fmt.Errorf("decode GET / answer: %w", err)
	}
	return si, nil
}

// RequireOffsetsAPI checks with GET / that the workers run Kafka 3.6 or
// later, which PATCH and DELETE /connectors/{name}/offsets need, and
// returns the server info; an older or unreadable version is ErrUnsupported.
func (c *Client) RequireOffsetsAPI(ctx context.Context) (ServerInfo, error) {
	return c.requireKafka3(ctx, 6, "altering offsets through Connect needs Kafka 3.6 or later",
		"PATCH /connectors/{name}/offsets needs 3.6 or later (KIP-875): restore --via kafka instead")
}

// requireKafka3 checks with GET / that the workers run Kafka 3.minor or
// later; unknown ends the error when the version cannot be read, older
// when it is older.
func (c *Client) requireKafka3(ctx context.Context, minor int, unknown, older string) (ServerInfo, error) {
	si, err := c.ServerInfo(ctx)
	if err != nil || c.cloud != nil {
		return si, err // Cloud's managed connectors have the offsets API
	}
	major, m, ok := KafkaVersion(si.Version)
	switch {
	case !ok:
		return si, fmt.Errorf("%w: cannot tell the Kafka version from GET / version %q; %s", ErrUnsupported, si.Version, unknown)
	case major < 3 || major == 3 && m < minor:
		return si, fmt.Errorf("%w: the workers run Kafka %d.%d (GET / version %q); %s", ErrUnsupported, major, m, si.Version, older)
	}
	return si, nil
}

// KafkaVersion reads the Apache Kafka major and minor version from a
// worker's version string: "3.7.0", "3.6.1.redhat-00003" or, for Confluent
// Platform, whose workers report their own version with a -ccs or -ce
// suffix, the Kafka version that release ships ("7.6.0-ccs" is Kafka 3.6,
// "8.0.0-ccs" Kafka 4.0).
func KafkaVersion(v string) (major, minor int, ok bool) {
	s := strings.TrimSpace(v)
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err := strconv.Atoi(parts[0])
	if err != nil {
		return 0, 0, false
	}
	digits := parts[1]
	for i, r := range digits {
		if r < '0' || r > '9' {
			digits = digits[:i]
			break
		}
	}
	minor, err = strconv.Atoi(digits)
	if err != nil {
		return 0, 0, false
	}
	if strings.HasSuffix(s, "-ccs") || strings.HasSuffix(s, "-ce") {
		switch {
		case major >= 8:
			major -= 4 // CP 8.x ships Kafka 4.x
		case major == 7:
			major = 3 // CP 7.x ships Kafka 3.x
		case major == 6:
			major, minor = 2, minor+6 // CP 6.0 is Kafka 2.6
		case major >= 5:
			major, minor = 2, 0 // older than anything that matters here
		}
	}
	return major, minor, true
}

// Connectors asks GET /connectors?expand=status&expand=info for every
// connector, by name. Workers older than Kafka 2.3 ignore expand and list
// names only: then each connector's status is asked on its own (Info stays
// nil), and one that vanished meanwhile is left out, as Connect does.
func (c *Client) Connectors(ctx context.Context) (map[string]Expanded, error) {
	q := url.Values{"expand": {"status", "info"}}
	if c.cloud != nil {
		q = url.Values{"expand": {"status,info"}} // Cloud takes one comma-separated list
	}
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: "/connectors", query: q})
	if err != nil {
		return nil, err
	}
	out := map[string]Expanded{}
	if err := json.Unmarshal(body, &out); err == nil {
		return out, nil
	}
	var names []string
	if err := json.Unmarshal(body, &names); err != nil {
		return nil, fmt.Errorf("decode GET /connectors?expand=status&expand=info answer: %w", err)
	}
	for _, n := range names {
		st, err := c.Status(ctx, n)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[n] = Expanded{Status: &st}
	}
	return out, nil
}

// States reads every connector's REST status with one request (see
// Connectors), by name.
func (c *Client) States(ctx context.Context) (map[string]Status, error) {
	all, err := c.Connectors(ctx)
	if err != nil {
		return nil, fmt.Errorf("read connector states from the Connect REST API: %w", err)
	}
	out := make(map[string]Status, len(all))
	for name, e := range all {
		if e.Status != nil {
			out[name] = *e.Status
		}
	}
	return out, nil
}

// StateOf describes a connector's REST status in states, or its absence.
func StateOf(states map[string]Status, name string) string {
	if st, ok := states[name]; ok {
		return st.String()
	}
	return "unknown to Connect"
}

// Status asks GET /connectors/{name}/status. A connector Connect has no
// status for is an *Error matching ErrNotFound.
func (c *Client) Status(ctx context.Context, name string) (Status, error) {
	var s Status
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: pathOf("connectors", name, "status")})
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(body, &s); err != nil {
		return s, fmt.Errorf("decode status of connector %q: %w", name, err)
	}
	return s, nil
}

// Stop sends PUT /connectors/{name}/stop (Kafka 3.5+; 204): the leader
// writes an empty task list, then target state STOPPED. It returns once
// the request is accepted; wait for the status to show it.
func (c *Client) Stop(ctx context.Context, name string) error {
	if c.cloud != nil {
		return c.cloudStop(name)
	}
	_, _, err := c.do(ctx, request{method: http.MethodPut, path: pathOf("connectors", name, "stop")})
	return err
}

// Pause sends PUT /connectors/{name}/pause (202, asynchronous).
func (c *Client) Pause(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, request{method: http.MethodPut, path: pathOf("connectors", name, "pause")})
	return err
}

// Resume sends PUT /connectors/{name}/resume (202, asynchronous).
func (c *Client) Resume(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, request{method: http.MethodPut, path: pathOf("connectors", name, "resume")})
	return err
}

// Offsets asks GET /connectors/{name}/offsets and returns the body as
// Connect sent it: {"offsets":[{"partition":{...},"offset":{...}|null}]}.
func (c *Client) Offsets(ctx context.Context, name string) ([]byte, error) {
	if c.cloud != nil {
		return c.cloudOffsets(ctx, name)
	}
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: pathOf("connectors", name, "offsets")})
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("GET /connectors/%s/offsets: the answer is not JSON: %s", name, shorten(string(body), 200))
	}
	return body, nil
}

// AlterResult is Connect's answer to an offsets alteration or reset.
type AlterResult struct {
	// Message is Connect's message.
	Message string
	// FrameworkOnly is set when Connect says it altered only the offsets
	// it manages itself: the connector's alterOffsets hook did not confirm
	// that offsets it keeps elsewhere were handled, and they may need to be
	// changed by hand in the system it uses.
	FrameworkOnly bool
	// Phases are the phases a Confluent Cloud offsets request went
	// through, as its status showed them (PENDING, APPLIED), and Took the
	// time from the request until the last; both empty for Connect.
	Phases []string
	Took   time.Duration
}

// AlterOffsets sends PATCH /connectors/{name}/offsets with body
// ({"offsets":[...]}, Kafka 3.6+). Connect requires the connector STOPPED
// (400 otherwise). See RequireOffsetsAPI for the version check.
func (c *Client) AlterOffsets(ctx context.Context, name string, body []byte) (AlterResult, error) {
	return c.offsetsWrite(ctx, http.MethodPatch, name, body)
}

// ResetOffsets sends DELETE /connectors/{name}/offsets (Kafka 3.6+): every
// offset of the connector is removed.
func (c *Client) ResetOffsets(ctx context.Context, name string) (AlterResult, error) {
	return c.offsetsWrite(ctx, http.MethodDelete, name, nil)
}

func (c *Client) offsetsWrite(ctx context.Context, method, name string, body []byte) (AlterResult, error) {
	if c.cloud != nil {
		return c.cloudOffsetsWrite(ctx, method, name, body)
	}
	_, resp, err := c.do(ctx, request{method: method, path: pathOf("connectors", name, "offsets"), body: body, timeout: OffsetsTimeout})
	if err != nil {
		return AlterResult{}, err
	}
	var m struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(resp, &m); err != nil {
		return AlterResult{}, fmt.Errorf("decode %s /connectors/%s/offsets answer: %w", method, name, err)
	}
	return AlterResult{Message: m.Message, FrameworkOnly: frameworkOnly(m.Message)}, nil
}

// frameworkOnly recognizes Connect's message for an alteration the
// connector's own hook did not confirm: "The Connect framework-managed
// offsets for this connector have been altered successfully. However, if
// this connector manages offsets externally, ...".
func frameworkOnly(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "framework-managed offsets") || strings.Contains(m, "manages offsets externally")
}

// CreateConnector sends POST /connectors with {"name":..,"config":..}
// and, when initialState is not empty (RUNNING, PAUSED or STOPPED),
// "initial_state" (KIP-980, Kafka 3.7+; see RequireInitialState), and
// returns the ConnectorInfo Connect answers (201). A name Connect has
// already is a 409 *Error (ErrConflict); a 409 is not retried, since
// Connect answers the same status to a name it has.
func (c *Client) CreateConnector(ctx context.Context, name string, config map[string]string, initialState string) (Info, error) {
	var info Info
	req := struct {
		Name         string            `json:"name"`
		Config       map[string]string `json:"config"`
		InitialState string            `json:"initial_state,omitempty"`
	}{name, config, initialState}
	body, err := json.Marshal(req)
	if err != nil {
		return info, fmt.Errorf("encode connector %q: %w", name, err)
	}
	_, resp, err := c.do(ctx, request{method: http.MethodPost, path: "/connectors", body: body, noRetry: true})
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(resp, &info); err != nil {
		return info, fmt.Errorf("decode POST /connectors answer for connector %q: %w", name, err)
	}
	return info, nil
}

// RequireInitialState checks with GET / that the workers run Kafka 3.7 or
// later, whose POST /connectors honours "initial_state" (KIP-980); an
// older or unreadable version is ErrUnsupported: an older worker would
// ignore the field and start the connector at once.
func (c *Client) RequireInitialState(ctx context.Context) (ServerInfo, error) {
	if c.cloud != nil {
		return c.cloudServerInfo(), fmt.Errorf("%w: Confluent Cloud's connector create API documents no \"initial_state\": a fully-managed connector created through it would start at once", ErrUnsupported)
	}
	return c.requireKafka3(ctx, 7, `creating a connector STOPPED (POST /connectors with "initial_state") needs Kafka 3.7 or later`,
		`creating a connector STOPPED (POST /connectors with "initial_state", KIP-980) needs 3.7 or later`)
}

// Known reports whether Connect has a config for the connector (GET
// /connectors/{name}: 200, or 404). Unlike its status, which the worker
// running it writes, the config is there as soon as it is created.
func (c *Client) Known(ctx context.Context, name string) (bool, error) {
	_, _, err := c.do(ctx, request{method: http.MethodGet, path: pathOf("connectors", name)})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
