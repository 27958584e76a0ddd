package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Password returns the management/AMQP password from the environment
// variable or file the context names. An unset source yields "" (the
// broker then answers with bad credentials, which is reported as such).
func (c *Context) Password() (string, error) {
	if c.noConfig {
		return localPasswordFor(c.PasswordEnv), nil
	}
	if c.PasswordEnv == "" && c.PasswordFile == "" {
		// No source named: warren's own variable, which no file chose
		// (a project's warren.toml may not name one).
		return secret(LocalPasswordEnv, "", "", "password")
	}
	return secret(c.PasswordEnv, c.PasswordFile, "password_file", "password")
}

// PasswordHint says what to check when the broker refuses the
// credentials, naming where the password came from; an unset variable
// is named as such, since an empty password is then sent.
func (c *Context) PasswordHint() string {
	if c.noConfig {
		if _, ok := os.LookupEnv(c.PasswordEnv); ok {
			return fmt.Sprintf("no config file: check the username and the password in %s", c.PasswordEnv)
		}
		return fmt.Sprintf("no config file, so warren tried guest's password: export the password in %s, or write a config with `warren config init`", c.PasswordEnv)
	}
	if c.PasswordEnv != "" {
		if _, ok := os.LookupEnv(c.PasswordEnv); ok {
			return fmt.Sprintf("check username and the password in %s (password_env)", c.PasswordEnv)
		}
		if c.PasswordFile == "" {
			return fmt.Sprintf("the environment variable %s (password_env) is not set: export the password there", c.PasswordEnv)
		}
	}
	if c.PasswordFile != "" {
		return fmt.Sprintf("check username and the password in %s (password_file)", c.PasswordFile)
	}
	if _, ok := os.LookupEnv(LocalPasswordEnv); ok {
		return fmt.Sprintf("the context names no password source, so the password in %s was sent: check it and the username", LocalPasswordEnv)
	}
	return fmt.Sprintf("the context names no password source and %s is not set: export the password there (or, in your own config, set password_env or password_file)", LocalPasswordEnv)
}

// AuditDSN returns the team audit store's DSN.
func (c *Context) AuditDSN() (string, error) {
	if !c.UsesPostgresAudit() {
		return "", nil
	}
	dsn, err := secret(c.AuditDSNEnv, "", "", "audit DSN")
	if err == nil && dsn == "" {
		err = fmt.Errorf("audit = \"postgres\" but environment variable %s is empty; export the team store's DSN there", c.AuditDSNEnv)
	}
	return dsn, err
}

// UsesPostgresAudit reports whether the context keeps the team audit
// store in PostgreSQL ("postgres" or "postgres:TABLE").
func (c *Context) UsesPostgresAudit() bool {
	return c.Audit == "postgres" || strings.HasPrefix(c.Audit, "postgres:")
}

// DSN returns the inbox database DSN, or "" when its variable is unset.
func (in *Inbox) DSN() (string, error) {
	return secret(in.DSNEnv, in.DSNFile, "dsn_file", "inbox DSN")
}

// secret is the value of the variable env when it is set, else the
// contents of file (which fileKey names in an error), else "".
func secret(env, file, fileKey, what string) (string, error) {
	if env != "" {
		if v, ok := os.LookupEnv(env); ok {
			return v, nil
		}
	}
	if file != "" {
		b, err := readPrivate(fileKey, file)
		if errors.Is(err, ErrRefused) {
			return "", err
		}
		if err != nil {
			return "", fmt.Errorf("reading %s from %s: %w", what, file, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return "", nil
}
