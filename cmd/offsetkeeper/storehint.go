package main

import (
	"flag"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/restore"
)

// storeHints are the commands errors name in quotes to look in the store
// with ("'offsetkeeper list' shows the stored snapshots"), and their flag
// sets. Named bare, they read the default store, not the one this run was
// given.
var storeHints = []struct {
	name  string
	flags func() *flag.FlagSet
}{
	{"list", func() *flag.FlagSet { return flagsOf(listCommand) }},
	{"verify", verifyFlags},
}

// withStoreSettings names the store commands err quotes with the settings
// this run was given on its command line (its --store, its encryption key's
// URL), as commands to paste on lines of their own; err is returned as it
// is when it quotes none, or the run was given none (the default store).
func withStoreSettings(err error, g *globals) error {
	msg := err.Error()
	var cmds []string
	for _, h := range storeHints {
		quoted := "'offsetkeeper " + h.name + "'"
		if !strings.Contains(msg, quoted) {
			continue
		}
		flags := g.settingFlags(h.flags())
		if len(flags) == 0 {
			continue
		}
		cmd := pasteable(append([]string{h.name}, flags...))
		msg = strings.ReplaceAll(msg, quoted, cmd)
		cmds = append(cmds, cmd)
	}
	if len(cmds) == 0 {
		return err
	}
	return &restore.AdvisedError{Err: reworded{err, msg}, Commands: cmds}
}

// reworded is an error with another message: its chain (what exit code it
// gives, what it is) is err's.
type reworded struct {
	err error
	msg string
}

func (e reworded) Error() string { return e.msg }
func (e reworded) Unwrap() error { return e.err }
