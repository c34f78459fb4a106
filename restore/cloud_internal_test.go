package restore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
)

func TestRestClusterDiffers(t *testing.T) {
	connect, err := connectrest.New(connectrest.Config{URLs: []string{"http://connect:8083"}})
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := connectrest.New(connectrest.Config{URLs: []string{"https://api.confluent.cloud/connect/v1/environments/env-1/clusters/lkc-1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rc              *connectrest.Client
		restID, kafkaID string
		want            bool
	}{
		{connect, "AbCd", "AbCd", false},
		{connect, "AbCd", "XyZ", true},
		{connect, "AbCd", "", true},
		{cloud, "lkc-1", "lkc-1", false},
		{cloud, "lkc-1", "lkc-2", true},
		// Only an lkc id is comparable with the id Cloud's URL names.
		{cloud, "lkc-1", "", false},
		{cloud, "lkc-1", "q5nH3vR1Tj-xo1sFw1Sx2w", false},
	} {
		if got := restClusterDiffers(tc.rc, tc.restID, tc.kafkaID); got != tc.want {
			t.Errorf("cloud %v: restClusterDiffers(%q, %q) = %v, want %v", tc.rc.Cloud(), tc.restID, tc.kafkaID, got, tc.want)
		}
	}
}

func TestCloudLines(t *testing.T) {
	if got := progressLine(ConnectResult{Connector: "c"}); got != "" {
		t.Errorf("progressLine of a Connect answer = %q", got)
	}
	got := progressLine(ConnectResult{Connector: "c", Phases: []string{"PENDING", "APPLIED"}, Took: 2140 * time.Millisecond})
	if got != "offsets request for connector c: PENDING ... APPLIED in 2.1s" {
		t.Errorf("progressLine = %q", got)
	}
	if note := pendingNote(fmt.Errorf("x: %w", connectrest.ErrRequestPending), "u-1"); !strings.Contains(note, "may still be applied") || !strings.Contains(note, "u-1") {
		t.Errorf("pendingNote = %q", note)
	}
	if note := pendingNote(errors.New("other"), "u-1"); note != "" {
		t.Errorf("pendingNote of another error = %q", note)
	}
}

func TestValidateCloud(t *testing.T) {
	cloud, err := connectrest.New(connectrest.Config{URLs: []string{"https://api.confluent.cloud/connect/v1/environments/env-1/clusters/lkc-1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Via: ViaConnect, StopConnectors: true}, "--stop-connectors"},
		{Request{Via: ViaKafka}, "--via connect"},
		{Request{Via: ViaConnect}, ""},
	} {
		r := &run{Env: Env{Connect: cloud}, req: tc.req}
		err := r.validateCloud()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.req, err, tc.want)
		}
	}
}
