package kafkaconf

import (
	"bufio"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestParsePropertiesMatchesJava runs java.util.Properties over random inputs
// built from the characters the format cares about and checks that
// ParseProperties reads the same. It needs a JDK (java on PATH) and is skipped
// without one or with -short.
func TestParsePropertiesMatchesJava(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java on PATH")
	}
	const alphabet = "ab=: \t\f\\\\\n\r#!u0eE8\xe9"
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs []string
	for _, s := range []string{"a=b", "a\\\n b", "# c\n!d\ne:f", `\u0041=\t`, "k\\ey v\r\n", "\\\n#x\ny", "a\\\r\n\r\nb"} {
		inputs = append(inputs, s)
	}
	for range 500 {
		n := rng.IntN(40)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		inputs = append(inputs, string(b))
	}
	dir := t.TempDir()
	args := []string{filepath.Join("testdata", "PropsDump.java")}
	for i, in := range inputs {
		p := filepath.Join(dir, fmt.Sprintf("%03d.properties", i))
		if err := os.WriteFile(p, []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := exec.Command(java, args...).Output()
	if err != nil {
		t.Skipf("java %s: %v", args[0], err) // a JRE without the source launcher
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for i, in := range inputs {
		if !sc.Scan() {
			t.Fatalf("java printed %d lines for %d inputs", i, len(inputs))
		}
		want := sc.Text()
		got := "ERR"
		if props, err := ParseProperties(strings.NewReader(in)); err == nil {
			hexed := make(map[string]string, len(props))
			for k, v := range props {
				hexed[utf16Hex(k)] = utf16Hex(v)
			}
			var entries []string
			for _, k := range slices.Sorted(maps.Keys(hexed)) {
				entries = append(entries, k+"="+hexed[k])
			}
			got = strings.Join(entries, " ")
		}
		if got != want {
			t.Errorf("input %q:\n go   %s\n java %s", in, got, want)
		}
	}
}

func utf16Hex(s string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		b.WriteString(hex4(u))
	}
	return b.String()
}
