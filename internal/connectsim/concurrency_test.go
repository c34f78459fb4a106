package connectsim_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestRequestsAsAHerder: while a request of the herder's tick thread is
// under way (HoldHerder), a stop waits for it, as DistributedHerder queues
// stopConnector, but a resume, a pause and the reads are answered, as
// AbstractHerder answers pause and resume on the REST thread with one
// target-state write (Kafka 3.8).
func TestRequestsAsAHerder(t *testing.T) {
	cl, _, srv := seeded(t, connectsim.Options{})
	release := connectsim.HoldHerder(srv)
	stopped := make(chan int, 1)
	go func() {
		code, _ := call(t, http.MethodPut, connURL(srv.URL, connectdemo.ConnJDBC, "/stop"), "")
		stopped <- code
	}()
	if code, resp := call(t, http.MethodPut, connURL(srv.URL, connectdemo.ConnJDBC, "/pause"), ""); code != 202 {
		t.Fatalf("pause while the herder is busy: %d %s", code, resp)
	}
	if code, resp := call(t, http.MethodPut, connURL(srv.URL, connectdemo.ConnJDBC, "/resume"), ""); code != 202 {
		t.Fatalf("resume while the herder is busy: %d %s", code, resp)
	}
	if code, resp := call(t, http.MethodGet, connURL(srv.URL, connectdemo.ConnJDBC, "/status"), ""); code != 200 {
		t.Fatalf("status while the herder is busy: %d %s", code, resp)
	}
	select {
	case code := <-stopped:
		t.Fatalf("stop answered %d while the herder was busy", code)
	default:
	}
	release()
	if code := <-stopped; code != 204 {
		t.Fatalf("stop after the herder is free: %d", code)
	}
	configs, err := capture.ReadConfigs(context.Background(), cl, connectdemo.DefaultConfigsTopic)
	if err != nil {
		t.Fatal(err)
	}
	if c := configs[connectdemo.ConnJDBC]; !c.Stopped() {
		t.Errorf("after the stop the config topic says %s with %d tasks", c.TargetState, c.Tasks)
	}
}

// TestConcurrentResumes: many connectors stopped, then resumed by many
// requests at once: every one is answered 202 and the config topic, read
// whole, says each STARTED with its tasks; a config written to the topic
// directly meanwhile is seen by the next request, as the server reads
// what was written since its last read.
func TestConcurrentResumes(t *testing.T) {
	cl, _, srv := seeded(t, connectsim.Options{})
	ctx := context.Background()
	const n = 40
	var recs []*kgo.Record
	for i := range n {
		name := fmt.Sprintf("bulk-%02d", i)
		recs = append(recs,
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("target-state-" + name), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`)},
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-" + name),
				Value: []byte(`{"properties":{"connector.class":"FileStreamSource","file":"/tmp/` + name + `","topic":"t","tasks.max":"1","name":"` + name + `"}}`)},
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("commit-" + name), Value: []byte(`{"tasks":0}`)})
	}
	// A first request, so that the server's view predates the records.
	if code, resp := call(t, http.MethodGet, srv.URL+"/connectors", ""); code != 200 {
		t.Fatalf("list: %d %s", code, resp)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			codes[i], _ = call(t, http.MethodPut, connURL(srv.URL, fmt.Sprintf("bulk-%02d", i), "/resume"), "")
		})
	}
	wg.Wait()
	configs, err := capture.ReadConfigs(ctx, cl, connectdemo.DefaultConfigsTopic)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("bulk-%02d", i)
		if codes[i] != 202 {
			t.Errorf("resume of %s: %d", name, codes[i])
		}
		if c := configs[name]; c.TargetState != "STARTED" || c.Tasks != 1 {
			t.Errorf("after the resume the config topic says %s %s with %d tasks", name, c.TargetState, c.Tasks)
		}
	}
}
