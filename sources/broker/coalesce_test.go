package broker

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// heldConn is a connection whose sends wait for release, and which counts
// the sends that reach it.
type heldConn struct {
	net.Conn
	release chan struct{}

	mu    sync.Mutex
	sends [][]byte
}

func (c *heldConn) Write(p []byte) (int, error) {
	<-c.release
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sends = append(c.sends, append([]byte(nil), p...))
	return len(p), nil
}

func (c *heldConn) Close() error { return nil }

func (c *heldConn) sent() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sends
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// sending writes first through a connection whose sends wait for
// release, and returns once the sender holds it: what is written next
// queues.
func sending(t *testing.T, first string) (*heldConn, *coalescing) {
	t.Helper()
	held := &heldConn{release: make(chan struct{})}
	w := coalesce(held)
	if _, err := w.Write([]byte(first)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the sender to take the first write", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.queued) == 0
	})
	return held, w
}

func TestWritesQueuedWhileOneIsSentGoOutTogetherInOrder(t *testing.T) {
	held, w := sending(t, "first;") // held until release; the rest queue
	var want strings.Builder
	want.WriteString("first;")
	for i := range 100 {
		p := []byte(strings.Repeat(string(rune('a'+i%26)), i+1) + ";")
		want.Write(p)
		if n, err := w.Write(p); err != nil || n != len(p) {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	close(held.release)
	waitFor(t, "every byte to be sent", func() bool { return len(bytes.Join(held.sent(), nil)) == want.Len() })
	sends := held.sent()
	if got := string(bytes.Join(sends, nil)); got != want.String() {
		t.Fatalf("the bytes sent differ from those written, or their order:\n got %q\nwant %q", got, want.String())
	}
	if len(sends) != 2 {
		t.Fatalf("101 writes went out in %d sends, want 2: the first, then the 100 queued while it was held", len(sends))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAWriteWaitsForRoomWhenTheQueueIsFull(t *testing.T) {
	held, w := sending(t, "x")
	if _, err := w.Write(make([]byte, maxQueued)); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := w.Write([]byte("over the bound"))
		wrote <- err
	}()
	select {
	case err := <-wrote:
		t.Fatalf("a write past %d queued bytes returned (%v) while nothing could be sent", maxQueued, err)
	case <-time.After(100 * time.Millisecond):
	}
	close(held.release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := len(bytes.Join(held.sent(), nil)), 1+maxQueued+len("over the bound"); got != want {
		t.Fatalf("sent %d bytes, want %d", got, want)
	}
}

func TestAFailureToSendIsReturnedByTheNextWriteAndEndsTheConnection(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	broken := errors.New("connection reset by peer")
	w := coalesce(&failingConn{Conn: client, err: broken})
	if _, err := w.Write([]byte("lost")); err != nil {
		t.Fatalf("the write that is queued returns before its send: %v", err)
	}
	waitFor(t, "the failure to be seen", func() bool {
		_, err := w.Write([]byte("next"))
		return errors.Is(err, broken)
	})
	// The reader sees the connection end, as when the client's own write
	// fails and it shuts the connection down.
	if _, err := client.Read(make([]byte, 1)); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("read after a failed send: %v, want the connection closed", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after a failed send: %v", err)
	}
}

type failingConn struct {
	net.Conn
	err error
}

func (c *failingConn) Write([]byte) (int, error) { return 0, c.err }

func TestCloseSendsWhatIsQueuedFirst(t *testing.T) {
	client, server := net.Pipe()
	w := coalesce(client)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(server)
		got <- b
	}()
	for i := range 50 {
		if _, err := w.Write([]byte{byte('0' + i%10)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; len(b) != 50 {
		t.Fatalf("the peer read %d of the 50 bytes written before Close", len(b))
	}
	if _, err := w.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a write after Close: %v, want net.ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a second Close: %v, want net.ErrClosed", err)
	}
}

func TestCloseDoesNotHangOnAPeerThatDoesNotRead(t *testing.T) {
	client, server := net.Pipe() // unbuffered: a send waits for a read
	defer server.Close()
	w := coalesce(client)
	if _, err := w.Write([]byte("never read")); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case <-closed:
	case <-time.After(closeWait + 10*time.Second):
		t.Fatalf("Close still waits %s after its bound of %s", 10*time.Second, closeWait)
	}
}
