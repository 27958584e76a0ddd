package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenops/warren/config"
)

func TestPlaintextWarningIsForAProductionContextOnAnotherMachine(t *testing.T) {
	tests := []struct {
		name, env, amqp, mgmt string
		want                  string // "" for no warning
	}{
		{"prod over amqp and http", "prod", "amqp://ana:s3cret@rabbit.prod.example:5672/", "http://rabbit.prod.example:15672",
			"production context over plain amqp://rabbit.prod.example:5672/ and http://rabbit.prod.example:15672: the password and the messages cross the network unencrypted; use amqps:// and https:// (tls in the config)"},
		{"prod over amqp only", "prod", "amqp://10.1.2.3", "https://10.1.2.3:15671", "production context over plain amqp://10.1.2.3: "},
		{"prod over http only", "prod", "amqps://rabbit:5671", "HTTP://rabbit:15672", "production context over plain http://rabbit:15672: "},
		{"prod over TLS", "prod", "amqps://rabbit.prod.example", "https://rabbit.prod.example:15671", ""},
		{"prod on localhost", "prod", "amqp://localhost:5672", "http://LOCALHOST:15672", ""},
		{"prod on a loopback address", "prod", "amqp://127.0.0.2:5672", "http://[::1]:15672", ""},
		{"staging over amqp", "staging", "amqp://rabbit.staging.example", "http://rabbit.staging.example:15672", ""},
		{"no environment", "", "amqp://rabbit.example", "http://rabbit.example:15672", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &config.Context{Environment: tt.env, AMQPURL: tt.amqp, ManagementURL: tt.mgmt}
			got := plaintextWarning(c)
			if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
				t.Fatalf("plaintextWarning = %q, want %q…", got, tt.want)
			}
			if strings.Contains(got, "s3cret") {
				t.Fatalf("the warning quotes the password: %q", got)
			}
		})
	}
}

// config check says so, in a line of its own, for a production context
// whose broker is this machine reached by one of its own non-loopback
// addresses; the same context on 127.0.0.1 gets no such line.
func TestConfigCheckWarnsOfAPlaintextProductionBroker(t *testing.T) {
	ip := ownAddress(t)
	for _, tc := range []struct {
		host string
		warn bool
	}{{ip, true}, {"127.0.0.1", false}} {
		t.Run(tc.host, func(t *testing.T) {
			// Port 1: nothing listens there, so each connection check
			// fails at once; the warning does not depend on them.
			host := net.JoinHostPort(tc.host, "1")
			cfg := filepath.Join(t.TempDir(), "warren.toml")
			text := fmt.Sprintf("current_context = \"p\"\n[contexts.p]\nenvironment = \"prod\"\namqp_url = \"amqp://%s/\"\nmanagement_url = \"http://%s\"\nmetrics_url = \"off\"\naudit = \"file:%s\"\n",
				host, host, filepath.Join(t.TempDir(), "audit.jsonl"))
			if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			r := execCLI(t, "--config", cfg, "config", "check")
			want := fmt.Sprintf("transport              warn  production context over plain amqp://%s/ and http://%s: the password and the messages cross the network unencrypted", host, host)
			if !strings.Contains(r.out, "conventions            ok") {
				t.Fatalf("config check did not read the config:\n%s%s", r.out, r.errOut)
			}
			if got := strings.Contains(r.out, want); got != tc.warn {
				t.Fatalf("config check warns %v, want %v (%q):\n%s%s", got, tc.warn, want, r.out, r.errOut)
			}
		})
	}
}

// ownAddress is a non-loopback address of this machine.
func ownAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Fatal("this machine has no non-loopback IPv4 address to reach itself by")
	return ""
}
