package kafkaconf

import (
	"bufio"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	// The source launcher (java File.java) came with Java 11: an older
	// java is a reason to skip; any error from a newer one is a failure.
	if major, err := javaMajor(java); err != nil {
		t.Fatalf("java -version: %v", err)
	} else if major < 11 {
		t.Skipf("java %d has no source launcher (Java 11 or later runs %s)", major, args[0])
	}
	var stderr strings.Builder
	cmd := exec.Command(java, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java %s: %v\n%s", args[0], err, stderr.String())
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

// javaMajor is the feature release of java from `java -version`
// ("1.8.0_402" is 8, "17.0.2" is 17).
func javaMajor(java string) (int, error) {
	out, err := exec.Command(java, "-version").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%w: %s", err, out)
	}
	m := regexp.MustCompile(`version "(?:1\.)?(\d+)`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no version in %q", out)
	}
	return strconv.Atoi(string(m[1]))
}

func utf16Hex(s string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		b.WriteString(hex4(u))
	}
	return b.String()
}
