package daemon

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestJournalFencedWithoutElectionRetries: with --leader-election=false a
// fenced journal waited for a new lead term, which never comes without
// election: it never journaled again, and /readyz called the daemon ready.
// Now /readyz names the fence, and after fencedRetry the journal goes on
// from the store.
func TestJournalFencedWithoutElectionRetries(t *testing.T) {
	st, base, topics := journalWorld(t, "file://"+t.TempDir())
	ctx := t.Context()
	a, b := newWriter(t, st, base, topics), newWriter(t, st, base, topics)
	now := time.Now()
	b.j.now = func() time.Time { return now }
	at := base.CreatedAt
	for i := int64(0); i < 3; i++ {
		at = at.Add(10 * time.Second)
		a.flush(ctx, record(i, at), at)
		b.flush(ctx, record(100+i, at), at.Add(time.Millisecond))
	}
	if b.j.fenced != b.j.term {
		t.Fatalf("the second writer is not fenced; its log:\n%s", b.log.String())
	}
	b.j.d.jr = b.j
	rec := httptest.NewRecorder()
	b.j.d.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "journal: not journaling: another writer writes epoch "+base.ID) {
		t.Errorf("/readyz of a fenced journal = %d:\n%s", rec.Code, rec.Body.String())
	}
	if b.j.fencedRetryDue(b.j.term) {
		t.Fatal("the fenced journal continues at once")
	}
	now = now.Add(fencedRetry)
	if !b.j.fencedRetryDue(b.j.term) || b.j.fenced != 0 {
		t.Fatalf("the fenced journal does not continue after %v without leader election", fencedRetry)
	}
	// With election on, only a new term ends the fence.
	b.j.fenced, b.j.fencedAt = b.j.term, now
	b.j.d.Config.Leader.Enabled = true
	now = now.Add(time.Hour)
	if b.j.fencedRetryDue(b.j.term) {
		t.Error("with leader election, the fence ended within the term")
	}
}
