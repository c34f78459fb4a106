package connect

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// TestRealWorkerExactlyOnceSource: on a worker with exactly-once source
// support, a FileStreamSource that requires it writes its offsets in the
// transactions of its records. The snapshot captures them (read
// committed), a bad reset is undone by a restore into Kafka, and the
// resumed connector writes every line once.
func TestRealWorkerExactlyOnceSource(t *testing.T) {
	realconnect.Dir(t)
	t.Parallel()
	p := newPipeline(t, realconnect.Options{Set: []string{"exactly.once.source.support=enabled"}}, filepath.Join(t.TempDir(), "store"))
	p.extra = []string{"exactly.once.support=required"}
	p.feed(5)
	p.createSource("")
	p.settleSource()
	id := p.snapshot()
	shown := p.bin(0, "show", id, "--connector", srcName, "--output", "connect-rest").stdout
	if got, want := canonicalOffsets(t, []byte(shown)), canonicalOffsets(t, p.rest.Offsets(srcName)); got != want {
		t.Errorf("show --output connect-rest\n%s\nGET offsets\n%s", got, want)
	}
	p.badReset(srcName)
	p.bin(0, "restore", id, "--connector", srcName)
	p.feed(4)
	p.resume(srcName)
	p.settleSource()
	var want []string
	for i := 1; i <= p.lines; i++ {
		want = append(want, strconv.Quote(fmt.Sprintf("line-%04d", i)))
	}
	if got := realconnect.ReadTopic(t, p.c, linesT, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the exactly-once source wrote (read committed)\n%s\nwant every line once\n%s", got, want)
	}
}
