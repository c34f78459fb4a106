package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// credentialFlags are the file flags a systemd credential stands in for:
// the daemon uses $CREDENTIALS_DIRECTORY/<flag name>, when the unit passed
// it (LoadCredential=tls-ca:...), as --<flag name>. See
// deploy/systemd/offsetkeeper.service.
var credentialFlags = []string{"worker-config", "tls-ca", "tls-cert", "tls-key", "sasl-password-file"}

// fromCredentials sets each of credentialFlags that neither a flag nor its
// environment twin set to the systemd credential of its name in dir, if
// there is one, and returns the flags it set. --sasl-password (or its twin)
// rules out the sasl-password-file credential.
func (g *globals) fromCredentials(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	var set []string
	for _, name := range credentialFlags {
		if g.explicit(name) || (name == "sasl-password-file" && g.explicit("sasl-password")) {
			continue
		}
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return set, fmt.Errorf("read systemd credential %s: %w", p, err)
		}
		if err := g.fs.Set(name, p); err != nil {
			return set, fmt.Errorf("use systemd credential %s as --%s: %w", p, name, err)
		}
		set = append(set, name)
	}
	return set, nil
}
