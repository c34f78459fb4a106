package main

import (
	"context"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestSecretKey is the masking rule of show: which config keys' values
// are masked.
func TestSecretKey(t *testing.T) {
	for _, tc := range []struct {
		key    string
		secret bool
	}{
		{"connection.password", true},
		{"database.password", true},
		{"ssl.keystore.password", true},
		{"PASSWORD", true},
		{"db.passwd", true},
		{"aws.secret.access.key", true},
		{"client.secret", true},
		{"secret", true},
		{"auth.token", true},
		{"github.access.token", true},
		{"bearer_token", true},
		{"gcs.credentials.json", true},
		{"aws.credentials.provider.class", true},
		{"credentials", true},
		{"api.key", true},
		{"apikey", true},
		{"datadog.api_key", true},
		{"x-api-key", true},
		{"apiKey", true},
		{"producer.override.sasl.jaas.config", true},
		{"value.converter.basic.auth.user.info", true},
		// Not secrets: converter settings and the like.
		{"key.converter", false},
		{"value.converter", false},
		{"key.converter.schemas.enable", false},
		{"value.converter.schema.registry.url", false},
		{"key.ignore", false},
		{"primary.key.fields", false},
		{"message.key.columns", false},
		{"connector.class", false},
		{"name", false},
		{"topics", false},
		{"tasks.max", false},
		{"connection.url", false},
		{"connection.user", false},
		{"", false},
	} {
		if got := restore.SecretValue(tc.key, "x"); got != tc.secret {
			t.Errorf("SecretValue(%q, x) = %v, want %v", tc.key, got, tc.secret)
		}
	}
	for _, tc := range []struct{ key, value, want string }{
		{"connection.password", "hunter2", masked},
		{"connection.password", "${file:/etc/kafka/secrets.properties:db.password}", "${file:/etc/kafka/secrets.properties:db.password}"},
		{"connection.password", "${vault:a:b}${env:C}", "${vault:a:b}${env:C}"},
		{"connection.password", "pre${file:/x:y}", masked},
		{"connection.password", "", ""},
		{"key.converter", "org.apache.kafka.connect.json.JsonConverter", "org.apache.kafka.connect.json.JsonConverter"},
	} {
		if got := maskValue(tc.key, tc.value); got != tc.want {
			t.Errorf("maskValue(%q, %q) = %q, want %q", tc.key, tc.value, got, tc.want)
		}
	}
}

// TestShowMasksSecrets: show's text and JSON mask the values of
// secret-looking keys, unless --show-secrets, and leave the store's
// snapshot as it is.
func TestShowMasksSecrets(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	snap := (&snapshot.Snapshot{
		Version: snapshot.Version, CreatedAt: time.Now(), ClusterID: "c", Reason: snapshot.ReasonManual,
		Connectors: []snapshot.Connector{{Name: "jdbc", Type: snapshot.TypeSource, HasConfig: true, TargetState: snapshot.StateStarted, Tasks: 1,
			Config: map[string]string{"name": "jdbc", "connection.password": "hunter2", "key.converter": "org.apache.kafka.connect.storage.StringConverter",
				"api.key": "k-123", "db.user.password": "${file:/s.properties:pw}"}}},
		SinkGroups: []snapshot.SinkGroup{},
	}).WithSourceOffsets([]snapshot.SourceOffset{})
	if _, err := st.Snapshots().Put(ctx, snap); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tc := range []struct {
		args   []string
		secret bool
	}{
		{[]string{"show", "--store", dir, "latest"}, false},
		{[]string{"show", "--store", dir, "latest", "--output", "json"}, false},
		{[]string{"show", "--store", dir, "latest", "--connector", "jdbc", "--output", "json"}, false},
		{[]string{"show", "--store", dir, "latest", "--show-secrets"}, true},
		{[]string{"show", "--store", dir, "latest", "--output", "json", "--show-secrets"}, true},
	} {
		code, out, errs := runCLI(t, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, errs)
		}
		for _, v := range []string{"hunter2", "k-123"} {
			if strings.Contains(out, v) != tc.secret {
				t.Errorf("%v: shows %q: %v, want %v\n%s", tc.args, v, !tc.secret, tc.secret, out)
			}
		}
		for _, v := range []string{"StringConverter", "${file:/s.properties:pw}", "connection.password", "api.key"} {
			if !strings.Contains(out, v) {
				t.Errorf("%v: %q missing\n%s", tc.args, v, out)
			}
		}
		if !tc.secret && !strings.Contains(out, masked) {
			t.Errorf("%v: no %s\n%s", tc.args, masked, out)
		}
	}
	t.Setenv("OFFSETKEEPER_SHOW_SECRETS", "true")
	if code, out, errs := runCLI(t, "show", "--store", dir, "latest"); code != 0 || strings.Contains(out, "hunter2") {
		t.Errorf("OFFSETKEEPER_SHOW_SECRETS is not command line only: exit %d\n%s\n%s", code, out, errs)
	}
}
