//go:build integration

package broker

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/warrenops/warren/sources/nodes"
	"github.com/warrenops/warren/testkit"
)

// hangUp listens on loopback and closes every connection it accepts at
// once, as a node that is stopping does; it counts them.
func hangUp(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return l.Addr().String(), accepted
}

func realBroker(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(testkit.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	return "amqp://" + u.Host + "/"
}

// The node the config names first hangs up: the dial goes on to the
// fallback, and the next dial goes straight to the fallback.
func TestADialGoesOnToAFallbackNodeAndStaysThere(t *testing.T) {
	addr, accepted := hangUp(t)
	first := "amqp://" + addr + "/"
	set := nodes.New(first, []string{realBroker(t)})
	for i := range 2 {
		conn, err := Dial(Options{URL: first, Nodes: set, Username: "guest", Password: "guest"})
		if err != nil {
			t.Fatalf("dial %d with the first node down: %v", i+1, err)
		}
		conn.Close()
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the first node was tried %d times over two dials; want once", n)
	}
	sv := set.Serving()
	if !sv.Fallback || sv.URL != realBroker(t) || sv.Missed == nil || !strings.Contains(sv.Missed.Error(), addr) {
		t.Fatalf("Serving = %+v; want the fallback, with why %s did not answer", sv, addr)
	}
}

// Bad credentials are the cluster's answer: no other node is asked. With
// no node answering, the error names each.
func TestADialTriesOtherNodesOnlyWhenANodeDoesNotAnswer(t *testing.T) {
	addr, accepted := hangUp(t)
	set := nodes.New(realBroker(t), []string{"amqp://" + addr + "/"})
	_, err := Dial(Options{URL: realBroker(t), Nodes: set, Username: "guest", Password: "not-the-password-x9"})
	if err == nil || !strings.Contains(err.Error(), "bad credentials") {
		t.Fatalf("wrong password: %v; want bad credentials", err)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("a wrong password was tried on the fallback (%d connections)", n)
	}

	closed := "amqp://127.0.0.1:1/"
	down := nodes.New(closed, []string{"amqp://" + addr + "/"})
	_, err = Dial(Options{URL: closed, Nodes: down, Username: "guest", Password: "guest"})
	var all *nodes.AllDown
	if !errors.As(err, &all) || !strings.Contains(err.Error(), "127.0.0.1:1/ unreachable") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("no node answering: %v; want both nodes named", err)
	}
}
