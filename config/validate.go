package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/BurntSushi/toml"
)

// Error is a config error that names the file, the line and the key.
type Error struct {
	Path string
	Line int // 0 when unknown
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": key %s", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func decodeError(path string, data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line := pe.Position.Line
		// The parser counts a newline it stopped at as the next line;
		// the byte offset says where the fault really is.
		if off := pe.Position.Start; off > 0 && off <= len(data) {
			line = 1 + strings.Count(string(data[:off]), "\n")
		}
		return &Error{Path: path, Line: line, Key: pe.LastKey, Msg: "invalid TOML: " + pe.Message}
	}
	// Type mismatches come back as plain errors that already name the
	// key; find its line ourselves.
	msg := err.Error()
	key := ""
	if i := strings.Index(msg, "(last key \""); i >= 0 {
		rest := msg[i+len("(last key \""):]
		if j := strings.Index(rest, "\""); j >= 0 {
			key = rest[:j]
		}
	}
	msg = strings.TrimPrefix(msg, "toml: ")
	if key != "" {
		return &Error{Path: path, Line: locate(data, toml.Key(strings.Split(key, "."))), Key: key, Msg: msg}
	}
	return &Error{Path: path, Msg: msg}
}

var environments = map[string]bool{"": true, "dev": true, "staging": true, "prod": true}

func (f *File) validate(data []byte) error {
	fail := func(key []string, format string, a ...any) error {
		return &Error{Path: f.Path, Line: locate(data, toml.Key(key)), Key: strings.Join(key, "."), Msg: fmt.Sprintf(format, a...)}
	}
	if len(f.Contexts) == 0 {
		return &Error{Path: f.Path, Key: "contexts", Msg: "expected at least one [contexts.NAME] table"}
	}
	if f.CurrentContext != "" {
		if _, ok := f.Contexts[f.CurrentContext]; !ok {
			return fail([]string{"current_context"}, "names context %q, which is not defined; known: %s",
				f.CurrentContext, strings.Join(f.ContextNames(), ", "))
		}
	}
	for _, name := range f.ContextNames() {
		c := f.Contexts[name]
		c.Name = name
		k := func(rest ...string) []string { return append([]string{"contexts", name}, rest...) }
		if c.Username == "" {
			c.Username = "guest"
		}
		if c.AMQPURL == "" {
			c.AMQPURL = DefaultAMQPURL
		}
		if c.ManagementURL == "" {
			c.ManagementURL = DefaultManagementURL
		}
		if u, err := url.Parse(c.AMQPURL); err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") || u.Host == "" {
			return fail(k("amqp_url"), "expected an amqp:// or amqps:// URL such as \"amqp://127.0.0.1:5672/\"")
		} else if _, hasPw := u.User.Password(); hasPw {
			return fail(k("amqp_url"), "contains a password; put it in the environment variable named by password_env instead")
		}
		if u, err := url.Parse(c.ManagementURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fail(k("management_url"), "expected an http:// or https:// URL such as \"http://127.0.0.1:15672\"")
		} else if _, hasPw := u.User.Password(); hasPw {
			return fail(k("management_url"), "contains a password; put it in the environment variable named by password_env instead")
		}
		if !environments[c.Environment] {
			return fail(k("environment"), "expected \"dev\", \"staging\" or \"prod\", got %q", c.Environment)
		}
		if c.Refresh.Duration == 0 {
			c.Refresh.Duration = DefaultRefresh
		} else if c.Refresh.Duration < 200_000_000 {
			return fail(k("refresh"), "expected at least \"200ms\", got %q", c.Refresh.String())
		}
		if c.ConfirmThreshold == 0 {
			c.ConfirmThreshold = DefaultConfirmThreshold
		} else if c.ConfirmThreshold < 0 {
			return fail(k("confirm_threshold"), "expected a positive count")
		}
		switch {
		case c.Audit == "", c.Audit == "file", c.Audit == "postgres":
		case strings.HasPrefix(c.Audit, "file:") && len(c.Audit) > len("file:"):
		case strings.HasPrefix(c.Audit, "postgres:") && isIdent(strings.TrimPrefix(c.Audit, "postgres:")):
		default:
			return fail(k("audit"), "expected \"file\", \"file:PATH\", \"postgres\" or \"postgres:TABLE\", got %q", c.Audit)
		}
		if c.UsesPostgresAudit() && c.AuditDSNEnv == "" {
			return fail(k("audit_dsn_env"), "audit = \"postgres\" needs audit_dsn_env, the environment variable holding the DSN")
		}
		if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
			return fail(k("tls", "cert_file"), "cert_file and key_file go together; set both or neither")
		}
		for i, q := range c.Queues {
			qk := func(rest ...string) []string { return append(k("queues"), rest...) }
			if q.Name == "" {
				return fail(qk("name"), "queue entry %d has no name", i+1)
			}
			if err := ValidateLogicalID(q.LogicalID); err != nil {
				return fail(qk("logical_id"), "queue %q: %v", q.Name, err)
			}
			if q.Inbox != nil {
				in := q.Inbox
				if in.DSNEnv == "" && in.DSNFile == "" {
					return fail(qk("inbox"), "queue %q: inbox needs dsn_env or dsn_file", q.Name)
				}
				if !isIdent(in.Table) || !isIdent(in.IDColumn) || (in.TimeColumn != "" && !isIdent(in.TimeColumn)) {
					return fail(qk("inbox"), "queue %q: inbox table, id_column and time_column must be SQL identifiers (letters, digits, _ and an optional schema.)", q.Name)
				}
			}
		}
	}
	return nil
}

// ValidateLogicalID checks a logical ID source: "", message_id,
// header:NAME or json:PATH.
func ValidateLogicalID(s string) error {
	switch {
	case s == "", s == "message_id":
		return nil
	case strings.HasPrefix(s, "header:") && len(s) > len("header:"):
		return nil
	case strings.HasPrefix(s, "json:") && len(s) > len("json:"):
		return nil
	}
	return fmt.Errorf("expected message_id, header:NAME or json:PATH, got %q", s)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		for i, r := range p {
			ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
			if !ok {
				return false
			}
		}
	}
	return true
}
