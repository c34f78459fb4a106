package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
)

// version and commit are set at build time with
// -ldflags "-X main.version=v1.2.3 -X main.commit=<git commit>" (as
// deploy/Dockerfile does, where no VCS information reaches the build);
// otherwise they come from the build info go build records.
var (
	version = ""
	commit  = ""
)

// versionCommand is the version entry of the command table (main.go).
var versionCommand = commandInfo{
	name:    "version",
	summary: "print the version, commit and Go version",
	usage:   "",
	noKafka: true,
	new:     func(e *env) command { return &versionCmd{env: e} },
}

// programVersion is the version recorded in snapshots.
func programVersion() string {
	v, _, _ := buildVersion()
	return v
}

func buildVersion() (ver, rev, goVersion string) {
	ver, rev, goVersion = version, "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty {
			rev += "-dirty"
		}
	}
	if commit != "" {
		rev = commit
	}
	if ver == "" {
		ver = "dev"
	}
	return ver, rev, goVersion
}

type versionCmd struct{ *env }

func (c *versionCmd) Flags(fs *flag.FlagSet) {}

func (c *versionCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	v, commit, gov := buildVersion()
	fmt.Fprintf(c.stdout, "offsetkeeper %s (commit %s, %s)\n", v, commit, gov)
	return nil
}
