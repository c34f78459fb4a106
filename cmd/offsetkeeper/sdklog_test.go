package main

import "testing"

// Cloud SDK log lines reach stderr only with --log-level debug (issue 27:
// the AWS SDK printed "SDK ... WARN falling back to IMDSv1" under every
// command that opened an s3:// store without credentials).
func TestDebugLogging(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", false},
		{[]string{"list"}, "debug", true},
		{[]string{"list", "--log-level", "debug"}, "", true},
		{[]string{"--log-level=debug", "list"}, "", true},
		{[]string{"list", "--log-level", "info"}, "debug", false},
		{[]string{"list", "--log-level"}, "", false},
		{[]string{"restore", "--", "--log-level=debug"}, "", false},
	} {
		if got := debugLogging(c.args, c.env); got != c.want {
			t.Errorf("debugLogging(%q, %q) = %v, want %v", c.args, c.env, got, c.want)
		}
	}
}
