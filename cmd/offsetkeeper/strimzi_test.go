package main

import (
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestShowStrimziConfigMap: --output strimzi-configmap prints a ConfigMap
// holding, under the key Strimzi's alterOffsets reads, the same offsets as
// --output connect-rest, for source, sink and MirrorMaker 2 connectors.
func TestShowStrimziConfigMap(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	store := filepath.Join(t.TempDir(), "store")
	if code, _, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", store); code != exitOK {
		t.Fatalf("snapshot: exit %d: %s", code, errs)
	}
	for _, tt := range []struct {
		connector, args, name, key string
	}{
		{connectdemo.ConnMySQL, "", "inventory-connector-offsets", "offsets.json"},
		{connectdemo.ConnSinkES, "--configmap-name=es-offsets --configmap-namespace=kafka", "es-offsets", "offsets.json"},
		{connectdemo.ConnMirror, "", "eu-us.mirrorsourceconnector-offsets", "eu--us.MirrorSourceConnector.json"},
	} {
		t.Run(tt.connector, func(t *testing.T) {
			args := append([]string{"show", "latest", "--store", store, "--connector", tt.connector, "--output", "strimzi-configmap"}, strings.Fields(tt.args)...)
			code, out, errs := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("show: exit %d: %s", code, errs)
			}
			var cm struct {
				APIVersion string `yaml:"apiVersion"`
				Kind       string
				Metadata   struct{ Name, Namespace string }
				Data       map[string]string
			}
			if err := yaml.Unmarshal([]byte(out), &cm); err != nil {
				t.Fatalf("not YAML: %v\n%s", err, out)
			}
			if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Metadata.Name != tt.name || len(cm.Data) != 1 {
				t.Errorf("ConfigMap %+v\n%s", cm, out)
			}
			if strings.Contains(tt.args, "kafka") && cm.Metadata.Namespace != "kafka" {
				t.Errorf("namespace %q", cm.Metadata.Namespace)
			}
			_, rest, _ := runCLI(t, "show", "latest", "--store", store, "--connector", tt.connector, "--output", "connect-rest")
			if got, want := offsetSet(t, cm.Data[tt.key]), offsetSet(t, rest); got != want || want == "" {
				t.Errorf("data %s:\n got %s\nwant %s", tt.key, got, want)
			}
		})
	}
	if code, _, errs := runCLI(t, "show", "latest", "--store", store, "--output", "strimzi-configmap"); code != exitUsage || !strings.Contains(errs, "--connector") {
		t.Errorf("without --connector: exit %d: %s", code, errs)
	}
}

func TestStrimziConfigMapName(t *testing.T) {
	for in, want := range map[string]string{
		"inventory-connector":          "inventory-connector-offsets",
		"eu->us.MirrorSourceConnector": "eu-us.mirrorsourceconnector-offsets",
		"café-données-😀":               "caf-donn-es-offsets",
		"--":                           "connector-offsets",
	} {
		if got := strimziConfigMapName(in); got != want {
			t.Errorf("strimziConfigMapName(%q) = %q, want %q", in, got, want)
		}
	}
}
