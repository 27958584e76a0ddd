//go:build integration

package mgmt

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/broker"
	"github.com/warrenops/warren/testkit"
)

// The 4.3 broker's own TLS listeners (make services), reached through the
// config's [contexts.X.tls] files as warren reaches them: AMQPS through
// sources/broker, HTTPS through this package. Each way of getting TLS
// wrong fails with a line that names it.
func TestTLSListenersOfTheBrokerAcceptTheCAAndClientCertificateAndNameEachFault(t *testing.T) {
	b := testkit.TLS(t)
	expiredCert, expiredKey := b.ExpiredClient(t)
	cases := []struct {
		name string
		tls  config.TLS
		want string // "" = connects
	}{
		{"CA and client certificate connect", config.TLS{CAFile: b.CAFile, CertFile: b.CertFile, KeyFile: b.KeyFile}, ""},
		{"a CA that did not sign the broker's certificate", config.TLS{CAFile: testkit.OtherCA(t), CertFile: b.CertFile, KeyFile: b.KeyFile}, "not signed by a CA in tls.ca_file"},
		{"an expired client certificate", config.TLS{CAFile: b.CAFile, CertFile: expiredCert, KeyFile: expiredKey}, "client certificate (tls.cert_file) has expired"},
		{"no client certificate", config.TLS{CAFile: b.CAFile}, "requires a client certificate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := &config.Context{Name: "tls43", TLS: c.tls}
			check := func(what string, err error) {
				t.Helper()
				switch {
				case c.want == "" && err != nil:
					t.Errorf("%s: %v", what, err)
				case c.want != "" && err == nil:
					t.Errorf("%s connected; want a failure saying %q", what, c.want)
				case c.want != "" && !strings.Contains(err.Error(), c.want):
					t.Errorf("%s: %q does not say %q", what, err, c.want)
				}
			}
			cfg, err := ctx.TLSConfig()
			if err != nil {
				// Refused before dialing: the certificate is unusable.
				check("the context's TLS settings", err)
				return
			}

			conn, err := broker.Dial(broker.Options{URL: b.AMQPSURL, Username: "guest", Password: "guest", TLS: cfg, Timeout: 30 * time.Second})
			if err == nil {
				if _, cerr := conn.Channel(); cerr != nil {
					err = cerr
				}
				conn.Close()
			}
			check("AMQPS "+b.AMQPSURL, err)

			m, err := New(Options{URL: b.HTTPSURL, Username: "guest", Password: "guest", TLS: cfg, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ov, err := m.Overview(context.Background())
			check("HTTPS "+b.HTTPSURL, err)
			if err == nil && !strings.HasPrefix(ov.RabbitMQVersion, "4.3.") {
				t.Errorf("the HTTPS listener answered for RabbitMQ %q, want 4.3", ov.RabbitMQVersion)
			}
		})
	}
}
