package ops

import (
	"context"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/text/format"
)

// blockWatch follows the broker's connection.blocked notices on a
// publisher's connection. A resource alarm (memory or disk) makes the
// broker stop reading from every connection that publishes until it
// clears: a run then waits, losing nothing, and must say why it does not
// move.
type blockWatch struct {
	conn    *amqp.Connection
	now     func() time.Time
	mu      sync.Mutex
	reason  string
	since   time.Time
	changed func()
}

// watchBlocked starts following conn's notices until conn closes. The
// client holds up the connection while a notice waits to be taken, and
// drops it after 5 s: every notice is taken as it comes and its state
// kept at once, and what changed is told on another goroutine, which
// may wait (on a progress line written to a slow terminal) without
// holding the next notice back.
func watchBlocked(conn *amqp.Connection, now func() time.Time) *blockWatch {
	w := &blockWatch{conn: conn, now: now}
	notices := conn.NotifyBlocked(make(chan amqp.Blocking, 1))
	kick := make(chan struct{}, 1)
	go func() {
		defer close(kick)
		for b := range notices {
			w.mu.Lock()
			w.reason, w.since = "", time.Time{}
			if b.Active {
				w.reason, w.since = b.Reason, w.now()
				if w.reason == "" {
					w.reason = "a resource alarm"
				}
			}
			w.mu.Unlock()
			select {
			case kick <- struct{}{}:
			default: // one is pending: it tells the latest state
			}
		}
	}()
	go func() {
		for range kick {
			w.mu.Lock()
			changed := w.changed
			w.mu.Unlock()
			if changed != nil {
				changed()
			}
		}
	}()
	return w
}

// onChange sets what runs on the watcher's goroutine after each notice.
func (w *blockWatch) onChange(f func()) {
	w.mu.Lock()
	w.changed = f
	w.mu.Unlock()
}

// state is the broker's reason while it blocks the connection, and since
// when; "" while it does not.
func (w *blockWatch) state() (string, time.Time) {
	if w == nil {
		return "", time.Time{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason, w.since
}

// guard closes the connection at once when ctx ends while the broker
// blocks it, or once it blocks it after: a publish, a channel's close,
// wait on the broker reading again, which it does only once the alarm
// clears, so a cancel would not be heard until then. The copies in
// flight are then unknown, as on any lost channel. stop ends the guard.
func (w *blockWatch) guard(ctx context.Context) (stop func()) {
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		select {
		case <-quit:
			return
		case <-ctx.Done():
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if reason, _ := w.state(); reason != "" {
				_ = w.conn.CloseDeadline(time.Now())
				return
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(quit); <-ended }
}

// close closes the connection: at once while the broker blocks it (its
// close handshake would wait for the alarm to clear), else politely.
func (w *blockWatch) close() {
	if reason, _ := w.state(); reason != "" {
		_ = w.conn.CloseDeadline(time.Now())
		return
	}
	_ = w.conn.Close()
}

// BlockedText is the progress line's part on a publisher the broker
// blocks: "publishing blocked by the broker for 12s (low on memory):
// nothing is lost, the run goes on once the alarm clears". The reason is
// the broker's text, for the caller to sanitise with the rest.
func (p Progress) BlockedText() string {
	if p.Blocked == "" {
		return ""
	}
	return "publishing blocked by the broker for " + format.Duration(p.At.Sub(p.BlockedSince)) +
		" (" + p.Blocked + "): nothing is lost, the run goes on once the alarm clears"
}
