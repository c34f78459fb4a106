package deploy

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The drill alert fires when no drill passed for 26 hours: a day of the
// default @daily --drill-schedule and the time a drill takes; its
// max_over_time window spans that, and the chart and the ConfigMap set
// the schedule it assumes.
func TestDrillAlert(t *testing.T) {
	docs := readYAML(t, "prometheus/offsetkeeper-alerts.yaml")
	var expr string
	for _, g := range list(docs[0], "spec", "groups") {
		for _, r := range list(g, "rules") {
			if str(r, "alert") == "OffsetkeeperNoSuccessfulDrill" {
				expr = str(r, "expr")
			}
		}
	}
	if expr == "" {
		t.Fatal("no alert OffsetkeeperNoSuccessfulDrill")
	}
	m := regexp.MustCompile(`> (\d+)$`).FindStringSubmatch(strings.TrimSpace(expr))
	n, _ := strconv.Atoi(m2(m))
	if got := time.Duration(n) * time.Second; got != 26*time.Hour {
		t.Errorf("OffsetkeeperNoSuccessfulDrill fires after %v, want 26h", got)
	}
	for _, d := range rangeOf(t, "OffsetkeeperNoSuccessfulDrill", expr, "offsetkeeper_drill_last_success_timestamp_seconds") {
		if d < 26*time.Hour {
			t.Errorf("OffsetkeeperNoSuccessfulDrill looks back %v, less than the 26h it alerts on", d)
		}
	}
	cm := readYAML(t, "kubernetes/configmap.yaml")[0]
	if got := str(cm, "data", "OFFSETKEEPER_DRILL_SCHEDULE"); got != "@daily" {
		t.Errorf("deploy/kubernetes/configmap.yaml OFFSETKEEPER_DRILL_SCHEDULE %q, want @daily (the alert assumes it)", got)
	}
	values := readYAML(t, "helm/offsetkeeper/values.yaml")[0]
	if got := str(values, "drillSchedule"); got != "@daily" {
		t.Errorf("chart values drillSchedule %q, want @daily", got)
	}
}
