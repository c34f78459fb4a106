package realconnect

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Connector classes of Kafka's FileStream connectors.
const (
	FileSourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	FileSinkClass   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
)

// FileSource is the config of a FileStreamSource connector that reads file
// into topic, one task.
func FileSource(file, topic string, extra ...string) map[string]string {
	return withExtra(map[string]string{
		"connector.class": FileSourceClass, "tasks.max": "1", "file": file, "topic": topic,
	}, extra)
}

// FileSink is the config of a FileStreamSink connector that writes the
// records of topics to file, one task.
func FileSink(file string, topics string, extra ...string) map[string]string {
	return withExtra(map[string]string{
		"connector.class": FileSinkClass, "tasks.max": "1", "file": file, "topics": topics,
	}, extra)
}

// withExtra adds key=value settings to cfg.
func withExtra(cfg map[string]string, extra []string) map[string]string {
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		cfg[k] = v
	}
	return cfg
}

// AppendLines appends lines to file, creating it.
func AppendLines(t testing.TB, file string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// Lines is the lines of file (none if it does not exist).
func Lines(t testing.TB, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Eventually polls cond every 100ms until it holds, failing the test with
// what (and the last detail cond gave) after WaitTimeout.
func Eventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last: %s", what, WaitTimeout, detail)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SourcePosition is the "position" a FileStreamSource's GET offsets
// reports for file, -1 when it reports none.
func SourcePosition(t testing.TB, body []byte, file string) int64 {
	t.Helper()
	var doc struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("decode offsets %s: %v", body, err)
	}
	for _, o := range doc.Offsets {
		if o.Partition["filename"] == file {
			if p, ok := o.Offset["position"].(float64); ok {
				return int64(p)
			}
		}
	}
	return -1
}

// SinkOffsets is a sink's GET offsets as "topic/partition" -> offset.
func SinkOffsets(t testing.TB, body []byte) map[string]int64 {
	t.Helper()
	var doc struct {
		Offsets []struct {
			Partition struct {
				Topic     string `json:"kafka_topic"`
				Partition int32  `json:"kafka_partition"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"kafka_offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("decode offsets %s: %v", body, err)
	}
	m := map[string]int64{}
	for _, o := range doc.Offsets {
		m[o.Partition.Topic+"/"+strconv.Itoa(int(o.Partition.Partition))] = o.Offset.Offset
	}
	return m
}

// ReadTopic is the values of the first n committed records of topic (a
// partition of it), in order, and of any more that come within a second
// after them.
func ReadTopic(t testing.TB, c *Cluster, topic string, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.KC.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []string
	for len(out) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	// Whatever follows would be a duplicate: read what a short wait brings.
	more, cancelMore := context.WithTimeout(context.Background(), time.Second)
	defer cancelMore()
	cl.PollFetches(more).EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	return out
}
