// Package docs holds the documentation; its test checks the links.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile("(?m)^#{1,6} +(.+?) *$")
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
)

// slug is GitHub's anchor of a heading: lower case, punctuation but - and
// _ dropped, spaces as -.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of the headings of a Markdown file.
func anchors(t *testing.T, path string) map[string]bool {
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(body), ""), -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+string(rune('0'+n))] = true
		}
		seen[s]++
		out[s] = true
	}
	return out
}

// TestLinks: every relative link of the README, deploy/README.md and
// docs/ names a file that exists and, with #anchor, a heading of it.
func TestLinks(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md", "../deploy/README.md")
	if len(files) < 10 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := fence.ReplaceAllString(string(body), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(link, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), path)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %s: %v", f, link, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(target, ".md") && !anchors(t, target)[anchor] {
				t.Errorf("%s: link %s: no heading with that anchor in %s", f, link, target)
			}
		}
	}
}

// TestIndex: docs/README.md, the index, names every document of docs/.
func TestIndex(t *testing.T) {
	index, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f != "README.md" && !strings.Contains(string(index), "]("+f+")") {
			t.Errorf("docs/README.md does not link %s", f)
		}
	}
}

// TestREADME: the README stays short (litestream's is 48 lines, restic's
// 109), and holds the two commands of its quick start and the test
// command .ci/run runs as the README's.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 150 {
		t.Errorf("README.md has %d lines: keep it to 150, the rest goes to docs/", n)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ci)), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "go test ") {
		t.Fatalf(".ci/run ends with %q, not the README's test command", last)
	}
	for _, cmd := range []string{"go run ./cmd/offsetkeeper demo", last} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmd) + `( |$)`).Match(readme) {
			t.Errorf("README.md lacks the command %q", cmd)
		}
	}
}
