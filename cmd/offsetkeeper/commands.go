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
var restoreFlags = sync.OnceValue(func() *flag.FlagSet {
	fs, _ := newFlagSet(restoreCommand, &env{g: &globals{}})
	return fs
})

// commandSettings are what the restore commands this command prints carry
// (see restore.CommandSettings): the settings restore takes that were given
// on this command line, in the order of the flag set, and whether a
// Connect URL is known.
func (g *globals) commandSettings() restore.CommandSettings {
	s := restore.CommandSettings{Program: programName, ConnectURL: g.connect.given()}
	if l, err := g.topicLayout(); err == nil && l != nil {
		s.Layout = true
	}
	if g.fs == nil {
		return s
	}
	rfs := restoreFlags()
	g.fs.VisitAll(func(f *flag.Flag) {
		if !g.cmdLine[f.Name] || perRun[f.Name] || secretFlags[f.Name] || rfs.Lookup(f.Name) == nil {
			return
		}
		if f.Name == "encrypt-key" && strings.HasPrefix(f.Value.String(), "base64key://") {
			return // a key, not a KMS key's URL
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			s.Flags = append(s.Flags, "--"+f.Name+"="+f.Value.String())
			return
		}
		if l, ok := f.Value.(*listFlag); ok {
			for _, v := range *l {
				s.Flags = append(s.Flags, "--"+f.Name, v)
			}
			return
		}
		s.Flags = append(s.Flags, "--"+f.Name, f.Value.String())
	})
	return s
}

// noteCmdLine records the flags given on the command line, before the
// environment sets the others.
func (g *globals) noteCmdLine(fs *flag.FlagSet) {
	g.cmdLine = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { g.cmdLine[f.Name] = true })
}
