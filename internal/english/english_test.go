package english

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 tasks", 1: "1 task", 2: "2 tasks", -1: "-1 tasks"} {
		if got := Count(n, "task", "tasks"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestWrap(t *testing.T) {
	got := Wrap("warning: a b c dddddddddd e", 12, "  ")
	if want := "warning: a b\n  c\n  dddddddddd\n  e"; got != want {
		t.Errorf("Wrap: %q, want %q", got, want)
	}
}

// TestFitLine: a line wider than its width breaks at spaces, a word wider
// than the room at its punctuation, and only a word without any is cut;
// nothing but the breaks and the indent changes, and every line fits.
func TestFitLine(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		width      int
	}{
		{"short", "short", 20},
		{"  source  t/3  key  changed  old -> new", "  source  t/3  key\n      changed  old\n      -> new", 20},
		{`  a {"timestamp_nanos":0,"incrementing":207}`, "  a\n      {\"timestamp_nanos\":0,\n      \"incrementing\":207}", 30},
		{"  x topics/orders/partition=0/file.json", "  x\n      topics/orders/\n      partition=0/\n      file.json", 20},
		{"abcdefghijklmnopqrstuvwxyz", "abcdefghij\n    klmnop\n    qrstuv\n    wxyz", 10},
		{"é é é é é é é é", "é é é é é\n    é é é", 10},
	} {
		got := Fit(tc.line, tc.width)
		if got != tc.want {
			t.Errorf("Fit(%q, %d):\n%s\nwant\n%s", tc.line, tc.width, got, tc.want)
		}
		for _, l := range strings.Split(got, "\n") {
			if n := utf8.RuneCountInString(l); n > tc.width {
				t.Errorf("Fit(%q): a line of %d columns: %q", tc.line, n, l)
			}
		}
		if strings.Join(strings.Fields(got), "") != strings.Join(strings.Fields(tc.line), "") {
			t.Errorf("Fit(%q) changed more than the breaks: %q", tc.line, got)
		}
	}
}

// The bytes path for ASCII lines fits every line exactly as the runes path
// does: spaces, punctuation, words wider than a line, leading indentation.
func TestFitLineASCIIAsRunes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghij   ,/;:{}\"0123456789"
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.IntN(400))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		line := strings.Repeat(" ", rng.IntN(8)) + string(b)
		width := 10 + rng.IntN(130)
		indent := strings.Repeat(" ", rng.IntN(width))
		if got, want := FitLine(line, width, indent), fitLineRunes(line, width, indent); got != want && len(line) > width {
			t.Fatalf("width %d, indent %d, line %q:\nbytes %q\nrunes %q", width, len(indent), line, got, want)
		}
	}
}

func BenchmarkFitLine(b *testing.B) {
	line := `  source  connect-offsets/7  ["jdbc-orders",{"protocol":"1","table":"shop.orders"}]  update  {"timestamp_nanos":0,"incrementing":207,"timestamp":1733560000000}`
	b.Run("ascii", func(b *testing.B) {
		for b.Loop() {
			FitLine(line, 120, "      ")
		}
	})
	b.Run("runes", func(b *testing.B) {
		for b.Loop() {
			fitLineRunes(line, 120, "      ")
		}
	})
}

// fitReference is Fit as it was first written: split, fit each line wider
// than width runes, join.
func fitReference(s string, width int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if utf8.RuneCountInString(l) > width {
			lead := len(l) - len(strings.TrimLeft(l, " "))
			lines[i] = FitLine(l, width, strings.Repeat(" ", min(lead, width/4)+4))
		}
	}
	return strings.Join(lines, "\n")
}

// Fit, which reads each line once and copies only when a line is wider,
// gives what fitting each line of the split text gives, for ASCII and
// other text; so does AppendFit of the text's bytes.
func TestFitAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabets := []string{"abc  ,/;:{}\"012\n", "aé😀 ,/\n"}
	for n := 0; n < 20000; n++ {
		alphabet := []rune(alphabets[n%2])
		var b strings.Builder
		for i := rng.IntN(600); i > 0; i-- {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		s, width := b.String(), 10+rng.IntN(130)
		want := fitReference(s, width)
		if got := Fit(s, width); got != want {
			t.Fatalf("width %d, text %q:\nFit       %q\nreference %q", width, s, got, want)
		}
		// AppendFit appends the same after what dst holds, over bytes.
		dst := append(make([]byte, 0, rng.IntN(40)), "kept\n"...)
		if got := AppendFit(dst, []byte(s), width); string(got) != "kept\n"+want {
			t.Fatalf("width %d, text %q:\nAppendFit %q\nreference %q", width, s, got[min(len(got), 5):], want)
		}
	}
}

func BenchmarkFit(b *testing.B) {
	line := `  source  connect-offsets/7  ["jdbc-orders",{"protocol":"1","table":"shop.orders"}]  update  {"timestamp_nanos":0,"incrementing":207,"timestamp":1733560000000}` + "\n"
	for b.Loop() {
		Fit(line, 120)
	}
}

func BenchmarkAppendFit(b *testing.B) {
	line := []byte(`  source  t1/0  {"filename":"/data/bulk/file-bulk-0000/part-000015.log"}  added  {"position":903603774}  (from connect-offsets/0 in the snapshot)` + "\n")
	var dst []byte
	for b.Loop() {
		dst = appendFitOnce(dst[:0], line)
	}
}

// appendFitOnce is one call of AppendFit, to be counted by a profiler.
//
//go:noinline
func appendFitOnce(dst, line []byte) []byte { return AppendFit(dst, line, 120) }

func BenchmarkFitReference(b *testing.B) {
	line := `  source  connect-offsets/7  ["jdbc-orders",{"protocol":"1","table":"shop.orders"}]  update  {"timestamp_nanos":0,"incrementing":207,"timestamp":1733560000000}` + "\n"
	for b.Loop() {
		fitReference(line, 120)
	}
}

// ascii finds a byte beyond ASCII wherever it is in the string.
func TestASCII(t *testing.T) {
	for n := 0; n < 40; n++ {
		s := strings.Repeat("a", n)
		if !ascii(s) {
			t.Fatalf("ascii(%q) = false", s)
		}
		if !ascii([]byte(s)) {
			t.Fatalf("ascii(%q as bytes) = false", s)
		}
		for i := 0; i < n; i++ {
			b := []byte(s)
			b[i] = 0x80 | byte(i)
			if ascii(string(b)) || ascii(b) {
				t.Fatalf("ascii(%q) = true", b)
			}
		}
	}
}
