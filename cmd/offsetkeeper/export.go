package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// exportConnectREST writes, into dir, <connector>.json holding Connect's
// GET /connectors/NAME/offsets body for every connector of snap (or those
// named), and lists the files written on stdout. Each file is written
// whole or not at all.
func exportConnectREST(stdout, stderr io.Writer, snap *snapshot.Snapshot, only []string, dir string) error {
	names := only
	if len(names) == 0 {
		for _, c := range snap.Connectors {
			names = append(names, c.Name)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create --output-dir: %w", err)
	}
	seen := map[string]string{}
	for _, name := range names {
		file := connectorFileName(name)
		if other, dup := seen[file]; dup {
			return fmt.Errorf("connectors %q and %q map to the same file name %s", other, name, file)
		}
		seen[file] = name
		body, err := snap.ConnectREST(name)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, file)
		if err := writeFileAtomic(path, append(body, '\n')); err != nil {
			return fmt.Errorf("write offsets of connector %q: %w", name, err)
		}
		if bytes.HasPrefix(body, []byte(`{"offsets":[]}`)) {
			fmt.Fprintf(stderr, "note: connector %s has no offsets in snapshot %s; Connect's PATCH refuses the empty list in %s\n", name, snap.ID, path)
		}
		fmt.Fprintf(stdout, "%s\t%s\n", path, name)
	}
	return nil
}

// exportCSV prints the committed offsets of the sink groups of snap's
// connectors (or those named) as kafka-consumer-groups.sh
// --reset-offsets --from-file takes them: group,topic,partition,offset,
// sorted, without a header (that tool reads none).
func exportCSV(stdout, stderr io.Writer, snap *snapshot.Snapshot, only []string) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	n := 0
	for _, g := range snap.SinkGroups {
		if g.Connector == "" || (len(only) > 0 && !slices.Contains(only, g.Connector)) {
			continue
		}
		for _, o := range g.Offsets {
			if err := w.Write([]string{g.Group, o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.Offset, 10)}); err != nil {
				return err
			}
			n++
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(stderr, "note: snapshot %s holds no sink group offsets for these connectors\n", snap.ID)
	}
	_, err := stdout.Write(buf.Bytes())
	return err
}
