package app

import (
	"net"
	"net/url"
	"strings"

	"github.com/warrenops/warren/config"
)

// PlaintextWarning is the warning for a production context that reaches
// its broker in clear text on another machine: over plain amqp:// or
// http:// the password and every message read or moved cross the network
// unencrypted. "" for any other context, and for a loopback host, where
// nothing leaves the machine.
func PlaintextWarning(c *config.Context) string {
	if !c.IsProd() {
		return ""
	}
	var plain []string
	for _, raw := range []string{c.AMQPURL, c.ManagementURL} {
		if plaintextRemote(raw) {
			plain = append(plain, RedactURL(raw))
		}
	}
	if len(plain) == 0 {
		return ""
	}
	return "production context over plain " + strings.Join(plain, " and ") +
		": the password and the messages cross the network unencrypted; use amqps:// and https:// (tls in the config)"
}

// plaintextRemote reports whether raw is an amqp:// or http:// URL to a
// host other than this machine. Names are not resolved: only localhost
// and loopback addresses count as this machine.
func plaintextRemote(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "amqp" && u.Scheme != "http") {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// RedactURL drops any userinfo, so no credential reaches the output.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}
