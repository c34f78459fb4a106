package main

import (
	"flag"
	"regexp"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/restore"
)

// storeHint matches a store command an error names in quotes ("'offsetkeeper
// list' shows the stored snapshots", "'offsetkeeper unpin ID' first"): named
// bare, it reads the default store, not the one this run was given.
var storeHint = regexp.MustCompile(`'offsetkeeper (list|verify|show|unpin|delete)((?: [^' ]+)*)'`)

// storeHintFlags are the flag sets of the commands storeHint matches.
var storeHintFlags = map[string]func() *flag.FlagSet{
	"list":   func() *flag.FlagSet { return flagsOf(listCommand) },
	"verify": verifyFlags,
	"show":   func() *flag.FlagSet { return flagsOf(showCommand) },
	"unpin":  func() *flag.FlagSet { return flagsOf(unpinCommand) },
	"delete": func() *flag.FlagSet { return flagsOf(deleteCommand) },
}

// withStoreSettings names the store commands err quotes with the settings
// this run was given on its command line (its --store, its encryption key's
// URL), as commands to paste on lines of their own; err is returned as it
// is when it quotes none, or the run was given none (the default store).
func withStoreSettings(err error, g *globals) error {
	var cmds []string
	msg := storeHint.ReplaceAllStringFunc(err.Error(), func(quoted string) string {
		m := storeHint.FindStringSubmatch(quoted)
		flags := g.settingFlags(storeHintFlags[m[1]]())
		if len(flags) == 0 {
			return quoted
		}
		cmd := pasteable(append(append([]string{m[1]}, strings.Fields(m[2])...), flags...))
		cmds = append(cmds, cmd)
		return cmd
	})
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
