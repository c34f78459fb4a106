package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// metrics are the names the daemon exports; the dashboard and the alerts may
// use these and nothing else.
var metrics = map[string]bool{
	"offsetkeeper_runs_total":                        true,
	"offsetkeeper_last_success_timestamp_seconds":    true,
	"offsetkeeper_run_duration_seconds":              true, // histogram
	"offsetkeeper_snapshot_size_bytes":               true,
	"offsetkeeper_source_partitions":                 true,
	"offsetkeeper_sink_partitions":                   true,
	"offsetkeeper_retention_deletions_total":         true,
	"offsetkeeper_sink_offsets_moved_backwards":      true,
	"offsetkeeper_source_offsets_moved_backwards":    true,
	"offsetkeeper_leader":                            true,
	"offsetkeeper_build_info":                        true,
	"offsetkeeper_snapshot_warnings":                 true,
	"offsetkeeper_store_snapshots":                   true,
	"offsetkeeper_store_newest_snapshot_age_seconds": true,
	"offsetkeeper_store_list_errors":                 true,
	// The journal (daemon/journal.go).
	"offsetkeeper_journal_lag_seconds":                  true,
	"offsetkeeper_journal_last_flush_timestamp_seconds": true,
	"offsetkeeper_journal_written_bytes_total":          true,
	"offsetkeeper_journal_errors_total":                 true,
	"offsetkeeper_journal_epoch_start_failures_total":   true,
	"offsetkeeper_journal_stopped":                      true,
	"offsetkeeper_reset_events_total":                   true,
	// Restore drills (daemon/drill.go).
	"offsetkeeper_drill_last_success_timestamp_seconds": true,
	"offsetkeeper_drill_rto_seconds":                    true,
	"offsetkeeper_drill_failed_checks":                  true,
	"offsetkeeper_drills_total":                         true,
	// Store checks (daemon/storecheck.go).
	"offsetkeeper_store_verify_last_run_timestamp_seconds": true,
	"offsetkeeper_store_verify_failed":                     true,
	"offsetkeeper_store_verifies_total":                    true,
	// The expiry guard (daemon/sinkexpiry.go).
	"offsetkeeper_sink_offsets_expire_seconds": true,
	// The warm standby (daemon/standby.go).
	"offsetkeeper_standby_lag_seconds":                    true,
	"offsetkeeper_standby_last_applied_timestamp_seconds": true,
	"offsetkeeper_standby_connectors":                     true,
	"offsetkeeper_standby_translation_misses":             true,
	"offsetkeeper_standby_fenced":                         true,
	"offsetkeeper_standby_syncs_total":                    true,
}

var metricRef = regexp.MustCompile(`\boffsetkeeper_[a-z0-9_]+`)

// defaultSchedule is the daemon's --schedule default: the ConfigMap, the
// systemd env file, the alerts and the dashboard all assume it.
const defaultSchedule = "@hourly"

// scheduleInterval is the time between runs of the default schedule.
const scheduleInterval = time.Hour

// rangeOf returns the range selectors ([3h]) applied to metric in expr.
func rangeOf(t *testing.T, where, expr, metric string) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, m := range regexp.MustCompile(regexp.QuoteMeta(metric)+`[a-z_]*(?:\{[^}]*\})?\[([^\]]+)\]`).FindAllStringSubmatch(expr, -1) {
		d, err := model.ParseDuration(m[1])
		if err != nil {
			t.Errorf("%s: range [%s] of %s is not a fixed duration; at the %s schedule a short window shows nothing between runs", where, m[1], metric, defaultSchedule)
			continue
		}
		out = append(out, time.Duration(d))
	}
	return out
}

// quantityBytes parses a Kubernetes memory quantity such as 256Mi.
func quantityBytes(t *testing.T, q string) float64 {
	t.Helper()
	for suffix, mult := range map[string]float64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30} {
		if n, ok := strings.CutSuffix(q, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil {
				t.Fatalf("quantity %q: %v", q, err)
			}
			return v * mult
		}
	}
	t.Fatalf("quantity %q: want Ki, Mi or Gi", q)
	return 0
}

// goMemLimitBytes parses a GOMEMLIMIT value such as 230MiB.
func goMemLimitBytes(t *testing.T, s string) float64 {
	t.Helper()
	for suffix, mult := range map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil {
				t.Fatalf("GOMEMLIMIT %q: %v", s, err)
			}
			return v * mult
		}
	}
	t.Fatalf("GOMEMLIMIT %q: want a KiB, MiB or GiB value", s)
	return 0
}

// checkMetricNames reports metric names in expr that the daemon does not export.
func checkMetricNames(t *testing.T, where, expr string, used map[string]bool) {
	t.Helper()
	for _, name := range metricRef.FindAllString(expr, -1) {
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && b == "offsetkeeper_run_duration_seconds" {
				base = b
			}
		}
		if !metrics[base] {
			t.Errorf("%s: unknown metric %s in %q", where, name, expr)
		}
		used[base] = true
	}
}

type doc = map[string]any

// readYAML decodes every document of a YAML file.
func readYAML(t *testing.T, path string) []doc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []doc
	for {
		var d doc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
}

// get walks a decoded document: get(d, "spec", "template", "spec").
func get(d any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := d.(doc)
			if !ok {
				return nil
			}
			d = m[k]
		case int:
			s, ok := d.([]any)
			if !ok || k >= len(s) {
				return nil
			}
			d = s[k]
		}
	}
	return d
}

func str(d any, path ...any) string {
	s, _ := get(d, path...).(string)
	return s
}

func list(d any, path ...any) []any {
	s, _ := get(d, path...).([]any)
	return s
}

// manifests returns every YAML document under dir by kind.
func manifests(t *testing.T, dir string) map[string][]doc {
	t.Helper()
	byKind := make(map[string][]doc)
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() && path == "helm" {
			return filepath.SkipDir // templates, not manifests: helm_test.go renders them
		}
		if err != nil || e.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
			return err
		}
		for _, d := range readYAML(t, path) {
			kind := str(d, "kind")
			if str(d, "apiVersion") == "" || kind == "" {
				t.Errorf("%s: document without apiVersion and kind", path)
			}
			if kind != "Kustomization" && str(d, "metadata", "name") == "" {
				t.Errorf("%s: %s without metadata.name", path, kind)
			}
			d["_file"] = path
			byKind[kind] = append(byKind[kind], d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byKind
}

func one(t *testing.T, byKind map[string][]doc, kind, file string) doc {
	t.Helper()
	for _, d := range byKind[kind] {
		if filepath.ToSlash(d["_file"].(string)) == file {
			return d
		}
	}
	t.Fatalf("no %s in %s", kind, file)
	return nil
}

func TestKustomizationsListExistingFiles(t *testing.T) {
	byKind := manifests(t, ".")
	if len(byKind["Kustomization"]) < 2 {
		t.Fatalf("found %d kustomizations, want base and strimzi", len(byKind["Kustomization"]))
	}
	for _, k := range byKind["Kustomization"] {
		dir := filepath.Dir(k["_file"].(string))
		var refs []string
		for _, r := range list(k, "resources") {
			refs = append(refs, r.(string))
		}
		for _, p := range list(k, "patches") {
			if path := str(p, "path"); path != "" {
				refs = append(refs, path)
			}
		}
		for _, r := range refs {
			fi, err := os.Stat(filepath.Join(dir, r))
			if err != nil {
				t.Errorf("%s lists %s: %v", k["_file"], r, err)
				continue
			}
			if fi.IsDir() {
				if _, err := os.Stat(filepath.Join(dir, r, "kustomization.yaml")); err != nil {
					t.Errorf("%s lists directory %s without a kustomization.yaml", k["_file"], r)
				}
			}
		}
	}
	// Every manifest in the base is listed, but for the Secret example.
	base := one(t, byKind, "Kustomization", "kubernetes/kustomization.yaml")
	entries, _ := os.ReadDir("kubernetes")
	for _, e := range entries {
		if e.Name() == "kustomization.yaml" || e.Name() == "secret.example.yaml" {
			continue
		}
		if !slices.Contains(list(base, "resources"), any(e.Name())) {
			t.Errorf("kubernetes/%s is not in kustomization.yaml", e.Name())
		}
	}
}

func TestKubernetesBase(t *testing.T) {
	byKind := manifests(t, "kubernetes")
	dep := one(t, byKind, "Deployment", "kubernetes/deployment.yaml")
	if r, _ := get(dep, "spec", "replicas").(int); r != 2 {
		t.Errorf("replicas = %v, want 2 (leader election)", get(dep, "spec", "replicas"))
	}
	pod := get(dep, "spec", "template", "spec")
	if str(pod, "securityContext", "seccompProfile", "type") != "RuntimeDefault" || get(pod, "securityContext", "runAsNonRoot") != true {
		t.Errorf("pod securityContext: %v", get(pod, "securityContext"))
	}
	sa := one(t, byKind, "ServiceAccount", "kubernetes/serviceaccount.yaml")
	if str(pod, "serviceAccountName") != str(sa, "metadata", "name") {
		t.Errorf("serviceAccountName %q is not the ServiceAccount", str(pod, "serviceAccountName"))
	}
	c := get(pod, "containers", 0)
	sc := get(c, "securityContext")
	if get(sc, "readOnlyRootFilesystem") != true || get(sc, "allowPrivilegeEscalation") != false ||
		!slices.Equal(list(sc, "capabilities", "drop"), []any{"ALL"}) {
		t.Errorf("container securityContext: %v", sc)
	}
	if p, _ := get(c, "ports", 0, "containerPort").(int); p != 9464 || str(c, "ports", 0, "name") != "metrics" {
		t.Errorf("ports: %v", get(c, "ports"))
	}
	// Liveness and startup on /livez (the scheduler ticks; nothing a
	// restart cannot fix), readiness on /readyz (Kafka and the store).
	for probe, path := range map[string]string{"livenessProbe": "/livez", "startupProbe": "/livez", "readinessProbe": "/readyz"} {
		if str(c, probe, "httpGet", "path") != path || str(c, probe, "httpGet", "port") != "metrics" {
			t.Errorf("%s: %v", probe, get(c, probe))
		}
	}
	if get(c, "resources", "requests") == nil || get(c, "resources", "limits", "memory") == nil {
		t.Errorf("resources: %v", get(c, "resources"))
	}
	// GOMEMLIMIT about 90% of the memory limit: the whole limit (a
	// resourceFieldRef) leaves the GC no room before the OOM kill.
	var memLimit string
	for _, e := range list(c, "env") {
		if str(e, "name") == "GOMEMLIMIT" {
			memLimit = str(e, "value")
		}
	}
	if limit, soft := quantityBytes(t, str(c, "resources", "limits", "memory")), goMemLimitBytes(t, memLimit); soft < 0.85*limit || soft > 0.95*limit {
		t.Errorf("GOMEMLIMIT %q is not about 90%% of the memory limit %s", memLimit, str(c, "resources", "limits", "memory"))
	}
	pdb := one(t, byKind, "PodDisruptionBudget", "kubernetes/poddisruptionbudget.yaml")
	if str(pdb, "spec", "unhealthyPodEvictionPolicy") != "AlwaysAllow" {
		t.Errorf("PodDisruptionBudget: unhealthyPodEvictionPolicy %q, want AlwaysAllow (an unready pod must not block drains)", str(pdb, "spec", "unhealthyPodEvictionPolicy"))
	}
	if slices.Contains(list(c, "args"), any("daemon")) == false {
		t.Errorf("args: %v", get(c, "args"))
	}

	cm := one(t, byKind, "ConfigMap", "kubernetes/configmap.yaml")
	if str(c, "envFrom", 0, "configMapRef", "name") != str(cm, "metadata", "name") {
		t.Errorf("envFrom does not name the ConfigMap")
	}
	for _, k := range []string{"OFFSETKEEPER_BROKERS", "OFFSETKEEPER_STORE", "OFFSETKEEPER_SCHEDULE", "OFFSETKEEPER_KEEP_LAST"} {
		if str(cm, "data", k) == "" {
			t.Errorf("ConfigMap has no %s", k)
		}
	}
	if s := str(cm, "data", "OFFSETKEEPER_SCHEDULE"); s != defaultSchedule {
		t.Errorf("OFFSETKEEPER_SCHEDULE = %q, want the default %s the alerts assume", s, defaultSchedule)
	}
	for k := range get(cm, "data").(doc) {
		if strings.Contains(k, "PASSWORD") || strings.Contains(k, "TOKEN") {
			t.Errorf("ConfigMap holds a secret: %s", k)
		}
	}

	secret := one(t, byKind, "Secret", "kubernetes/secret.example.yaml")
	var ref any
	for _, e := range list(c, "env") {
		if str(e, "name") == "OFFSETKEEPER_SASL_PASSWORD" {
			ref = get(e, "valueFrom", "secretKeyRef")
		}
	}
	if str(ref, "name") != str(secret, "metadata", "name") || get(secret, "stringData", str(ref, "key")) == nil || str(ref, "key") != "OFFSETKEEPER_SASL_PASSWORD" {
		t.Errorf("OFFSETKEEPER_SASL_PASSWORD comes from %v, not from the example Secret", ref)
	}

	svc := one(t, byKind, "Service", "kubernetes/service.yaml")
	if p, _ := get(svc, "spec", "ports", 0, "port").(int); p != 9464 || str(svc, "spec", "ports", 0, "name") != "metrics" {
		t.Errorf("Service ports: %v", get(svc, "spec", "ports"))
	}
	podLabels := get(dep, "spec", "template", "metadata", "labels").(doc)
	for k, v := range get(svc, "spec", "selector").(doc) {
		if podLabels[k] != v {
			t.Errorf("Service selector %s=%v does not match the pods", k, v)
		}
	}
	sm := one(t, byKind, "ServiceMonitor", "kubernetes/servicemonitor.yaml")
	svcLabels := get(svc, "metadata", "labels").(doc)
	for k, v := range get(sm, "spec", "selector", "matchLabels").(doc) {
		if svcLabels[k] != v {
			t.Errorf("ServiceMonitor selector %s=%v does not match the Service", k, v)
		}
	}
	if str(sm, "spec", "endpoints", 0, "port") != "metrics" {
		t.Errorf("ServiceMonitor port: %v", get(sm, "spec", "endpoints"))
	}
}

func TestStrimziUser(t *testing.T) {
	byKind := manifests(t, "strimzi")
	user := one(t, byKind, "KafkaUser", "strimzi/kafkauser.yaml")
	if str(user, "metadata", "labels", "strimzi.io/cluster") == "" || str(user, "spec", "authorization", "type") != "simple" {
		t.Fatalf("KafkaUser: %v", user)
	}
	type grant struct{ typ, name, pattern, op string }
	have := map[grant]bool{}
	for _, a := range list(user, "spec", "authorization", "acls") {
		for _, op := range list(a, "operations") {
			have[grant{str(a, "resource", "type"), str(a, "resource", "name"), str(a, "resource", "patternType"), op.(string)}] = true
		}
	}
	// The Connect topics: the KafkaConnect's, or Strimzi's defaults where
	// its spec.config names none; the ConfigMap patch and the ACLs match.
	connect := one(t, byKind, "KafkaConnect", "strimzi/kafka-connect.yaml")
	offsets := cmpOr(str(connect, "spec", "config", "offset.storage.topic"), "connect-cluster-offsets")
	configs := cmpOr(str(connect, "spec", "config", "config.storage.topic"), "connect-cluster-configs")
	if offsets != "connect-cluster-offsets" || configs != "connect-cluster-configs" || cmpOr(str(connect, "spec", "config", "group.id"), "connect-cluster") != "connect-cluster" {
		t.Errorf("KafkaConnect does not use Strimzi's default topics and group: %v", get(connect, "spec", "config"))
	}
	patch := one(t, byKind, "ConfigMap", "strimzi/patch-configmap.yaml")
	if str(patch, "data", "OFFSETKEEPER_OFFSETS_TOPIC") != offsets || str(patch, "data", "OFFSETKEEPER_CONFIG_TOPIC") != configs {
		t.Errorf("patch-configmap.yaml topics %q %q, want %q %q", str(patch, "data", "OFFSETKEEPER_OFFSETS_TOPIC"), str(patch, "data", "OFFSETKEEPER_CONFIG_TOPIC"), offsets, configs)
	}
	for _, g := range []grant{
		{"topic", offsets, "literal", "Describe"},
		{"topic", offsets, "literal", "Read"},
		{"topic", configs, "literal", "Describe"},
		{"topic", configs, "literal", "Read"},
		{"group", "connect-", "prefix", "Describe"},
		{"cluster", "", "", "Describe"},
		{"topic", offsets, "literal", "Write"},
		{"group", "connect-", "prefix", "Read"},
		{"transactionalId", "offsetkeeper-restore-", "prefix", "Write"},
		{"group", "offsetkeeper-leader-", "prefix", "Read"},
		{"topic", "__offsetkeeper_leader", "literal", "Read"},
		{"topic", offsets, "literal", "DescribeConfigs"},
		{"group", "connect-", "prefix", "Delete"},
	} {
		if !have[g] {
			t.Errorf("KafkaUser lacks %+v", g)
		}
	}
	for g := range have {
		if g.op == "All" || g.op == "Alter" || g.op == "AlterConfigs" || g.op == "Create" {
			t.Errorf("KafkaUser grants more than needed: %+v", g)
		}
	}
	topic := one(t, byKind, "KafkaTopic", "strimzi/kafkatopic.yaml")
	if str(topic, "spec", "topicName") != "__offsetkeeper_leader" || get(topic, "spec", "partitions") != 1 {
		t.Errorf("leader KafkaTopic: %v", get(topic, "spec"))
	}
	for g := range have {
		if g.typ == "topic" && g.pattern == "literal" && strings.HasPrefix(g.name, "connect-") && g.name != offsets && g.name != configs {
			t.Errorf("KafkaUser grants %+v on a topic the KafkaConnect does not use", g)
		}
	}
	ex := one(t, byKind, "KafkaConnector", "strimzi/kafkaconnector.example.yaml")
	if str(ex, "metadata", "labels", "strimzi.io/cluster") != str(connect, "metadata", "name") ||
		!slices.Contains([]string{"running", "paused", "stopped"}, str(ex, "spec", "state")) ||
		str(ex, "spec", "alterOffsets", "fromConfigMap", "name") == "" || str(ex, "spec", "listOffsets", "toConfigMap", "name") == "" {
		t.Errorf("KafkaConnector example: %v", get(ex, "spec"))
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana/offsetkeeper-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard without title, uid or panels")
	}
	used := map[string]bool{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			checkMetricNames(t, "panel "+p.Title, tg.Expr, used)
			// Runs happen once per schedule interval: a run-duration
			// window must hold two of them, or the panel is empty.
			for _, d := range rangeOf(t, "panel "+p.Title, tg.Expr, "offsetkeeper_run_duration_seconds") {
				if d < 2*scheduleInterval {
					t.Errorf("panel %s: window %v of the run duration holds fewer than two runs of the %s schedule", p.Title, d, defaultSchedule)
				}
			}
		}
	}
	for _, v := range d.Templating.List {
		checkMetricNames(t, "variable", v.Definition, used)
	}
	for m := range metrics {
		if !used[m] {
			t.Errorf("dashboard does not show %s", m)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		// Check the queries' syntax as recording rules, with Grafana's
		// variables replaced.
		var rules strings.Builder
		rules.WriteString("groups:\n- name: dashboard\n  rules:\n")
		r := strings.NewReplacer("$__rate_interval", "5m", "$job", ".*")
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				q, _ := json.Marshal(r.Replace(tg.Expr))
				rules.WriteString("  - record: dashboard:query\n    expr: " + string(q) + "\n")
			}
		}
		promtoolCheckRules(t, promtool, rules.String())
	}
}

func TestAlerts(t *testing.T) {
	docs := readYAML(t, "prometheus/offsetkeeper-alerts.yaml")
	if len(docs) != 1 || str(docs[0], "kind") != "PrometheusRule" {
		t.Fatalf("want one PrometheusRule, got %d documents", len(docs))
	}
	alerts := map[string]bool{}
	used := map[string]bool{}
	for _, g := range list(docs[0], "spec", "groups") {
		for _, r := range list(g, "rules") {
			name := str(r, "alert")
			alerts[name] = true
			checkMetricNames(t, name, str(r, "expr"), used)
			if str(r, "labels", "severity") == "" || str(r, "annotations", "summary") == "" || str(r, "annotations", "description") == "" {
				t.Errorf("alert %s lacks severity, summary or description", name)
			}
			checkRunbookURL(t, name, str(r, "annotations", "runbook_url"))
			expr := str(r, "expr")
			switch name {
			case "OffsetkeeperNoRecentSnapshot", "OffsetkeeperStoreSnapshotOld":
				m := regexp.MustCompile(`> (\d+)$`).FindStringSubmatch(strings.TrimSpace(expr))
				if n, _ := strconv.Atoi(m2(m)); time.Duration(n)*time.Second < 2*scheduleInterval {
					t.Errorf("%s fires after %ss, less than two runs of the %s schedule", name, m2(m), defaultSchedule)
				}
			case "OffsetkeeperRunsFailing":
				for _, d := range rangeOf(t, name, expr, "offsetkeeper_runs_total") {
					if d < 2*scheduleInterval {
						t.Errorf("%s counts failures over %v: fewer than two runs of the %s schedule fit", name, d, defaultSchedule)
					}
				}
			}
		}
	}
	for _, a := range []string{"OffsetkeeperNoRecentSnapshot", "OffsetkeeperRunsFailing", "OffsetkeeperSinkOffsetsMovedBackwards", "OffsetkeeperNoLeader", "OffsetkeeperStoreSnapshotOld", "OffsetkeeperJournalLagging", "OffsetkeeperResetSeen", "OffsetkeeperJournalStopped", "OffsetkeeperJournalErrors", "OffsetkeeperSinkOffsetsExpiring"} {
		if !alerts[a] {
			t.Errorf("no alert %s", a)
		}
	}
	// A journal that cannot start its epoch reads a lag of 0 before its
	// first flush, and every run succeeds: alerts must watch what it
	// reports then (the snapshot storm of issue 41 went unseen).
	for _, m := range []string{"offsetkeeper_journal_stopped", "offsetkeeper_journal_errors_total"} {
		if !used[m] {
			t.Errorf("no alert watches %s", m)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		spec, err := yaml.Marshal(get(docs[0], "spec"))
		if err != nil {
			t.Fatal(err)
		}
		promtoolCheckRules(t, promtool, string(spec))
	}
}

func m2(m []string) string {
	if len(m) < 2 {
		return ""
	}
	return m[1]
}

// runbookBase is where every alert's runbook_url points: a section of a
// document under docs/.
const runbookBase = "https://github.com/offsetkeeper/offsetkeeper/blob/main/docs/"

// checkRunbookURL checks that url names a docs/ file that exists and a
// heading in it, as GitHub makes anchors of headings.
func checkRunbookURL(t *testing.T, alert, url string) {
	t.Helper()
	rest, ok := strings.CutPrefix(url, runbookBase)
	file, anchor, hasAnchor := strings.Cut(rest, "#")
	if !ok || !hasAnchor || anchor == "" {
		t.Errorf("alert %s: runbook_url %q is not %s<file>#<section>", alert, url, runbookBase)
		return
	}
	b, err := os.ReadFile(filepath.Join("..", "docs", file))
	if err != nil {
		t.Errorf("alert %s: runbook_url %q: %v", alert, url, err)
		return
	}
	for line := range strings.Lines(string(b)) {
		if h, ok := strings.CutPrefix(line, "#"); ok && githubAnchor(strings.TrimLeft(h, "#")) == anchor {
			return
		}
	}
	t.Errorf("alert %s: runbook_url %q: docs/%s has no heading for #%s", alert, url, file, anchor)
}

// githubAnchor is the anchor GitHub gives a Markdown heading.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func promtoolCheckRules(t *testing.T, promtool, rules string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(f, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s\n%s", err, out, rules)
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		// Cross-compiled on the build machine's platform, for the target's.
		"FROM --platform=$BUILDPLATFORM golang:1.26 AS build",
		"ARG TARGETOS", "ARG TARGETARCH", "GOOS=$TARGETOS GOARCH=$TARGETARCH",
		"CGO_ENABLED=0",
		// The release build: the Cloud Storage client's DirectPath gRPC
		// packages left out (12 MiB of memory at start; docs/benchmarks.md),
		// and the version and commit stamped (the build sees no .git).
		`-trimpath -tags disable_grpc_modules -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}"`,
		"./cmd/offsetkeeper",
		"FROM scratch",
		`org.opencontainers.image.source="https://github.com/offsetkeeper/offsetkeeper"`,
		`org.opencontainers.image.version="${VERSION}"`,
		`org.opencontainers.image.revision="${COMMIT}"`,
		`org.opencontainers.image.created="${CREATED}"`,
		"USER 65532:65532",
		"EXPOSE 9464",
		`ENTRYPOINT ["/offsetkeeper"]`,
		`CMD ["daemon"]`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	// Each stage that uses a build argument declares it (an ARG does not
	// cross FROM).
	for i, stage := range strings.Split(s, "\nFROM ")[1:] {
		for _, arg := range []string{"VERSION", "COMMIT", "CREATED", "TARGETOS", "TARGETARCH"} {
			if strings.Contains(stage, "${"+arg+"}") || strings.Contains(stage, "$"+arg+" ") {
				if !regexp.MustCompile(`(?m)^ARG ` + arg + `\b`).MatchString(stage) {
					t.Errorf("stage %d uses %s without ARG %s", i+1, arg, arg)
				}
			}
		}
	}
}

// TestDockerfileBuildStampsVersion builds the binary with the Dockerfile's
// own go build line (VCS stamping off, as in the image) and checks that
// 'offsetkeeper version' names the version and commit given: the image
// printed "commit unknown". Cold, the build compiles every dependency
// once more, without -race; .ci/run builds the same first (deploy/release
// --check), so that here it is mostly a link.
func TestDockerfileBuildStampsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`go build (.*) -o /out/offsetkeeper (\S+)`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("no go build line in the Dockerfile")
	}
	const ver, commit = "v9.8.7-test", "0123456789abcdef0123456789abcdef01234567"
	line := strings.NewReplacer("${VERSION}", ver, "${COMMIT}", commit).Replace(m[1])
	bin := filepath.Join(t.TempDir(), "offsetkeeper")
	args := append([]string{"build"}, shellFields(line)...)
	args = append(args, "-o", bin, "./"+strings.TrimPrefix(m[2], "./"))
	cmd := exec.Command(goBin, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("offsetkeeper version: %v\n%s", err, out)
	}
	if want := "offsetkeeper " + ver + " (commit " + commit + ", go"; !strings.HasPrefix(string(out), want) {
		t.Errorf("offsetkeeper version = %q, want %q...", out, want)
	}
}

// shellFields splits a command line as sh does for plain words and double
// quotes, which is all the Dockerfile's go build line uses.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("systemd/offsetkeeper.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{
		"ExecStart=/usr/local/bin/offsetkeeper daemon",
		// Secrets and certificates as credentials from the credstore: a
		// name, not a path, so that a missing one is skipped and mTLS or
		// IAM setups without a password start.
		"LoadCredential=sasl-password-file:offsetkeeper.sasl-password\n",
		"LoadCredential=tls-ca:offsetkeeper.kafka-ca.pem\n",
		"LoadCredential=worker-config:offsetkeeper.worker.properties\n",
		"EnvironmentFile=/etc/offsetkeeper/offsetkeeper.env",
		"DynamicUser=yes", "StateDirectory=offsetkeeper", "ProtectSystem=strict", "NoNewPrivileges=yes",
		"ProtectHome=yes", "PrivateTmp=yes", "CapabilityBoundingSet=\n", "SystemCallFilter=@system-service",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q", want)
		}
	}
	// The daemon uses a credential named after a file flag as that flag
	// (cmd/offsetkeeper/credentials.go); no other IDs mean anything.
	fileFlags := []string{"worker-config", "tls-ca", "tls-cert", "tls-key", "sasl-password-file"}
	for _, m := range regexp.MustCompile(`(?m)^LoadCredential=([^:\n]*):?(.*)$`).FindAllStringSubmatch(unit, -1) {
		if !slices.Contains(fileFlags, m[1]) {
			t.Errorf("LoadCredential=%s:%s: the daemon uses only credentials named %v", m[1], m[2], fileFlags)
		}
		if strings.HasPrefix(m[2], "/") {
			t.Errorf("LoadCredential=%s:%s: an absolute path fails the unit when the file is missing; name a credstore file", m[1], m[2])
		}
	}
	if strings.Contains(unit, "%d/") || strings.Contains(unit, "CREDENTIALS_DIRECTORY") && strings.Contains(unit, "Environment=") && strings.Contains(unit, "_FILE=") {
		t.Errorf("unit points a flag at a credential unconditionally; a missing credential must not break the start")
	}
	env, err := os.ReadFile("systemd/offsetkeeper.env")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(env), "OFFSETKEEPER_SCHEDULE="+defaultSchedule+"\n") {
		t.Errorf("offsetkeeper.env does not use the default schedule %s the alerts assume", defaultSchedule)
	}
	for _, l := range strings.Split(string(env), "\n") {
		if strings.HasPrefix(l, "OFFSETKEEPER_") && strings.Contains(l, "/etc/offsetkeeper/") {
			t.Errorf("offsetkeeper.env names a file under /etc/offsetkeeper, which the dynamic user may not read: %s", l)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("no systemd-analyze: unit not verified")
		return
	}
	// Verify a copy that starts /bin/true and tolerates a missing env file:
	// the binary and /etc/offsetkeeper are not installed here.
	unit = strings.Replace(unit, "ExecStart=/usr/local/bin/offsetkeeper daemon", "ExecStart=/bin/true", 1)
	unit = strings.Replace(unit, "EnvironmentFile=/", "EnvironmentFile=-/", 1)
	f := filepath.Join(t.TempDir(), "offsetkeeper.service")
	if err := os.WriteFile(f, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", f).CombinedOutput()
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "offsetkeeper.service") {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
	if err != nil {
		t.Logf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestKustomizeBuild renders both kustomizations with kubectl when it is
// installed, and checks that the Strimzi overlay took effect.
func TestKustomizeBuild(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl: kustomizations not rendered")
	}
	// The kustomizations use labels:, which kustomize 4.1 (kubectl 1.24)
	// introduced; older kubectl builds (Debian's 1.20) cannot render them.
	v, _ := exec.Command(kubectl, "version", "--client").Output()
	m := regexp.MustCompile(`Kustomize Version: v(\d+)\.(\d+)`).FindSubmatch(v)
	if m == nil {
		t.Skipf("unknown kustomize version: %s", bytes.TrimSpace(v))
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	if major < 4 || major == 4 && minor < 1 {
		t.Skipf("kubectl's kustomize v%d.%d is older than v4.1", major, minor)
	}
	for _, dir := range []string{"kubernetes", "strimzi"} {
		out, err := exec.Command(kubectl, "kustomize", dir).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, ee.Stderr)
			}
			t.Fatal(err)
		}
		if dir != "strimzi" {
			continue
		}
		dec := yaml.NewDecoder(bytes.NewReader(out))
		var kinds []string
		for {
			var d doc
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, str(d, "kind"))
			if ns := str(d, "metadata", "namespace"); ns != "kafka" {
				t.Errorf("%s %s in namespace %q, want kafka (where Strimzi puts the user's Secret)", str(d, "kind"), str(d, "metadata", "name"), ns)
			}
			switch str(d, "kind") {
			case "Deployment":
				c := get(d, "spec", "template", "spec", "containers", 0)
				for _, e := range list(c, "env") {
					if str(e, "name") == "OFFSETKEEPER_SASL_PASSWORD" {
						if ref := get(e, "valueFrom", "secretKeyRef"); str(ref, "name") != "offsetkeeper" || str(ref, "key") != "password" {
							t.Errorf("password from %v, want the KafkaUser Secret", ref)
						}
					}
				}
				mounts := map[string]string{}
				for _, m := range list(c, "volumeMounts") {
					mounts[str(m, "name")] = str(m, "mountPath")
				}
				if mounts["kafka-ca"] != "/etc/offsetkeeper/kafka-ca" || mounts["tmp"] != "/tmp" {
					t.Errorf("volume mounts %v", mounts)
				}
			case "ConfigMap":
				if str(d, "data", "OFFSETKEEPER_TLS_CA") != "/etc/offsetkeeper/kafka-ca/ca.crt" {
					t.Errorf("ConfigMap: %v", get(d, "data"))
				}
			}
		}
		if !slices.Contains(kinds, "KafkaUser") || !slices.Contains(kinds, "Deployment") {
			t.Errorf("rendered kinds %v", kinds)
		}
	}
}
