package english

import "testing"

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
