//go:build integration

package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/testkit"
)

const brokerAddr = "127.0.0.1:5672"

func TestDialExplainsWhatWentWrong(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"wrong password is bad credentials", Options{URL: "amqp://" + brokerAddr + "/", Username: "guest", Password: "not-the-password-x9"}, "bad credentials for user \"guest\""},
		{"unknown vhost", Options{URL: "amqp://" + brokerAddr + "/", Username: "guest", Password: "guest", Vhost: "no-such-vhost-warren"}, "vhost \"no-such-vhost-warren\""},
		{"nothing listening", Options{URL: "amqp://127.0.0.1:1/", Username: "guest", Password: "guest"}, "unreachable"},
		{"amqps against the plain port", Options{URL: "amqps://" + brokerAddr + "/", Username: "guest", Password: "guest", TLS: &tls.Config{}},
			"does not speak TLS on this port; use an amqp:// URL"},
		{"a port that is not AMQP (PostgreSQL's)", Options{URL: "amqp://127.0.0.1:5432/", Username: "guest", Password: "guest"},
			"what answers there does not speak AMQP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := Dial(c.o)
			if err == nil {
				conn.Close()
				t.Fatal("dial succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
			if c.o.Password != "" && strings.Contains(err.Error(), c.o.Password) && c.o.Password != "guest" {
				t.Fatalf("error leaks the password: %v", err)
			}
		})
	}
}

func TestDialConnectsToTheRealBroker(t *testing.T) {
	conn, err := Dial(Options{URL: "amqp://" + brokerAddr + "/", Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatalf("RabbitMQ must be running on %s (make services): %v", brokerAddr, err)
	}
	conn.Close()
}

func TestDialOverTLSWithCAAndClientCertificate(t *testing.T) {
	pki := newTestPKI(t)
	front := startTLSFront(t, pki, brokerAddr)
	caPEM, _ := os.ReadFile(pki.CAFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	clientCert, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	url := "amqps://" + front + "/"

	t.Run("verified CA and client certificate connect", func(t *testing.T) {
		conn, err := Dial(Options{URL: url, Username: "guest", Password: "guest",
			TLS: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientCert}, ServerName: "127.0.0.1"}})
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		ch, err := conn.Channel()
		if err != nil {
			t.Fatalf("channel over TLS: %v", err)
		}
		ch.Close()
		conn.Close()
	})
	t.Run("unknown CA is refused without insecure_skip_verify", func(t *testing.T) {
		conn, err := Dial(Options{URL: url, Username: "guest", Password: "guest",
			TLS: &tls.Config{Certificates: []tls.Certificate{clientCert}, ServerName: "127.0.0.1"}})
		if err == nil {
			conn.Close()
			t.Fatal("connected to a server signed by an unknown CA")
		}
		if !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("error does not mention the certificate: %v", err)
		}
	})
	t.Run("insecure_skip_verify connects when set explicitly", func(t *testing.T) {
		conn, err := Dial(Options{URL: url, Username: "guest", Password: "guest",
			TLS: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{clientCert}}})
		if err != nil {
			t.Fatalf("insecure dial: %v", err)
		}
		conn.Close()
	})
	t.Run("no client certificate is refused", func(t *testing.T) {
		conn, err := Dial(Options{URL: url, Username: "guest", Password: "guest",
			TLS: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}})
		if err == nil {
			conn.Close()
			t.Fatal("connected without a client certificate")
		}
	})
}

// The management API goes through the same TLS settings: a CA file and a
// client certificate, verified, and refused without them.
func TestManagementAPIOverTLSWithCAAndClientCertificate(t *testing.T) {
	pki := newTestPKI(t)
	front := startTLSFront(t, pki, "127.0.0.1:15672")
	caPEM, _ := os.ReadFile(pki.CAFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	clientCert, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	overview := func(cfg *tls.Config) (*domain.Overview, error) {
		c, err := mgmt.New(mgmt.Options{URL: "https://" + front, Username: "guest", Password: "guest", TLS: cfg, Timeout: 30 * time.Second})
		if err != nil {
			return nil, err
		}
		return c.Overview(context.Background())
	}
	ov, err := overview(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientCert}, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("management API over TLS: %v (the management plugin must run on 127.0.0.1:15672)", err)
	}
	if ov.RabbitMQVersion == "" {
		t.Fatal("no broker version over TLS")
	}
	if _, err := overview(&tls.Config{Certificates: []tls.Certificate{clientCert}, ServerName: "127.0.0.1"}); err == nil {
		t.Fatal("trusted a server certificate signed by an unknown CA")
	}
	if _, err := overview(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err == nil {
		t.Fatal("connected without the client certificate the server requires")
	}
}

// A connection limit the broker enforces (here a vhost's, of 0) is named
// with the broker's own reason, not taken for a missing vhost.
func TestDialNamesAConnectionLimit(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-broker")
	testkit.Mgmt(t, http.MethodPut, "/api/vhost-limits/"+url.PathEscape(vhost)+"/max-connections", map[string]int{"value": 0})
	u, err := url.Parse(testkit.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := Dial(Options{URL: "amqp://" + u.Host + "/", Username: "guest", Password: "guest", Vhost: vhost})
	if err == nil {
		conn.Close()
		t.Fatal("dial succeeded past a limit of 0 connections")
	}
	if !strings.Contains(err.Error(), "refused another connection") || !strings.Contains(err.Error(), "limit") ||
		strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("error %q does not name the limit", err)
	}
}
