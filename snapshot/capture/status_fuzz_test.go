package capture

import (
	"strings"
	"testing"
)

// FuzzStatusRecord: any key and value on a status topic (written by
// workers of any version, or by anything else) is kept as a status,
// left out with a warning, or ignored; nothing panics.
func FuzzStatusRecord(f *testing.F) {
	f.Add("status-connector-jdbc-source", []byte(`{"state":"RUNNING","trace":null,"worker_id":"10.0.0.1:8083","generation":3}`))
	f.Add("status-task-jdbc-source-0", []byte(`{"state":"FAILED","trace":"java.lang.RuntimeException","worker_id":"w","generation":1}`))
	f.Add("status-task-a-b--1", []byte(`{"state":"RUNNING"}`))
	f.Add("status-topic-clicks:connector-s3", []byte(`{"topic":{"name":"clicks"}}`))
	f.Add("status-connector-x", []byte(`{"state":"DESTROYED"}`))
	f.Add("status-connector-x", []byte(`not json`))
	f.Fuzz(func(t *testing.T, key string, value []byte) {
		st := &Statuses{Connectors: map[string]*ConnectorStatus{}}
		st.add(key, value)
		name, task, ok := statusKey(key)
		if !ok {
			if len(st.Connectors) != 0 || len(st.Warnings) != 0 {
				t.Fatalf("key %q is not a status key, yet: %+v", key, st)
			}
			return
		}
		if task < -1 || name == "" || !strings.Contains(key, name) {
			t.Fatalf("statusKey(%q) = %q, %d", key, name, task)
		}
	})
}
