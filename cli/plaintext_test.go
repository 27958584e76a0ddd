package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
