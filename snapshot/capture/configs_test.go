package capture

import (
	"context"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestCaptureConfigs: a capture keeps each connector's config as the
// config topic last holds it, placeholders as placeholders, a value of
// another JSON type as the worker reads it; a deleted connector has none.
func TestCaptureConfigs(t *testing.T) {
	kc := testkit.Kfake(t, kfake.NumBrokers(1), kfake.SeedTopics(1, snapshot.DefaultOffsetsTopic, snapshot.DefaultConfigTopic))
	cl := testkit.Client(t, kc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	recs := []struct{ key, value string }{
		{"connector-src", `{"properties":{"connector.class":"FileStreamSource","name":"src","tasks.max":"1"}}`},
		{"connector-src", `{"properties":{"connector.class":"FileStreamSource","name":"src","tasks.max":"2","file.password":"${file:/s.properties:pw}"}}`},
		{"target-state-src", `{"state":"PAUSED","state.v2":"STOPPED"}`},
		{"connector-odd", `{"properties":{"connector.class":"X","name":"odd","tasks.max":3,"escaped":"a\"b\u00e9"}}`},
		{"connector-gone", `{"properties":{"connector.class":"Y","name":"gone"}}`},
		{"connector-gone", ""},
	}
	for _, r := range recs {
		rec := &kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte(r.key)}
		if r.value != "" {
			rec.Value = []byte(r.value)
		}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := Capture(ctx, cl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"src": {"connector.class": "FileStreamSource", "name": "src", "tasks.max": "2", "file.password": "${file:/s.properties:pw}"},
		"odd": {"connector.class": "X", "name": "odd", "tasks.max": "3", "escaped": "a\"b\u00e9"},
	}
	got := map[string]map[string]string{}
	for _, c := range snap.Connectors {
		got[c.Name] = c.Config
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configs = %v, want %v", got, want)
	}
	configs, err := ReadConfigs(ctx, cl, snapshot.DefaultConfigTopic)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		if !maps.Equal(configs[name].Config, w) {
			t.Errorf("ReadConfigs %s = %v, want %v", name, configs[name].Config, w)
		}
	}
}
