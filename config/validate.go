package config

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"
)

var environments = map[string]bool{"": true, "dev": true, "staging": true, "prod": true}

func (f *File) validate(data []byte) error {
	fail := func(key []string, format string, a ...any) error {
		// A key that is missing is placed at the table that lacks it.
		line := 0
		for n := len(key); n > 0 && line == 0; n-- {
			line = locate(data, toml.Key(key[:n]))
		}
		return &Error{Path: f.Path, Line: line, Key: strings.Join(key, "."), Msg: fmt.Sprintf(format, a...)}
	}
	if len(f.Contexts) == 0 {
		return &Error{Path: f.Path, Key: "contexts",
			Msg: "must hold at least one [contexts.NAME] table, found none (`warren config init` writes one)"}
	}
	if f.CurrentContext != "" {
		if _, ok := f.Contexts[f.CurrentContext]; !ok {
			return fail([]string{"current_context"}, "must name a context this file defines (%s), found %q, which is not defined",
				strings.Join(f.ContextNames(), ", "), f.CurrentContext)
		}
	}
	for _, name := range f.ContextNames() {
		c := f.Contexts[name]
		c.Name = name
		k := func(rest ...string) []string { return append([]string{"contexts", name}, rest...) }
		refresh := c.Refresh.Duration
		given := c.Username
		c.applyDefaults()
		if msg := checkURL(c.AMQPURL, "amqp", "amqps", "amqp://127.0.0.1:5672/"); msg != "" {
			return fail(k("amqp_url"), "%s", msg)
		}
		c.adoptURLVhost()
		if msg := checkURL(c.ManagementURL, "http", "https", "http://127.0.0.1:15672"); msg != "" {
			return fail(k("management_url"), "%s", msg)
		}
		named := []string{"amqp_url", c.AMQPURL, "management_url", c.ManagementURL}
		for i, raw := range c.FallbackAMQPURLs {
			msg := checkURL(raw, "amqp", "amqps", "amqp://rabbit-2:5672/")
			if msg == "" {
				msg = sameVhost(c.AMQPURL, raw)
			}
			if msg != "" {
				return fail(k("fallback_amqp_urls"), "entry %d %s", i+1, msg)
			}
			named = append(named, "fallback_amqp_urls", raw)
		}
		for i, raw := range c.FallbackManagementURLs {
			if msg := checkURL(raw, "http", "https", "http://rabbit-2:15672"); msg != "" {
				return fail(k("fallback_management_urls"), "entry %d %s", i+1, msg)
			}
			named = append(named, "fallback_management_urls", raw)
		}
		user, from, err := urlsUser(given, "username", named...)
		if err != nil {
			return fail(k(from), "%s", err)
		}
		if user != "" {
			c.Username = user
		}
		if c.MetricsURL != "" && c.MetricsURL != "off" {
			if msg := checkURL(c.MetricsURL, "http", "https", "http://127.0.0.1:15692"); msg != "" {
				return fail(k("metrics_url"), "%s; \"off\" turns the metrics endpoint off", msg)
			}
		}
		if strings.ContainsFunc(c.Operator, unicode.IsControl) {
			return fail(k("operator"), "is the name the audit log records and must hold no control character (a newline, an escape, a tab), found %s", strconv.Quote(c.Operator))
		}
		if !environments[c.Environment] {
			return fail(k("environment"), "must be \"dev\", \"staging\" or \"prod\", found %q", c.Environment)
		}
		if refresh != 0 && refresh < 200*time.Millisecond {
			return fail(k("refresh"), "must be at least \"200ms\", found %q", refresh.String())
		}
		if c.ConsumerTimeout.Duration < 0 || (c.ConsumerTimeout.Duration > 0 && c.ConsumerTimeout.Duration < time.Second) {
			return fail(k("consumer_timeout"), "must be the broker's consumer_timeout, at least \"1s\" (RabbitMQ's default is \"30m\"), found %q", c.ConsumerTimeout.String())
		}
		if c.ConfirmThreshold < 0 {
			return fail(k("confirm_threshold"), "must be a positive count, found %d", c.ConfirmThreshold)
		}
		switch {
		case c.Audit == "", c.Audit == "file", c.Audit == "postgres":
		case strings.HasPrefix(c.Audit, "file:") && len(c.Audit) > len("file:"):
		case strings.HasPrefix(c.Audit, "postgres:") && isIdent(strings.TrimPrefix(c.Audit, "postgres:")):
		default:
			return fail(k("audit"), "must be \"file\", \"file:PATH\", \"postgres\" or \"postgres:TABLE\", found %q", c.Audit)
		}
		if c.UsesPostgresAudit() && c.AuditDSNEnv == "" {
			return fail(k("audit_dsn_env"), "must name the environment variable holding the team store's DSN when audit = %q, found no audit_dsn_env", c.Audit)
		}
		if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
			return fail(k("tls", "cert_file"), "must come with key_file (set both or neither), found only one of them")
		}
		if err := validateSigningKey(c, k, fail); err != nil {
			return err
		}
		if err := validateConventions(c, k, fail); err != nil {
			return err
		}
		for i, q := range c.Queues {
			qk := func(rest ...string) []string { return append(k("queues"), rest...) }
			if q.Name == "" {
				return fail(qk("name"), "must be set in every queue entry, found none in entry %d", i+1)
			}
			if err := ValidateLogicalID(q.LogicalID); err != nil {
				return fail(qk("logical_id"), "of queue %q %v", q.Name, err)
			}
			if q.Inbox != nil {
				in := q.Inbox
				if in.DSNEnv == "" && in.DSNFile == "" {
					return fail(qk("inbox"), "of queue %q must have dsn_env or dsn_file, found neither", q.Name)
				}
				for _, col := range []struct{ key, val string }{{"table", in.Table}, {"id_column", in.IDColumn}, {"time_column", in.TimeColumn}} {
					if col.key == "time_column" && col.val == "" {
						continue
					}
					if !isIdent(col.val) {
						return fail(qk("inbox"), "of queue %q must have a %s that is an SQL identifier (letters, digits, _ and an optional schema.), found %q", q.Name, col.key, col.val)
					}
				}
			}
		}
	}
	return nil
}

// applyDefaults fills the keys a context leaves out.
func (c *Context) applyDefaults() {
	if c.Username == "" {
		c.Username = "guest"
	}
	if c.AMQPURL == "" {
		c.AMQPURL = DefaultAMQPURL
	}
	if c.ManagementURL == "" {
		c.ManagementURL = DefaultManagementURL
	}
	if c.Refresh.Duration == 0 {
		c.Refresh.Duration = DefaultRefresh
	}
	if c.ConfirmThreshold == 0 {
		c.ConfirmThreshold = DefaultConfirmThreshold
	}
	if c.ConsumerTimeout.Duration == 0 {
		c.ConsumerTimeout.Duration = DefaultConsumerTimeout
	}
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
	return fmt.Errorf("must be message_id, header:NAME or json:PATH, found %q", s)
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

// builtinConventions are the names warren's own conventions take, which a
// configured one may not.
var builtinConventions = []string{"broker", "spring", "masstransit", "nservicebus", "easynetq", "rascal", "watermill"}

// validateSigningKey checks that audit_signing_key, when set, names a
// private key file; the key itself is read when an operation signs.
func validateSigningKey(c *Context, k func(...string) []string, fail func([]string, string, ...any) error) error {
	switch p := c.AuditSigningKey; {
	case p == "", p == "ssh-agent":
	case strings.HasPrefix(p, "ssh-agent:") && !strings.HasPrefix(p, "ssh-agent:SHA256:"):
		return fail(k("audit_signing_key"), "must be \"ssh-agent\", \"ssh-agent:SHA256:…\" (a fingerprint as ssh-add -l prints it) or a key file, found %q", p)
	case strings.HasPrefix(p, "ssh-agent:"):
	case strings.TrimSpace(p) != p:
		return fail(k("audit_signing_key"), "must be a file path without surrounding spaces, found %q", p)
	case strings.HasSuffix(p, ".pub"):
		return fail(k("audit_signing_key"), "must name the private key file (ssh-keygen -t ed25519 writes it beside the .pub), found the public key %q", p)
	}
	return nil
}

func validateConventions(c *Context, k func(...string) []string, fail func([]string, string, ...any) error) error {
	seen := map[string]bool{}
	for i, cv := range c.Conventions {
		ck := func(rest ...string) []string { return append(k("conventions"), rest...) }
		switch {
		case strings.TrimSpace(cv.Name) == "":
			return fail(ck("name"), "must be set in every convention, found none in entry %d", i+1)
		case seen[cv.Name]:
			return fail(ck("name"), "must be unique, found %q twice", cv.Name)
		case slices.Contains(builtinConventions, strings.ToLower(cv.Name)):
			return fail(ck("name"), "%q is a convention warren reads already; name yours otherwise", cv.Name)
		}
		seen[cv.Name] = true
		fields := cv.Fields()
		if len(fields) == 0 {
			return fail(ck("name"), "convention %q maps no header: set error_message, error_type, origin_queue or another field to a header name", cv.Name)
		}
		if fields["error_message"] == "" && fields["error_type"] == "" && fields["origin_queue"] == "" && fields["origin_routing_key"] == "" {
			return fail(ck("name"), "convention %q must map error_message, error_type, origin_queue or origin_routing_key: the others alone say nothing of a failure", cv.Name)
		}
		for field, p := range fields {
			if strings.TrimSpace(p) != p || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") {
				return fail(ck(field), "of convention %q must be a header name, or names joined by dots into nested tables, found %q", cv.Name, p)
			}
		}
		for _, q := range cv.Queues {
			if _, err := path.Match(q, ""); err != nil || q == "" {
				return fail(ck("queues"), "of convention %q must be queue names or patterns such as \"*_failed\", found %q", cv.Name, q)
			}
		}
	}
	return nil
}
