package main

import (
	"flag"
	"slices"
	"strings"
	"sync"
)

// shortFlags are the one-letter spellings of the most used flags: -o json
// is --output json. A command has the short flag when it has the long one
// (addGoFlags gives them to pflag). -h is cobra's: -h and --help print the
// help.
var shortFlags = map[string]string{"o": "output", "n": "dry-run", "c": "connector"}

// shortFor returns the short spelling of a long flag, or "".
func shortFor(long string) string {
	for s, l := range shortFlags {
		if l == long {
			return s
		}
	}
	return ""
}

// flagTakesValue maps the long name of every flag of every command (and
// help and version) to whether it takes a value.
var flagTakesValue = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{"help": false, "version": false}
	for _, info := range commands {
		fs, _ := newFlagSet(info, &env{g: &globals{}})
		fs.VisitAll(func(f *flag.Flag) {
			b, ok := f.Value.(interface{ IsBoolFlag() bool })
			m[f.Name] = !ok || !b.IsBoolFlag()
		})
	}
	return m
})

// gnuFlags rewrites the single-dash spelling of a long flag (-store URL,
// -dry-run, -help), which the standard flag package took, to the GNU one
// pflag takes (--store URL). A flag's value and what follows "--" are left
// alone.
func gnuFlags(args []string) []string {
	known := flagTakesValue()
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if long, ok := shortFlags[name]; ok && a[1] != '-' {
			name = long
		} else if _, ok := known[name]; ok && a[1] != '-' && len(name) > 1 {
			out[i] = "-" + a
		}
		if known[name] && !hasValue {
			i++ // its value
		}
	}
	return out
}
