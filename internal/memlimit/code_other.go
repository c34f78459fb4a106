//go:build !linux

package memlimit

// ReleaseCode does nothing outside Linux (see code_linux.go).
func ReleaseCode() {}
