package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const chartDir = "helm/offsetkeeper"

// kubeVersion is the cluster version helm template renders for: a helm
// built with go install assumes v1.20, older than the chart's kubeVersion.
const kubeVersion = "1.31.0"

// helmBinary is $HELM or helm on PATH; .ci/run installs it from the Go
// module proxy, so CI never skips.
func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	h, err := exec.LookPath("helm")
	if err != nil {
		t.Skip("helm is not installed (go install helm.sh/helm/v3/cmd/helm@v3.22.0, as .ci/run does): chart not rendered")
	}
	return h
}

func runHelm(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	// Helm keeps caches and repositories in these; the test owns them.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// renderChart is `helm template offsetkeeper deploy/helm/offsetkeeper` with
// the values files given, as documents by kind.
func renderChart(t *testing.T, valuesFiles ...string) map[string][]doc {
	t.Helper()
	args := []string{"template", "offsetkeeper", chartDir, "--namespace", "kafka", "--kube-version", kubeVersion}
	for _, f := range valuesFiles {
		args = append(args, "--values", f)
	}
	out := runHelm(t, args...)
	dec := yaml.NewDecoder(bytes.NewReader(out))
	byKind := map[string][]doc{}
	for {
		var d doc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return byKind
		}
		if err != nil {
			t.Fatalf("helm template output: %v\n%s", err, out)
		}
		if d != nil {
			byKind[str(d, "kind")] = append(byKind[str(d, "kind")], d)
		}
	}
}

// strict decodes a YAML document into v through JSON, refusing any field v
// does not have, as the API server's strict field validation does.
func strict(d doc, v any) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// The Prometheus Operator's kinds have no k8s.io/api type; these are the
// fields of monitoring.coreos.com/v1 the chart uses.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
			Scheme   string `json:"scheme,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for,omitempty"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// decoded is one rendered chart, every manifest decoded into its type.
type decoded struct {
	deployment     appsv1.Deployment
	configMap      corev1.ConfigMap
	service        corev1.Service
	serviceAccount corev1.ServiceAccount
	pdb            policyv1.PodDisruptionBudget
	serviceMonitor serviceMonitor
	rule           *prometheusRule
}

// decodeChart decodes every rendered manifest strictly; a kind the chart
// should not render, or a second of one, is an error.
func decodeChart(t *testing.T, byKind map[string][]doc) decoded {
	t.Helper()
	var c decoded
	want := map[string]struct {
		apiVersion string
		into       any
	}{
		"Deployment":          {"apps/v1", &c.deployment},
		"ConfigMap":           {"v1", &c.configMap},
		"Service":             {"v1", &c.service},
		"ServiceAccount":      {"v1", &c.serviceAccount},
		"PodDisruptionBudget": {"policy/v1", &c.pdb},
		"ServiceMonitor":      {"monitoring.coreos.com/v1", &c.serviceMonitor},
		"PrometheusRule":      {"monitoring.coreos.com/v1", nil},
	}
	for kind, docs := range byKind {
		w, ok := want[kind]
		if !ok {
			t.Errorf("chart renders a %s", kind)
			continue
		}
		if len(docs) != 1 {
			t.Errorf("chart renders %d %ss, want 1", len(docs), kind)
			continue
		}
		if v := str(docs[0], "apiVersion"); v != w.apiVersion {
			t.Errorf("%s: apiVersion %s, want %s", kind, v, w.apiVersion)
		}
		into := w.into
		if kind == "PrometheusRule" {
			c.rule = &prometheusRule{}
			into = c.rule
		}
		if err := strict(docs[0], into); err != nil {
			t.Errorf("%s does not decode strictly into its type: %v", kind, err)
		}
	}
	for _, kind := range []string{"Deployment", "ConfigMap", "Service", "ServiceAccount", "PodDisruptionBudget", "ServiceMonitor"} {
		if len(byKind[kind]) == 0 {
			t.Errorf("chart renders no %s", kind)
		}
	}
	return c
}

func TestHelmLint(t *testing.T) {
	runHelm(t, "lint", "--strict", chartDir)
	runHelm(t, "lint", "--strict", chartDir, "--values", chartDir+"/ci/strimzi-values.yaml")
}

// checkSelects fails unless labels include every selector label.
func checkSelects(t *testing.T, what string, selector, labels map[string]string) {
	t.Helper()
	if len(selector) == 0 {
		t.Errorf("%s: empty selector", what)
	}
	for k, v := range selector {
		if labels[k] != v {
			t.Errorf("%s: selector %s=%s does not match the pods' labels %v", what, k, v, labels)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kustomizeBase reads deploy/kubernetes's manifest of kind, strictly.
func kustomizeBase(t *testing.T, file string, v any) {
	t.Helper()
	docs := readYAML(t, filepath.Join("kubernetes", file))
	if len(docs) != 1 {
		t.Fatalf("kubernetes/%s: %d documents", file, len(docs))
	}
	if err := strict(docs[0], v); err != nil {
		t.Fatalf("kubernetes/%s does not decode strictly: %v", file, err)
	}
}

// TestHelmDefaultsMatchKustomize: with its default values the chart
// deploys what `kubectl apply -k deploy/kubernetes` does: the same pod
// spec (containers, probes, resources, GOMEMLIMIT, security contexts,
// volumes), ConfigMap settings, replicas and rollout, PDB, Service and
// ServiceMonitor. Labels differ (the chart adds Helm's) and are checked to
// select the pods instead.
func TestHelmDefaultsMatchKustomize(t *testing.T) {
	c := decodeChart(t, renderChart(t))
	if c.rule != nil {
		t.Error("PrometheusRule rendered by default; deploy/kubernetes has none")
	}

	var base appsv1.Deployment
	kustomizeBase(t, "deployment.yaml", &base)
	k := readYAML(t, "kubernetes/kustomization.yaml")[0]
	img := get(k, "images", 0)
	base.Spec.Template.Spec.Containers[0].Image = str(img, "newName") + ":" + str(img, "newTag")

	got := c.deployment.Spec
	podLabels := got.Template.Labels
	checkSelects(t, "Deployment", got.Selector.MatchLabels, podLabels)
	for _, tsc := range got.Template.Spec.TopologySpreadConstraints {
		checkSelects(t, "topologySpreadConstraints", tsc.LabelSelector.MatchLabels, podLabels)
	}
	// Compare all but the labels and the chart's checksum annotation.
	for _, s := range []*appsv1.DeploymentSpec{&got, &base.Spec} {
		s.Selector = nil
		s.Template.ObjectMeta = metav1.ObjectMeta{}
		for i := range s.Template.Spec.TopologySpreadConstraints {
			s.Template.Spec.TopologySpreadConstraints[i].LabelSelector = nil
		}
	}
	if g, w := jsonOf(t, got), jsonOf(t, base.Spec); g != w {
		t.Errorf("chart's default Deployment differs from deploy/kubernetes's:\nchart: %s\nkustomize: %s", g, w)
	}
	if c.deployment.Name != base.Name {
		t.Errorf("Deployment %q, want %q for the release name offsetkeeper", c.deployment.Name, base.Name)
	}

	var cm corev1.ConfigMap
	kustomizeBase(t, "configmap.yaml", &cm)
	if g, w := jsonOf(t, c.configMap.Data), jsonOf(t, cm.Data); g != w {
		t.Errorf("chart's default settings differ from deploy/kubernetes/configmap.yaml:\nchart: %s\nkustomize: %s", g, w)
	}

	var pdb policyv1.PodDisruptionBudget
	kustomizeBase(t, "poddisruptionbudget.yaml", &pdb)
	checkSelects(t, "PodDisruptionBudget", c.pdb.Spec.Selector.MatchLabels, podLabels)
	c.pdb.Spec.Selector, pdb.Spec.Selector = nil, nil
	if g, w := jsonOf(t, c.pdb.Spec), jsonOf(t, pdb.Spec); g != w {
		t.Errorf("PodDisruptionBudget:\nchart: %s\nkustomize: %s", g, w)
	}

	var svc corev1.Service
	kustomizeBase(t, "service.yaml", &svc)
	checkSelects(t, "Service", c.service.Spec.Selector, podLabels)
	c.service.Spec.Selector, svc.Spec.Selector = nil, nil
	if g, w := jsonOf(t, c.service.Spec), jsonOf(t, svc.Spec); g != w {
		t.Errorf("Service:\nchart: %s\nkustomize: %s", g, w)
	}

	var sm serviceMonitor
	kustomizeBase(t, "servicemonitor.yaml", &sm)
	checkSelects(t, "ServiceMonitor", c.serviceMonitor.Spec.Selector.MatchLabels, c.service.Labels)
	if g, w := jsonOf(t, c.serviceMonitor.Spec.Endpoints), jsonOf(t, sm.Spec.Endpoints); g != w {
		t.Errorf("ServiceMonitor endpoints:\nchart: %s\nkustomize: %s", g, w)
	}

	var sa corev1.ServiceAccount
	kustomizeBase(t, "serviceaccount.yaml", &sa)
	if c.serviceAccount.Name != got.Template.Spec.ServiceAccountName || jsonOf(t, c.serviceAccount.AutomountServiceAccountToken) != jsonOf(t, sa.AutomountServiceAccountToken) {
		t.Errorf("ServiceAccount %s (automount %v), pods use %s", c.serviceAccount.Name, c.serviceAccount.AutomountServiceAccountToken, got.Template.Spec.ServiceAccountName)
	}
}

// envOf returns a container's env entries by name.
func envOf(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

// TestHelmStrimziValues renders the chart as deploy/strimzi deploys the
// daemon, with encryption, the page's web config and the alerts on: the
// Secrets Strimzi creates are mounted and named, GOMEMLIMIT follows the
// memory limit, and the PrometheusRule is deploy/prometheus's.
func TestHelmStrimziValues(t *testing.T) {
	c := decodeChart(t, renderChart(t, chartDir+"/ci/strimzi-values.yaml"))
	pod := c.deployment.Spec.Template.Spec
	ctr := pod.Containers[0]
	env := envOf(ctr)
	secretRef := func(name string) string {
		ref := env[name].ValueFrom
		if ref == nil || ref.SecretKeyRef == nil {
			return ""
		}
		return ref.SecretKeyRef.Name + "/" + ref.SecretKeyRef.Key
	}
	if got := secretRef("OFFSETKEEPER_SASL_PASSWORD"); got != "offsetkeeper/password" {
		t.Errorf("SASL password from %q, want the KafkaUser Secret offsetkeeper/password", got)
	}
	if got := secretRef("OFFSETKEEPER_ENCRYPT_KEY"); got != "offsetkeeper-encryption/OFFSETKEEPER_ENCRYPT_KEY" {
		t.Errorf("encryption key from %q", got)
	}
	// 90% of 1Gi, rounded down to a MiB.
	if got := env["GOMEMLIMIT"].Value; got != "921MiB" {
		t.Errorf("GOMEMLIMIT %q for a 1Gi limit, want 921MiB", got)
	}
	mounts := map[string]string{}
	for _, m := range ctr.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	secrets := map[string]string{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secrets[v.Name] = v.Secret.SecretName
		}
	}
	data := c.configMap.Data
	for _, m := range []struct{ volume, secret, dir, setting, file string }{
		{"kafka-ca", "my-cluster-cluster-ca-cert", "/etc/offsetkeeper/kafka-ca", "OFFSETKEEPER_TLS_CA", "ca.crt"},
		{"web-config", "offsetkeeper-web", "/etc/offsetkeeper/web", "OFFSETKEEPER_WEB_CONFIG", "web-config.yml"},
	} {
		if mounts[m.volume] != m.dir || secrets[m.volume] != m.secret {
			t.Errorf("volume %s: mounted at %q from Secret %q, want %s from %s", m.volume, mounts[m.volume], secrets[m.volume], m.dir, m.secret)
		}
		if want := m.dir + "/" + m.file; data[m.setting] != want {
			t.Errorf("%s=%q, want %s", m.setting, data[m.setting], want)
		}
	}
	for k, v := range map[string]string{
		"OFFSETKEEPER_BROKERS": "my-cluster-kafka-bootstrap:9093", "OFFSETKEEPER_OFFSETS_TOPIC": "connect-cluster-offsets",
		"OFFSETKEEPER_CONFIG_TOPIC": "connect-cluster-configs", "OFFSETKEEPER_JOURNAL_INTERVAL": "1m",
		"OFFSETKEEPER_KEEP_LAST": "48", "OFFSETKEEPER_SASL_USERNAME": "offsetkeeper",
	} {
		if data[k] != v {
			t.Errorf("%s=%q, want %q", k, data[k], v)
		}
	}
	if c.serviceAccount.Annotations["eks.amazonaws.com/role-arn"] == "" {
		t.Errorf("ServiceAccount annotations %v", c.serviceAccount.Annotations)
	}

	// The chart's copy of the alerts is deploy/prometheus's, and renders as it.
	copyOf, err := os.ReadFile(chartDir + "/files/offsetkeeper-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile("prometheus/offsetkeeper-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(copyOf, orig) {
		t.Fatalf("%s/files/offsetkeeper-alerts.yaml differs from prometheus/offsetkeeper-alerts.yaml: cp prometheus/offsetkeeper-alerts.yaml %s/files/", chartDir, chartDir)
	}
	var want prometheusRule
	if err := strict(readYAML(t, "prometheus/offsetkeeper-alerts.yaml")[0], &want); err != nil {
		t.Fatal(err)
	}
	if c.rule == nil {
		t.Fatal("no PrometheusRule with prometheusRule.enabled")
	}
	if g, w := jsonOf(t, c.rule.Spec), jsonOf(t, want.Spec); g != w {
		t.Errorf("rendered alerts differ from deploy/prometheus's:\n%s\n%s", g, w)
	}
}

// TestHelmMemoryLimitUnits: GOMEMLIMIT is 90% of the limit in each unit
// Kubernetes users write, and a limit the chart cannot read fails the
// render with a message instead of deploying without one.
func TestHelmMemoryLimitUnits(t *testing.T) {
	for limit, want := range map[string]string{"256Mi": "230MiB", "2Gi": "1843MiB", "512M": "439MiB", "524288Ki": "460MiB"} {
		c := decodeChart(t, renderChart(t, valuesFile(t, fmt.Sprintf("resources: {limits: {memory: %s}}\n", limit))))
		if got := envOf(c.deployment.Spec.Template.Spec.Containers[0])["GOMEMLIMIT"].Value; got != want {
			t.Errorf("limit %s: GOMEMLIMIT %q, want %s", limit, got, want)
		}
	}
	cmd := exec.Command(helmBinary(t), "template", "offsetkeeper", chartDir, "--kube-version", kubeVersion, "--values", valuesFile(t, "resources: {limits: {memory: 1.5Gi}}\n"))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "goMemLimit") {
		t.Errorf("a 1.5Gi limit rendered (%v): %s", err, out)
	}
}

func valuesFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
