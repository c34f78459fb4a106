package realconnect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// WaitTimeout bounds every wait of REST for a state.
var WaitTimeout = 2 * time.Minute

// REST makes the requests a test makes of a Connect REST API (the real
// worker's or internal/connectsim's): it fails the test on a transport
// error or an unexpected status code, and keeps every answer whole.
type REST struct {
	t    testing.TB
	base string
	hc   *http.Client
}

// NewREST returns a client of the REST API at base (http://host:port).
func NewREST(t testing.TB, base string) *REST {
	return &REST{t: t, base: strings.TrimRight(base, "/"), hc: &http.Client{Timeout: 90 * time.Second}}
}

// Response is one answer.
type Response struct {
	Code   int
	Body   []byte
	Header http.Header
}

// Message is the "message" field of a JSON body ("" if none).
func (r Response) Message() string {
	var m struct {
		Message string `json:"message"`
	}
	json.Unmarshal(r.Body, &m)
	return m.Message
}

// ErrorCode is the "error_code" field of a JSON body (0 if none).
func (r Response) ErrorCode() int {
	var m struct {
		ErrorCode int `json:"error_code"`
	}
	json.Unmarshal(r.Body, &m)
	return m.ErrorCode
}

func (r Response) String() string { return fmt.Sprintf("%d %s", r.Code, bytes.TrimSpace(r.Body)) }

// Do sends one request (body nil: none) and returns the answer, whatever
// its status.
func (c *REST) Do(method, path string, body []byte) Response {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	return Response{Code: resp.StatusCode, Body: b, Header: resp.Header}
}

// Must sends one request and fails the test unless the status is want.
// A 409 (a rebalance under way) is retried until WaitTimeout.
func (c *REST) Must(want int, method, path string, body []byte) Response {
	c.t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		r := c.Do(method, path, body)
		if r.Code == want {
			return r
		}
		if r.Code != http.StatusConflict || time.Now().After(deadline) {
			c.t.Fatalf("%s %s: want %d, got %s", method, path, want, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func connPath(name string, rest ...string) string {
	p := "/connectors/" + url.PathEscape(name)
	for _, s := range rest {
		p += "/" + s
	}
	return p
}

// Create creates a connector (POST /connectors, 201); initialState is ""
// (Connect's default, RUNNING), "STOPPED" or "PAUSED".
func (c *REST) Create(name string, config map[string]string, initialState string) Response {
	c.t.Helper()
	return c.Must(http.StatusCreated, http.MethodPost, "/connectors", CreateBody(name, config, initialState))
}

// CreateBody is the body of POST /connectors.
func CreateBody(name string, config map[string]string, initialState string) []byte {
	req := map[string]any{"name": name, "config": config}
	if initialState != "" {
		req["initial_state"] = initialState
	}
	b, _ := json.Marshal(req)
	return b
}

// Delete deletes a connector (204).
func (c *REST) Delete(name string) {
	c.t.Helper()
	c.Must(http.StatusNoContent, http.MethodDelete, connPath(name), nil)
}

// Stop stops a connector (204) and waits until it is STOPPED with no tasks.
func (c *REST) Stop(name string) {
	c.t.Helper()
	c.Must(http.StatusNoContent, http.MethodPut, connPath(name, "stop"), nil)
	c.WaitState(name, "STOPPED", 0)
}

// Pause pauses a connector (202).
func (c *REST) Pause(name string) {
	c.t.Helper()
	c.Must(http.StatusAccepted, http.MethodPut, connPath(name, "pause"), nil)
}

// Resume resumes a connector (202).
func (c *REST) Resume(name string) {
	c.t.Helper()
	c.Must(http.StatusAccepted, http.MethodPut, connPath(name, "resume"), nil)
}

// Offsets is the body of GET /connectors/{name}/offsets (200). A 500 is
// asked again until WaitTimeout, like a 409: the worker answers 500 when
// its read of the offsets topic to the end fails (Worker.connectorOffsets
// reports any error of that read), which says nothing about the offsets,
// and the GET changes nothing. A 500 that lasts fails the test, with the
// worker's errors in its log.
func (c *REST) Offsets(name string) []byte {
	c.t.Helper()
	path := connPath(name, "offsets")
	deadline := time.Now().Add(WaitTimeout)
	logged := false
	for {
		r := c.Do(http.MethodGet, path, nil)
		switch {
		case r.Code == http.StatusOK:
			return r.Body
		case r.Code != http.StatusInternalServerError && r.Code != http.StatusConflict,
			time.Now().After(deadline):
			c.t.Fatalf("GET %s: want 200, got %s", path, r)
		case !logged:
			c.t.Logf("GET %s: %s; asking again", path, r)
			logged = true
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// PatchOffsets sends PATCH /connectors/{name}/offsets with body.
func (c *REST) PatchOffsets(name string, body []byte) Response {
	c.t.Helper()
	return c.Do(http.MethodPatch, connPath(name, "offsets"), body)
}

// DeleteOffsets sends DELETE /connectors/{name}/offsets.
func (c *REST) DeleteOffsets(name string) Response {
	c.t.Helper()
	return c.Do(http.MethodDelete, connPath(name, "offsets"), nil)
}

// Status is GET /connectors/{name}/status.
type Status struct {
	Name      string `json:"name"`
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
	Type string `json:"type"`
}

func (s Status) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", s.Name, s.Connector.State)
	for _, t := range s.Tasks {
		fmt.Fprintf(&b, " task-%d:%s", t.ID, t.State)
	}
	return b.String()
}

// Status returns a connector's status; ok is false on 404.
func (c *REST) Status(name string) (st Status, ok bool) {
	c.t.Helper()
	r := c.Do(http.MethodGet, connPath(name, "status"), nil)
	if r.Code == http.StatusNotFound {
		return Status{}, false
	}
	if r.Code != http.StatusOK {
		c.t.Fatalf("GET %s: %s", connPath(name, "status"), r)
	}
	if err := json.Unmarshal(r.Body, &st); err != nil {
		c.t.Fatalf("GET %s: decode %s: %v", connPath(name, "status"), r.Body, err)
	}
	return st, true
}

// WaitState waits until the connector is in state with exactly tasks
// tasks, all in state too (STOPPED: no tasks). A FAILED connector or task
// fails the test with its trace, unless state is FAILED.
func (c *REST) WaitState(name, state string, tasks int) Status {
	c.t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	var last Status
	for {
		st, ok := c.Status(name)
		if ok {
			last = st
			if state != "FAILED" {
				failIfFailed(c.t, st)
			}
			if is(st, state, tasks) {
				return st
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("connector %s: not %s with %d tasks within %s; last status: %s", name, state, tasks, WaitTimeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func is(st Status, state string, tasks int) bool {
	if st.Connector.State != state || len(st.Tasks) != tasks {
		return false
	}
	for _, t := range st.Tasks {
		if t.State != state {
			return false
		}
	}
	return true
}

func failIfFailed(t testing.TB, st Status) {
	t.Helper()
	if st.Connector.State == "FAILED" {
		t.Fatalf("connector %s FAILED: %s", st.Name, st.Connector.Trace)
	}
	for _, tk := range st.Tasks {
		if tk.State == "FAILED" {
			t.Fatalf("connector %s task %d FAILED: %s", st.Name, tk.ID, tk.Trace)
		}
	}
}

// WaitGone waits until the connector is not found (404).
func (c *REST) WaitGone(name string) {
	c.t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		if _, ok := c.Status(name); !ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("connector %s: still there after %s", name, WaitTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
