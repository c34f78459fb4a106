package main

// unknownCommandHint is what follows "unknown command" on stderr: for
// the words an operator reaches for in a hurry, where the thing they want
// lives; else the pointer to --help.
func unknownCommandHint(name string) string {
	switch name {
	case "undo", "rollback", "revert":
		return "Every restore takes an undo snapshot first and prints its ID. 'offsetkeeper list --kind undo' lists them\n" +
			"(newest last) and 'offsetkeeper events' shows the restores; 'offsetkeeper restore' with an undo snapshot's\n" +
			"ID puts the offsets back as they were before that restore.\n"
	case "backup":
		return "'offsetkeeper snapshot' takes a snapshot now; 'offsetkeeper daemon' takes them on a schedule.\n"
	case "ls", "snapshots":
		return "'offsetkeeper list' lists the stored snapshots.\n"
	}
	return "Run 'offsetkeeper --help' for the commands.\n"
}
