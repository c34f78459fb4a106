package store

import (
	"os"
	"path/filepath"
)

// nearStore returns a directory beside the missing dir whose name is one
// or two edits from its name and that holds a store (a snapshots/ or
// journal/ directory), or "": a mistyped --store is answered with the
// store the operator meant.
func nearStore(dir string) string {
	parent, name := filepath.Split(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return ""
	}
	best, bestDist := "", 3
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		d := editDistance(name, e.Name())
		if d == 0 || d >= bestDist {
			continue
		}
		cand := filepath.Join(parent, e.Name())
		for _, sub := range []string{"snapshots", "journal"} {
			if st, err := os.Stat(filepath.Join(cand, sub)); err == nil && st.IsDir() {
				best, bestDist = cand, d
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
