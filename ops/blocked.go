package ops

import (
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
	now     func() time.Time
	mu      sync.Mutex
	reason  string
	since   time.Time
	changed func()
}

// watchBlocked starts following conn's notices until conn closes. The
// client hands a notice over only once it is taken, holding up the
// connection meanwhile, so every notice is taken as it comes.
func watchBlocked(conn *amqp.Connection, now func() time.Time) *blockWatch {
	w := &blockWatch{now: now}
	notices := conn.NotifyBlocked(make(chan amqp.Blocking, 1))
	go func() {
		for b := range notices {
			w.mu.Lock()
			w.reason, w.since = "", time.Time{}
			if b.Active {
				w.reason, w.since = b.Reason, w.now()
				if w.reason == "" {
					w.reason = "a resource alarm"
				}
			}
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
