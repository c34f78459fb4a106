package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// strimziFlags name the ConfigMap show --output strimzi-configmap prints.
type strimziFlags struct {
	name, namespace string
}

func (f *strimziFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "configmap-name", "", "with --output strimzi-configmap: the ConfigMap's name (default <connector>-offsets)")
	fs.StringVar(&f.namespace, "configmap-namespace", "", "with --output strimzi-configmap: the ConfigMap's namespace (default: none, kubectl's)")
}

// strimziDataKey is the ConfigMap key Strimzi reads a connector's offsets
// from: offsets.json for a KafkaConnector; for a connector of a
// KafkaMirrorMaker2 (its name has "->"), the name with "->" as "--", then
// ".json".
func strimziDataKey(connector string) string {
	if strings.Contains(connector, "->") {
		return strings.ReplaceAll(connector, "->", "--") + ".json"
	}
	return "offsets.json"
}

var (
	notDNS = regexp.MustCompile(`[^a-z0-9.-]+`)
	dashes = regexp.MustCompile(`-{2,}`)
)

// strimziConfigMapName is the default ConfigMap name: <connector>-offsets,
// made a valid Kubernetes name.
func strimziConfigMapName(connector string) string {
	n := dashes.ReplaceAllString(notDNS.ReplaceAllString(strings.ToLower(connector), "-"), "-")
	n = strings.Trim(n, "-.")
	if len(n) > 240 {
		n = strings.Trim(n[:240], "-.")
	}
	if n == "" {
		n = "connector"
	}
	return n + "-offsets"
}

// write prints the ConfigMap that a KafkaConnector's (or a
// KafkaMirrorMaker2 connector's) spec.alterOffsets.fromConfigMap accepts:
// the connector's Connect REST offsets body, as show --output connect-rest
// prints it, under the key Strimzi reads.
func (f *strimziFlags) write(w io.Writer, s *snapshot.Snapshot, connector string) error {
	body, err := s.ConnectREST(connector)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		return fmt.Errorf("render offsets of connector %q: %w", connector, err)
	}
	name := f.name
	if name == "" {
		name = strimziConfigMapName(connector)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Offsets of connector %s from offsetkeeper snapshot %s (%s), for Strimzi's\n", connector, s.ID, s.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"))
	fmt.Fprintf(&b, "# spec.alterOffsets.fromConfigMap (Strimzi 0.44 or later; see docs/restore.md).\n")
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)
	if f.namespace != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", f.namespace)
	}
	fmt.Fprintf(&b, "data:\n  %s: |-\n", strimziDataKey(connector))
	for line := range strings.Lines(pretty.String()) {
		fmt.Fprintf(&b, "    %s", line)
	}
	b.WriteString("\n")
	_, err = io.WriteString(w, b.String())
	return err
}
