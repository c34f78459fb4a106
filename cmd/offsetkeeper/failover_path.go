package main

import "github.com/offsetkeeper/offsetkeeper/restore"

// restSegment is connector name as a path segment of a Connect REST URL
// that a printed curl command carries safely (restore.RESTPathSegment).
func restSegment(name string) string { return restore.RESTPathSegment(name) }
