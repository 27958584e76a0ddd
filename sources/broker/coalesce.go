package broker

import (
	"errors"
	"net"
	"sync"
	"time"
)

// coalescing is a connection whose bytes are sent by one goroutine, which
// sends everything written while it was busy in one system call
// (docs/ARCHITECTURE.md §4.9). The AMQP client flushes each publish on
// its own (a method, a header and a body frame): at thousands a second
// that is a system call, and a packet for the broker to take in, each.
// Here a write returns once its bytes are queued; when the sender is
// idle they go out at once, as before, and when publishes come faster
// than the socket takes them one at a time, those queued meanwhile go out
// together.
//
// A failure to send is returned by every later write, and closes the
// connection, so the client's reader sees it end as it would have. A
// publish whose bytes were queued before the failure is one the client
// takes for sent: warren settles it as unknown, never as confirmed, as it
// does a publish lost with a connection. The queue is bounded: a write
// waits while maxQueued bytes wait to be sent. Close sends what is queued
// first, waiting at most closeWait for a peer that does not read.
type coalescing struct {
	net.Conn

	mu     sync.Mutex
	room   sync.Cond // a write waiting for room is woken by a send, a failure or Close
	queued []byte
	spare  []byte // the buffer of the last send, reused
	err    error  // the first failure to send
	closed bool
	kick   chan struct{} // a send is due; closed by Close
	done   chan struct{} // the sender is gone
}

const (
	// maxQueued bounds the bytes waiting for the sender: two frames of
	// the broker's default frame_max.
	maxQueued = 256 << 10
	// closeWait is how long Close waits for what is queued to go out.
	closeWait = 2 * time.Second
)

func coalesce(c net.Conn) *coalescing {
	w := &coalescing{Conn: c, kick: make(chan struct{}, 1), done: make(chan struct{})}
	w.room.L = &w.mu
	go w.send()
	return w
}

// Write queues p to be sent, waiting while the queue is full.
func (w *coalescing) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for !w.closed && w.err == nil && len(w.queued) >= maxQueued {
		w.room.Wait()
	}
	switch {
	case w.closed:
		return 0, net.ErrClosed
	case w.err != nil:
		return 0, w.err
	}
	w.queued = append(w.queued, p...)
	select {
	case w.kick <- struct{}{}:
	default: // a send is due already, and takes these bytes too
	}
	return len(p), nil
}

// send is the sender: it takes the whole queue at each turn.
func (w *coalescing) send() {
	defer close(w.done)
	for range w.kick {
		for {
			w.mu.Lock()
			b := w.queued
			if len(b) == 0 {
				w.mu.Unlock()
				break
			}
			w.queued, w.spare = w.spare, nil
			w.room.Broadcast()
			w.mu.Unlock()
			_, err := w.Conn.Write(b)
			w.mu.Lock()
			if err != nil {
				if w.err == nil {
					w.err = err
				}
				w.room.Broadcast()
				w.mu.Unlock()
				_ = w.Conn.Close()
				return
			}
			if cap(b) <= 2*maxQueued {
				w.spare = b[:0]
			}
			w.mu.Unlock()
		}
	}
}

// Close sends what is queued, then closes the connection.
func (w *coalescing) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return net.ErrClosed
	}
	w.closed = true
	close(w.kick)
	w.room.Broadcast()
	w.mu.Unlock()
	wait := time.NewTimer(closeWait)
	defer wait.Stop()
	select {
	case <-w.done:
	case <-wait.C: // a peer that does not read: closing ends the send
	}
	err := w.Conn.Close()
	<-w.done
	if w.err != nil && errors.Is(err, net.ErrClosed) {
		err = nil // the sender closed it on its failure
	}
	return err
}
