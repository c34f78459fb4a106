package main

import "strings"

// flat is text as one line of its words, its shell continuations joined:
// what a test compares once the text wraps at 120 columns.
func flat(s string) string { return strings.Join(strings.Fields(joinContinued(s)), " ") }
