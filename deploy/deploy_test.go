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

	"go.yaml.in/yaml/v3"
)

// metrics are the names the daemon exports; the dashboard and the alerts may
// use these and nothing else.
var metrics = map[string]bool{
	"offsetkeeper_runs_total":                     true,
	"offsetkeeper_last_success_timestamp_seconds": true,
	"offsetkeeper_run_duration_seconds":           true, // histogram
	"offsetkeeper_snapshot_size_bytes":            true,
	"offsetkeeper_source_partitions":              true,
	"offsetkeeper_sink_partitions":                true,
	"offsetkeeper_retention_deletions_total":      true,
	"offsetkeeper_sink_offsets_moved_backwards":   true,
	"offsetkeeper_leader":                         true,
}

var metricRef = regexp.MustCompile(`\boffsetkeeper_[a-z0-9_]+`)

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
	for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		if str(c, probe, "httpGet", "path") != path || str(c, probe, "httpGet", "port") != "metrics" {
			t.Errorf("%s: %v", probe, get(c, probe))
		}
	}
	if get(c, "resources", "requests") == nil || get(c, "resources", "limits", "memory") == nil {
		t.Errorf("resources: %v", get(c, "resources"))
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
	if s := str(cm, "data", "OFFSETKEEPER_SCHEDULE"); s != "@every 15m" {
		t.Errorf("OFFSETKEEPER_SCHEDULE = %q", s)
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
	for _, g := range []grant{
		{"topic", "connect-offsets", "literal", "Describe"},
		{"topic", "connect-offsets", "literal", "Read"},
		{"topic", "connect-configs", "literal", "Describe"},
		{"topic", "connect-configs", "literal", "Read"},
		{"group", "connect-", "prefix", "Describe"},
		{"cluster", "", "", "Describe"},
		{"topic", "connect-offsets", "literal", "Write"},
		{"group", "connect-", "prefix", "Read"},
		{"transactionalId", "offsetkeeper-restore-", "prefix", "Write"},
		{"group", "offsetkeeper-leader-", "prefix", "Read"},
		{"topic", "__offsetkeeper_leader", "literal", "Read"},
		{"topic", "connect-offsets", "literal", "DescribeConfigs"},
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
	connect := one(t, byKind, "KafkaConnect", "strimzi/kafka-connect.yaml")
	if str(connect, "spec", "config", "offset.storage.topic") != "connect-offsets" || str(connect, "spec", "config", "config.storage.topic") != "connect-configs" {
		t.Errorf("KafkaConnect topics do not match the KafkaUser ACLs: %v", get(connect, "spec", "config"))
	}
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
		}
	}
	for _, a := range []string{"OffsetkeeperNoRecentSnapshot", "OffsetkeeperRunsFailing", "OffsetkeeperSinkOffsetsMovedBackwards", "OffsetkeeperNoLeader"} {
		if !alerts[a] {
			t.Errorf("no alert %s", a)
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
		"FROM golang:1.26 AS build",
		"CGO_ENABLED=0",
		// The release build: the Cloud Storage client's DirectPath gRPC
		// packages left out (12 MiB of memory at start; docs/benchmarks.md).
		`-trimpath -tags disable_grpc_modules -ldflags "-s -w -X main.version=${VERSION}"`,
		"./cmd/offsetkeeper",
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"USER nonroot",
		"EXPOSE 9464",
		`ENTRYPOINT ["/offsetkeeper"]`,
		`CMD ["daemon"]`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("systemd/offsetkeeper.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{
		"ExecStart=/usr/local/bin/offsetkeeper daemon",
		"EnvironmentFile=/etc/offsetkeeper/offsetkeeper.env",
		"DynamicUser=yes", "StateDirectory=offsetkeeper", "ProtectSystem=strict", "NoNewPrivileges=yes",
		"ProtectHome=yes", "PrivateTmp=yes", "CapabilityBoundingSet=\n", "SystemCallFilter=@system-service",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q", want)
		}
	}
	if _, err := os.Stat("systemd/offsetkeeper.env"); err != nil {
		t.Error(err)
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
