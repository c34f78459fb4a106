package main

import (
	"flag"
	"strings"
	"sync"

	"github.com/offsetkeeper/offsetkeeper/restore"
)

// programName is how printed commands name the program: as it was run
// (main sets it), "offsetkeeper" in tests.
var programName = "offsetkeeper"

// secretFlags are never repeated in a printed command: it would put the
// secret on the screen and in the shell's history. The command says to
// give them again (or set their environment twin).
var secretFlags = map[string]bool{"sasl-password": true, "connect-password": true, "connect-token": true,
	"standby-sasl-password": true, "standby-connect-password": true, "standby-connect-token": true}

// restoreFlags is restore's flag set, to tell which settings a printed
// restore command can repeat.
var restoreFlags = sync.OnceValue(func() *flag.FlagSet { return flagsOf(restoreCommand) })

// flagsOf is the flag set of the command of info.
func flagsOf(info commandInfo) *flag.FlagSet {
	fs, _ := newFlagSet(info, &env{g: &globals{}})
	return fs
}

// commandSettings are what the restore commands this command prints carry
// (see restore.CommandSettings): the settings restore takes that were given
// on this command line, in the order of the flag set, and whether a
// Connect URL is known.
func (g *globals) commandSettings() restore.CommandSettings {
	s := restore.CommandSettings{Program: programName, ConnectURL: g.connect.given()}
	if l, err := g.topicLayout(); err == nil && l != nil {
		s.Layout = true
	}
	s.Flags = g.settingFlags(restoreFlags())
	return s
}

// settingFlags are the settings given on this command line that every
// flag set of takes also has, as arguments that repeat them ("--store",
// "file:///x", "--tls=true"), in the order of the flag set: never a
// per-run choice, a secret or an encryption key itself.
func (g *globals) settingFlags(takes ...*flag.FlagSet) []string {
	if g.fs == nil {
		return nil
	}
	var out []string
	g.fs.VisitAll(func(f *flag.Flag) {
		if !g.cmdLine[f.Name] || perRun[f.Name] || secretFlags[f.Name] {
			return
		}
		for _, fs := range takes {
			if fs.Lookup(f.Name) == nil {
				return
			}
		}
		if f.Name == "encrypt-key" && strings.HasPrefix(f.Value.String(), "base64key://") {
			return // a key, not a KMS key's URL
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			out = append(out, "--"+f.Name+"="+f.Value.String())
			return
		}
		if l, ok := f.Value.(*listFlag); ok {
			for _, v := range *l {
				out = append(out, "--"+f.Name, v)
			}
			return
		}
		out = append(out, "--"+f.Name, f.Value.String())
	})
	return out
}

// noteCmdLine records the flags given on the command line, before the
// environment sets the others.
func (g *globals) noteCmdLine(fs *flag.FlagSet) {
	g.cmdLine = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { g.cmdLine[f.Name] = true })
}
