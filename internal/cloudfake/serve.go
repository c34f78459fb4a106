package cloudfake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.TrimPrefix(r.URL.EscapedPath(), s.prefix())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: unescape(path), Query: r.URL.RawQuery, Body: string(body)})
	if key, secret, ok := r.BasicAuth(); !ok || key != s.opts.APIKey || secret != s.opts.APISecret {
		fail(w, http.StatusUnauthorized, "Unable to authenticate")
		return
	}
	if !strings.HasPrefix(r.URL.EscapedPath(), s.prefix()+"/") {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	seg := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i := range seg {
		seg[i] = unescape(seg[i])
	}
	if seg[0] != "connectors" {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	if len(seg) == 1 {
		if r.Method != http.MethodGet {
			fail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		s.list(w, r)
		return
	}
	c, ok := s.connectors[seg[1]]
	if !ok {
		fail(w, http.StatusNotFound, "Connector "+seg[1]+" not found")
		return
	}
	s.connector(w, r, c, strings.Join(seg[2:], "/"), body)
}

func (s *Server) connector(w http.ResponseWriter, r *http.Request, c *connector, rest string, body []byte) {
	switch r.Method + " " + rest {
	case "GET ":
		answer(w, http.StatusOK, c.info())
	case "GET config":
		answer(w, http.StatusOK, c.config)
	case "GET status":
		answer(w, http.StatusOK, c.status())
	case "PUT pause":
		c.state = "PAUSED"
		w.WriteHeader(http.StatusAccepted)
	case "PUT resume":
		c.state = "RUNNING"
		w.WriteHeader(http.StatusAccepted)
	case "GET offsets":
		s.advance(c, false)
		answer(w, http.StatusOK, c.offsetsAnswer())
	case "POST offsets/request":
		s.advance(c, false)
		s.request(w, c, body)
	case "GET offsets/request/status":
		s.requestStatus(w, c)
	default:
		fail(w, http.StatusNotFound, "Not Found")
	}
}

// list answers GET /connectors, with ?expand=status,info,id or without.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	var expand []string
	for _, v := range r.URL.Query()["expand"] {
		expand = append(expand, strings.Split(v, ",")...)
	}
	names := make([]string, 0, len(s.connectors))
	for n := range s.connectors {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(expand) == 0 {
		answer(w, http.StatusOK, names)
		return
	}
	out := map[string]map[string]any{}
	for _, n := range names {
		c := s.connectors[n]
		e := map[string]any{}
		for _, x := range expand {
			switch strings.TrimSpace(x) {
			case "status":
				e["status"] = c.status()
			case "info":
				e["info"] = c.info()
			case "id":
				e["id"] = map[string]string{"id": c.id, "id_type": "ID"}
			}
		}
		out[n] = e
	}
	answer(w, http.StatusOK, out)
}

func (c *connector) info() map[string]any {
	return map[string]any{"name": c.name, "config": c.config, "tasks": []map[string]any{{"connector": c.name, "task": 0}}, "type": c.typ}
}

func (c *connector) status() map[string]any {
	st := c.shownState()
	return map[string]any{
		"name":      c.name,
		"connector": map[string]string{"state": st, "worker_id": c.name, "trace": ""},
		"tasks":     []map[string]any{{"id": 0, "state": st, "worker_id": c.name, "msg": ""}},
		"type":      c.typ,
	}
}

func (c *connector) offsetsAnswer() map[string]any {
	offsets, at := c.offsets, c.observedAt
	if c.staleLeft > 0 {
		c.staleLeft--
		offsets, at = c.staleOff, c.staleAt
	}
	return map[string]any{
		"name":     c.name,
		"id":       c.id,
		"offsets":  rawOffsets(offsets),
		"metadata": map[string]string{"observed_at": at.UTC().Format(time.RFC3339Nano)},
	}
}

// rawOffsets renders entries as the array of Connect's offsets body.
func rawOffsets(entries []connectjson.OffsetEntry) json.RawMessage {
	var b struct {
		Offsets json.RawMessage `json:"offsets"`
	}
	_ = json.Unmarshal(connectjson.EncodeOffsets(entries), &b)
	if b.Offsets == nil {
		return json.RawMessage("[]")
	}
	return b.Offsets
}

// request answers POST .../offsets/request.
func (s *Server) request(w http.ResponseWriter, c *connector, body []byte) {
	if c.req != nil && c.req.phase == "PENDING" {
		fail(w, http.StatusConflict, "An alter offsets request is already in progress for connector "+c.name)
		return
	}
	var in struct {
		Type    string          `json:"type"`
		Offsets json.RawMessage `json:"offsets"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		fail(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}
	req := &offsetRequest{typ: in.Type, requestedAt: time.Now(), phase: "PENDING"}
	switch in.Type {
	case "PATCH":
		if len(in.Offsets) == 0 || string(in.Offsets) == "null" || string(in.Offsets) == "[]" {
			fail(w, http.StatusBadRequest, "offsets are required for a PATCH request")
			return
		}
		entries, err := connectjson.DecodeOffsets([]byte(`{"offsets":`+string(in.Offsets)+`}`), connectjson.DecodeOptions{})
		if err == nil {
			err = c.validate(entries)
		}
		if err != nil {
			fail(w, http.StatusBadRequest, "invalid offsets: "+err.Error())
			return
		}
		req.offsets, req.raw = entries, rawOffsets(entries)
	case "DELETE":
	default:
		fail(w, http.StatusBadRequest, "type must be PATCH or DELETE, not "+strconv.Quote(in.Type))
		return
	}
	if c.req != nil && s.opts.StatusLag > 0 {
		c.prevStatus, c.statusLag = c.statusAnswer(), s.opts.StatusLag
	}
	c.req = req
	answer(w, http.StatusAccepted, c.requestInfo())
}

func (c *connector) validate(entries []connectjson.OffsetEntry) error {
	for _, e := range entries {
		if err := connectjson.CheckFlat(e.Partition); err != nil {
			return err
		}
		if c.typ != TypeSink {
			continue
		}
		if !hasKeys(e.Partition, connectjson.SinkTopicKey, connectjson.SinkPartitionKey) || e.Offset != nil && !hasKeys(e.Offset, connectjson.SinkOffsetKey) {
			return errorString("a sink connector's partition is {kafka_topic, kafka_partition}, its offset {kafka_offset}")
		}
	}
	return nil
}

func hasKeys(m connectjson.Map, keys ...string) bool {
	for _, k := range keys {
		if !slices.ContainsFunc(m, func(f connectjson.Field) bool { return f.Key == k }) {
			return false
		}
	}
	return true
}

func (c *connector) requestInfo() map[string]any {
	out := map[string]any{"id": c.id, "name": c.name, "type": c.req.typ, "requested_at": c.req.requestedAt.UTC().Format(time.RFC3339Nano)}
	if c.req.raw != nil {
		out["offsets"] = c.req.raw
	}
	return out
}

// requestStatus answers GET .../offsets/request/status.
func (s *Server) requestStatus(w http.ResponseWriter, c *connector) {
	if c.statusLag > 0 {
		c.statusLag--
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(c.prevStatus)
		return
	}
	if c.req == nil {
		fail(w, http.StatusNotFound, "no alter offsets request found for connector "+c.name)
		return
	}
	s.advance(c, true)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(c.statusAnswer())
}

func (c *connector) statusAnswer() []byte {
	st := map[string]any{
		"request":          c.requestInfo(),
		"status":           map[string]string{"phase": c.req.phase, "message": c.req.message},
		"previous_offsets": rawOffsets(c.req.previous),
	}
	if !c.req.appliedAt.IsZero() {
		st["applied_at"] = c.req.appliedAt.UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(st)
	return b
}

// advance moves the connector's request on: a status read (poll) counts
// towards Options.PendingPolls.
func (s *Server) advance(c *connector, poll bool) {
	r := c.req
	if r == nil || r.phase != "PENDING" {
		return
	}
	if poll {
		r.polls++
	}
	if c.stayPend || r.polls <= s.opts.PendingPolls || time.Since(r.requestedAt) < s.opts.ApplyDelay {
		return
	}
	if c.failNext != "" {
		r.phase, r.message, c.failNext = "FAILED", c.failNext, ""
		return
	}
	r.previous = slices.Clone(c.offsets)
	if r.typ == "DELETE" {
		c.offsets = nil
	} else {
		c.offsets = patch(c.offsets, r.offsets)
	}
	now := time.Now()
	if s.opts.StaleReads > 0 {
		c.staleLeft, c.staleOff, c.staleAt = s.opts.StaleReads, r.previous, r.requestedAt.Add(-time.Second)
	}
	c.observedAt, r.appliedAt, r.phase = now, now, "APPLIED"
	r.message = "The offsets for this connector have been altered successfully"
}

// patch applies a PATCH as Connect does: each partition sent gets the
// offset sent, a null offset removes it, the others stay.
func patch(have, sent []connectjson.OffsetEntry) []connectjson.OffsetEntry {
	out := slices.Clone(have)
	for _, e := range sent {
		i := slices.IndexFunc(out, func(x connectjson.OffsetEntry) bool { return connectjson.Equal(x.Partition, e.Partition) })
		switch {
		case e.Offset == nil && i >= 0:
			out = slices.Delete(out, i, i+1)
		case e.Offset == nil:
		case i >= 0:
			out[i].Offset = e.Offset
		default:
			out = append(out, e)
		}
	}
	return out
}

// fail answers the Cloud API's Failure body.
func fail(w http.ResponseWriter, status int, detail string) {
	answer(w, status, map[string]any{"errors": []map[string]string{{"status": strconv.Itoa(status), "detail": detail}}})
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func unescape(p string) string {
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

type errorString string

func (e errorString) Error() string { return string(e) }
