package main

import (
	"flag"
	"strings"
)

// shortFlags are the one-letter spellings of the most used flags: -o json
// is --output json. A command has the short flag when it has the long one.
// -h is the flag package's own: -h, --help and -help all print the help.
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

// expandShort rewrites the short flags in args to their long names (-o
// json, -o=json, -n), for the flags fs has; the value of a flag that takes
// one is left alone, and so is everything after "--".
func expandShort(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			out = append(out, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if long, ok := shortFlags[name]; ok && a[1] != '-' && fs.Lookup(long) != nil {
			name = long
			a = "--" + long
			if hasValue {
				a += "=" + value
			}
		}
		out = append(out, a)
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
