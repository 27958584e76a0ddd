package config

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
)

// Without a config file warren talks to the local broker as guest, the
// way rabbitmqadmin does, so a first run needs no file at all.
const (
	LocalAMQPURL       = "amqp://localhost:5672/"
	LocalManagementURL = "http://localhost:15672"
	LocalUsername      = "guest"
	// LocalPasswordEnv holds the password when there is no config file;
	// unset, the password is guest's.
	LocalPasswordEnv = "WARREN_PASSWORD"
	localPassword    = "guest"
	// NoConfigName is the context name the audit log records for an
	// operation run without a config file.
	NoConfigName = "no config"
)

// Local is the context used when no config file is found: the local
// broker as guest, the password from WARREN_PASSWORD when it is set.
func Local() *Context {
	c := &Context{
		Name:          NoConfigName,
		AMQPURL:       LocalAMQPURL,
		ManagementURL: LocalManagementURL,
		Username:      LocalUsername,
		PasswordEnv:   LocalPasswordEnv,
		noConfig:      true,
	}
	c.applyDefaults()
	return c
}

// NoConfig reports whether c stands in for a missing config file.
func (c *Context) NoConfig() bool { return c.noConfig }

// Target is a one-off target given on the command line (--amqp-url,
// --management-url, --username). The password never comes from a flag.
type Target struct {
	AMQPURL       string
	ManagementURL string
	Username      string
}

// IsSet reports whether any part of the target was given.
func (t Target) IsSet() bool { return t != Target{} }

// Apply points c at t. A URL given alone brings the other endpoint to
// the same host on RabbitMQ's default port, so a one-off target is never
// half one broker and half another.
func (c *Context) Apply(t Target) error {
	if t.AMQPURL != "" {
		if msg := checkURL(t.AMQPURL, "amqp", "amqps", "amqp://rabbit.example:5672/"); msg != "" {
			return fmt.Errorf("--amqp-url %s", msg)
		}
	}
	if t.ManagementURL != "" {
		if msg := checkURL(t.ManagementURL, "http", "https", "http://rabbit.example:15672"); msg != "" {
			return fmt.Errorf("--management-url %s", msg)
		}
	}
	user, from, err := urlsUser(t.Username, "--username", "--amqp-url", t.AMQPURL, "--management-url", t.ManagementURL)
	if err != nil {
		return fmt.Errorf("%s %w", from, err)
	}
	switch {
	case t.AMQPURL != "" && t.ManagementURL != "":
		c.AMQPURL, c.ManagementURL = t.AMQPURL, t.ManagementURL
	case t.AMQPURL != "":
		c.AMQPURL = t.AMQPURL
		c.ManagementURL = sameHost(t.AMQPURL, map[string]string{"amqp": "http", "amqps": "https"},
			map[string]string{"http": "15672", "https": "15671"}, "")
	case t.ManagementURL != "":
		c.ManagementURL = t.ManagementURL
		c.AMQPURL = sameHost(t.ManagementURL, map[string]string{"http": "amqp", "https": "amqps"},
			map[string]string{"amqp": "5672", "amqps": "5671"}, "/")
	}
	if user != "" {
		c.Username = user
	}
	if t.AMQPURL != "" || t.ManagementURL != "" {
		// A one-off target is one node: the context's fallbacks may
		// belong to another cluster.
		c.FallbackAMQPURLs, c.FallbackManagementURLs = nil, nil
		c.adoptURLVhost()
	}
	return nil
}

// sameVhost says what is wrong with a fallback AMQP URL that names
// another vhost than the first node's: every node of a cluster serves
// the same vhosts, and a dial picks the vhost, not the URL.
func sameVhost(first, fallback string) string {
	path := func(raw string) string {
		if u, err := url.Parse(raw); err == nil {
			return strings.TrimPrefix(u.Path, "/")
		}
		return ""
	}
	b := path(fallback)
	if b == "" {
		return ""
	}
	if a := path(first); a != b {
		return fmt.Sprintf("names vhost %q where amqp_url names %q: a fallback is another node of the same cluster; leave its path out, or name the same vhost", b, cmp.Or(a, "/"))
	}
	return ""
}

// adoptURLVhost makes the vhost the AMQP URL names (other than the
// default, /) the context's vhost when the config sets none, so that
// amqp://rabbit/billing reads billing's queues, as it dials billing,
// not those of / (docs/ARCHITECTURE.md §6). A vhost the config sets
// stays.
func (c *Context) adoptURLVhost() {
	if c.Vhost != "" && !c.vhostFromURL {
		return
	}
	c.Vhost, c.vhostFromURL = "", false
	u, err := url.Parse(c.AMQPURL)
	if err != nil {
		return
	}
	if v := strings.TrimPrefix(u.Path, "/"); v != "" && v != "/" {
		c.Vhost, c.vhostFromURL = v, true
	}
}

// sameHost is raw's host under the paired scheme and its default port.
func sameHost(raw string, schemes, ports map[string]string, path string) string {
	u, _ := url.Parse(raw)
	scheme := schemes[u.Scheme]
	return (&url.URL{Scheme: scheme, Host: net.JoinHostPort(u.Hostname(), ports[scheme]), Path: path}).String()
}

// Where names what c points at for the header and text output: the
// context's name, or without a config file "local broker" or the
// one-off target's management host.
func (c *Context) Where() string {
	if !c.noConfig {
		return c.Name
	}
	if c.AMQPURL == LocalAMQPURL && c.ManagementURL == LocalManagementURL {
		return "local broker"
	}
	if u, err := url.Parse(c.ManagementURL); err == nil && u.Host != "" {
		return u.Host
	}
	return c.ManagementURL
}

// checkURL says what is wrong with raw as a URL of one of two schemes,
// as the end of a sentence naming the key or flag; "" when it is fine.
// A password in the URL is refused without quoting the URL.
func checkURL(raw, scheme, secure, example string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != scheme && u.Scheme != secure) || u.Host == "" {
		return fmt.Sprintf("must be an %s:// or %s:// URL such as %s, found %q", scheme, secure, example, redact(raw))
	}
	if _, hasPw := u.User.Password(); hasPw {
		return "must not contain a password, found one: keep it in the environment variable that password_env names"
	}
	return ""
}

// urlsUser is the user a login names: the username given (under the
// key or flag name), else the one the URLs name before their host
// (amqp://oncall@rabbit/), as a URL given to any RabbitMQ client names
// it. Two different users are refused rather than one picked in
// silence: the error names the first key or flag, which it leaves for
// the caller to put before it. Each URL comes after its name; "" for a
// URL not given.
func urlsUser(given, name string, urls ...string) (user, from string, err error) {
	user, from = given, name
	for i := 0; i+1 < len(urls); i += 2 {
		u, perr := url.Parse(urls[i+1])
		if perr != nil || u.User == nil || u.User.Username() == "" {
			continue
		}
		switch named := u.User.Username(); {
		case user == "":
			user, from = named, urls[i]
		case named != user:
			return "", from, fmt.Errorf("names user %q and %s names user %q: name the user once (in the URL, or in %s alone)",
				user, urls[i], named, name)
		}
	}
	return user, from, nil
}

// redact drops what looks like credentials from a URL that did not parse
// as one, so an error never quotes a password.
func redact(raw string) string {
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			return raw[:j+3] + "…" + raw[i:]
		}
		return "…" + raw[i:]
	}
	return raw
}

// localPasswordFor is the password without a config file: the
// variable's value when it is set, even empty, else guest's.
func localPasswordFor(env string) string {
	if v, ok := os.LookupEnv(env); ok {
		return v
	}
	return localPassword
}
