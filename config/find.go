package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Located is the config file warren reads, and the files it found in the
// working directory and did not read.
type Located struct {
	Path string
	// Own is true for a file named with --config and for the user's own
	// config: only such a file may say where a secret comes from.
	Own     bool
	Ignored []Ignored
	data    []byte // the contents that were checked against the trust record
}

// Ignored is a config file found in the working directory and not read.
type Ignored struct {
	Path    string // as looked up: "warren.toml"
	Changed bool   // trusted once, with other contents
	Err     error  // the record of trusted configs could not be believed
}

// String is the notice warren prints, in one line, naming the command
// that trusts the file.
func (i Ignored) String() string {
	p := shown(i.Path)
	switch {
	case i.Err != nil:
		return fmt.Sprintf("found %s and ignored it: %v; then `warren config trust %s` trusts it", p, i.Err, p)
	case i.Changed:
		return fmt.Sprintf("found %s and ignored it: it changed since you trusted it; review it, then run `warren config trust %s` again", p, p)
	}
	return fmt.Sprintf("found %s and ignored it: a config in the working directory is read only once you trust it; review it, then run `warren config trust %s` (or pass --config %s)", p, p, p)
}

// Short is the notice in a few words, for the dashboard's header.
func (i Ignored) Short() string {
	p := shown(i.Path)
	switch {
	case i.Err != nil:
		return p + " ignored"
	case i.Changed:
		return p + " ignored: changed since trusted"
	}
	return p + " ignored: not trusted"
}

// Locate finds the config to read: explicit when set (it must exist),
// else the first of Candidates that exists and may be read. The one in
// the working directory is read only when the trust record holds its
// path with its present sha256 (Trust); otherwise it is listed in
// Ignored and the next candidate is tried. With none found the error is
// ErrNotFound, and Ignored still says what was passed over.
func Locate(explicit string) (Located, error) {
	if explicit != "" {
		data, err := os.ReadFile(explicit)
		if err != nil {
			return Located{}, fmt.Errorf("config file %s: %w", explicit, errors.Unwrap(err))
		}
		return Located{Path: explicit, Own: true, data: data}, nil
	}
	var l Located
	own := ownCandidate()
	for _, p := range Candidates() {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return l, fmt.Errorf("config file %s: %w", p, errors.Unwrap(err))
		}
		if p == own {
			l.Path, l.Own, l.data = p, true, data
			return l, nil
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return l, err
		}
		state, err := trustOf(abs, Sum(data))
		if state == trusted {
			l.Path, l.data = p, data
			return l, nil
		}
		l.Ignored = append(l.Ignored, Ignored{Path: p, Changed: state == changed, Err: err})
	}
	return l, fmt.Errorf("%w (looked at %s); `warren config init` writes one, or pass --config",
		ErrNotFound, strings.Join(Candidates(), ", "))
}

// Load parses and validates the located file: the very contents the
// trust record was checked against. A file that is not the user's own
// may not say where a secret comes from.
func (l Located) Load() (*File, error) {
	f, err := Parse(l.Path, l.data)
	if err != nil {
		return nil, err
	}
	if !l.Own {
		if err := f.chosenSecrets(l.data); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// ownCandidate is the user's own config, the last of Candidates; "" when
// there is no home to hold one.
func ownCandidate() string {
	c := Candidates()
	if len(c) < 2 {
		return ""
	}
	return c[len(c)-1]
}

// shown is a path as the operator would type it: "./warren.toml".
func shown(p string) string {
	if filepath.IsAbs(p) || strings.HasPrefix(p, ".") {
		return p
	}
	return "./" + p
}

// chosenSecrets refuses the first key of a file that is not the user's
// own that says where a secret comes from. A cloned repository's
// warren.toml, even trusted, may name the broker and the queues, but if
// it could name password_env it could have AWS_SECRET_ACCESS_KEY's value
// sent as the password to a URL of its choosing.
func (f *File) chosenSecrets(data []byte) error {
	type source struct{ key, value, what string }
	for _, name := range f.ContextNames() {
		c := f.Contexts[name]
		sources := []source{
			{"password_env", c.PasswordEnv, "which environment variable's value is sent as the password"},
			{"password_file", c.PasswordFile, "which file's contents are sent as the password"},
			{"audit_dsn_env", c.AuditDSNEnv, "which environment variable's value is used as the audit store's DSN"},
			{"audit_signing_key", c.AuditSigningKey, "which of your private keys signs the audit log"},
		}
		if path, ok := strings.CutPrefix(c.Audit, "file:"); ok {
			// Any file the operator can write would take warren's records.
			sources = append(sources, source{"audit", path, "which file warren appends its audit records to"})
		}
		for _, q := range c.Queues {
			if q.Inbox != nil {
				sources = append(sources,
					source{"queues.inbox.dsn_env", q.Inbox.DSNEnv, "which environment variable's value is used as an inbox's DSN"},
					source{"queues.inbox.dsn_file", q.Inbox.DSNFile, "which file's contents are used as an inbox's DSN"})
			}
		}
		for _, s := range sources {
			if s.value == "" {
				continue
			}
			key := toml.Key(append([]string{"contexts", name}, strings.Split(s.key, ".")...))
			yours := "your own config"
			if own := ownCandidate(); own != "" {
				yours += " (" + own + ")"
			}
			// A key in an inline table is placed at the line that opens it.
			line := 0
			for n := len(key); n > 0 && line == 0; n-- {
				line = locate(data, key[:n])
			}
			p := shown(f.Path)
			return refusal{&Error{Path: f.Path, Line: line, Key: key.String(),
				Msg: fmt.Sprintf("is refused: a config found in the working directory may not choose %s, even once trusted (it names %q); put this context in %s, or pass --config %s to read this file as yours",
					s.what, s.value, yours, p)}}
		}
	}
	return nil
}
