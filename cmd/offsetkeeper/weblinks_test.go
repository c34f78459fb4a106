package main

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestPageLinks drives the page and follows every link it draws, from the
// board down (issue 40: the connector page's "plan a restore" link was
// double-encoded, its connector a name no connector has). Every link
// answers 200, every connector a link names is one the board lists, and
// every moment parses.
func TestPageLinks(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	addr := freeAddr(t)
	logs := c.startDaemon("--journal-interval", pageJournalInterval, "--schedule", "@every 1h", "--listen", addr)
	c.waitJournal(time.Now(), logs)
	c.badReset() // events, whose links name connectors such as "eu->us.MirrorSourceConnector"
	c.waitJournal(moment(), logs)
	base := "http://" + addr

	var board struct {
		Connectors []struct{ Name string } `json:"connectors"`
	}
	getJSON(t, base+"/api/connectors", &board)
	known := map[string]bool{}
	for _, cn := range board.Connectors {
		known[cn.Name] = true
	}
	if !known[connectdemo.ConnMirror] {
		t.Fatalf("the board lacks %s: %v", connectdemo.ConnMirror, known)
	}

	href := regexp.MustCompile(`href="([^"]*)"`)
	seen := map[string]bool{"/": true}
	queue := []string{"/"}
	restoreLinks := 0
	for len(queue) > 0 && len(seen) < 400 {
		u := queue[0]
		queue = queue[1:]
		code, body, err := httpGet(base + u)
		if err != nil || code != 200 {
			_, rest, _ := strings.Cut(body, "<body")
			t.Errorf("GET %s: %d %v\n%s", u, code, err, rest)
			continue
		}
		if !strings.Contains(body, "<!doctype html>") {
			continue // a JSON twin: no links to follow
		}
		for _, m := range href.FindAllStringSubmatch(body, -1) {
			link := html.UnescapeString(m[1])
			p, err := url.Parse(link)
			if err != nil {
				t.Errorf("%s links to %q: %v", u, link, err)
				continue
			}
			if p.Host != "" || !strings.HasPrefix(p.Path, "/") {
				continue // elsewhere (docs), or an anchor
			}
			q := p.Query()
			if name := q.Get("connector"); name != "" && !known[name] {
				t.Errorf("%s links to %q: connector %q is no connector (double-encoded?)", u, link, name)
			}
			if at := q.Get("at"); at != "" {
				if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
					t.Errorf("%s links to %q: at %q: %v", u, link, at, err)
				}
			}
			if strings.HasPrefix(p.Path, "/connectors/") && !known[strings.TrimPrefix(p.Path, "/connectors/")] {
				t.Errorf("%s links to %q: no such connector", u, link)
			}
			if p.Path == "/timeline" && q.Get("connector") != "" {
				restoreLinks++
			}
			if key := p.RequestURI(); !seen[key] {
				seen[key] = true
				queue = append(queue, key)
			}
		}
	}
	if restoreLinks == 0 {
		t.Errorf("no \"plan a restore\" link followed among %d pages", len(seen))
	}
	t.Logf("followed %d links, %d of them a restore of a connector", len(seen), restoreLinks)
}
