package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
)

// runningRefusal is err with failover's own advice when the check refused
// for connectors of the state that run on the standby while it does not
// hold their state (started there by someone, they moved on): the
// check's own advice ("stop them on the standby, or they were started
// there: fail over instead") sends a failover to itself. It prints the
// stops on the standby and this failover again, which then writes the
// primary's state for them; --connector fails over only the others.
func (c *failoverCmd) runningRefusal(err error) error {
	var re *standby.RunningError
	if !errors.As(err, &re) {
		return err
	}
	var names, cmds []string
	for _, f := range re.Running {
		names = append(names, f.Connector+" ("+f.Why+")")
	}
	base := "$STANDBY_CONNECT_URL"
	if len(c.standby.connectURLs) > 0 {
		base = strings.TrimRight(splitList(c.standby.connectURLs[0])[0], "/")
	}
	for _, f := range re.Running {
		u := base + "/connectors/" + restSegment(f.Connector) + "/stop"
		if base == "$STANDBY_CONNECT_URL" {
			cmds = append(cmds, restore.Curl+` -X PUT "`+u+`"`)
		} else {
			cmds = append(cmds, restore.Curl+" -X PUT "+restore.ShellQuote(u))
		}
	}
	again := fmt.Sprintf("run the same %s again;", c.by)
	if words := c.againCommand(); words != nil {
		cmds = append(cmds, strings.Join(words, " "))
		again = "run it again: " + cmds[len(cmds)-1] + ";"
	}
	return &restore.AdvisedError{Err: refusedError(fmt.Sprintf("%s refused, nothing was written, no fence stored: "+
		"connectors of the primary's state run on the standby, which does not hold their state (started there, they "+
		"have moved on from it): %s. To give them the primary's state, stop them on the standby: %s; then %s "+
		"to keep them as they run, fail over only the others (--connector NAME, repeatable)",
		c.by, strings.Join(names, ", "), strings.Join(cmds[:len(re.Running)], "; "), again)), Commands: cmds}
}
