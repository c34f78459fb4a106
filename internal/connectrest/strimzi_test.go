package connectrest

import "testing"

func TestStrimziWorker(t *testing.T) {
	for _, tc := range []struct {
		id                    string
		kind, name, namespace string
	}{
		// What kafka_connect_run.sh advertises: hostname -f, four labels.
		{"my-connect-connect-0.my-connect-connect.kafka.svc:8083", KindKafkaConnect, "my-connect", "kafka"},
		{"connect-connect-12.connect-connect.prod-eu.svc:8083", KindKafkaConnect, "connect", "prod-eu"},
		{"mm2-mirrormaker2-1.mm2-mirrormaker2.mirror.svc:8083", KindKafkaMirrorMaker2, "mm2", "mirror"},
		{"my-connect-connect-0.my-connect-connect.kafka.svc.cluster.local:8083", KindKafkaConnect, "my-connect", "kafka"},
		// Not Strimzi's.
		{"connect-1:8083", "", "", ""},
		{"10.0.3.7:8083", "", "", ""},
		{"my-connect-connect-0.other-service.kafka.svc:8083", "", "", ""},
		{"worker-0.connect.kafka.svc:8083", "", "", ""},
		{"my-connect-connect-7d9f8-abcde.my-connect-connect.kafka.svc:8083", "", "", ""},
		{"", "", "", ""},
	} {
		s, ok := StrimziWorker(tc.id)
		if ok != (tc.kind != "") || s.Kind != tc.kind || s.Name != tc.name || s.Namespace != tc.namespace {
			t.Errorf("StrimziWorker(%q) = %+v, %v; want %s %q in %q", tc.id, s, ok, tc.kind, tc.name, tc.namespace)
		}
	}
}

func TestStrimziService(t *testing.T) {
	for _, tc := range []struct {
		url                   string
		kind, name, namespace string
	}{
		{"http://my-connect-connect-api.kafka.svc:8083", KindKafkaConnect, "my-connect", "kafka"},
		{"http://my-connect-connect-api:8083", KindKafkaConnect, "my-connect", ""},
		{"https://My-Connect-connect-api.kafka.svc.cluster.local:8083/", KindKafkaConnect, "my-connect", "kafka"},
		{"http://mm2-mirrormaker2-api.mirror:8083", KindKafkaMirrorMaker2, "mm2", "mirror"},
		{"http://my-connect-connect-1.my-connect-connect.kafka.svc:8083", KindKafkaConnect, "my-connect", "kafka"},
		{"http://localhost:8083", "", "", ""},
		{"http://127.0.0.1:8083", "", "", ""},
		{"http://connect.example.com:8083", "", "", ""},
		{"http://connect-api.kafka.svc:8083", "", "", ""},
	} {
		s, ok := StrimziService(tc.url)
		if ok != (tc.kind != "") || s.Kind != tc.kind || s.Name != tc.name || s.Namespace != tc.namespace {
			t.Errorf("StrimziService(%q) = %+v, %v; want %s %q in %q", tc.url, s, ok, tc.kind, tc.name, tc.namespace)
		}
	}
}

func TestDetectStrimzi(t *testing.T) {
	plain := Status{Connector: ConnectorState{State: StateRunning, WorkerID: "connect-1:8083"}}
	onTask := Status{Connector: ConnectorState{State: StateRunning, WorkerID: "connect-1:8083"},
		Tasks: []TaskState{{ID: 0, State: StateRunning, WorkerID: "c-connect-1.c-connect.ns.svc:8083"}}}
	if s, ok := DetectStrimzi([]string{"http://localhost:8083"}, []Status{plain}); ok {
		t.Errorf("plain workers detected as %+v", s)
	}
	if s, ok := DetectStrimzi([]string{"http://localhost:8083"}, []Status{plain, onTask}); !ok || s.Name != "c" || s.Namespace != "ns" {
		t.Errorf("a task on a Strimzi worker: %+v, %v", s, ok)
	}
	// The workers come first: they carry the namespace.
	if s, ok := DetectStrimzi([]string{"http://c-connect-api:8083"}, []Status{onTask}); !ok || s.Namespace != "ns" {
		t.Errorf("worker and URL: %+v, %v", s, ok)
	}
	if s, ok := DetectStrimzi([]string{"http://c-connect-api:8083"}, nil); !ok || s.Name != "c" || s.Namespace != "" {
		t.Errorf("URL only: %+v, %v", s, ok)
	}
}
