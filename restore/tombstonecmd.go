package restore

import (
	"bytes"
	"strconv"
)

// tombstoneCommand is the kcat command that writes a tombstone for key to
// partition part of topic, through bootstrap: the exact key bytes, then a
// tab (-K), and an empty value sent as null (-Z). It is "" when the brokers
// are not known, or the key holds a tab or a line break (a line of kcat's
// input cannot carry it). A secured cluster needs kcat's -X settings too.
func tombstoneCommand(bootstrap, topic string, part int32, key []byte) string {
	if bootstrap == "" || len(key) == 0 || bytes.ContainsAny(key, "\t\n\r") {
		return ""
	}
	return "printf '%s\\t\\n' " + ShellQuote(string(key)) + " | kcat -P -b " + ShellQuote(bootstrap) + " -t " + ShellQuote(topic) +
		" -p " + strconv.Itoa(int(part)) + " -K '\\t' -Z"
}
