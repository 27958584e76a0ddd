package deadletters

import (
	"sync"

	"github.com/warrenops/warren/ops"
)

// life is what the screen's commands share with Close: the sessions they
// opened and the operation they run. A session that finishes opening
// after the screen was closed is closed at once, and Close waits for a
// running operation to settle before it returns the held messages, so
// no confirmed copy is left with its source delivery handed back.
type life struct {
	mu       sync.Mutex
	closed   bool
	sessions map[int64]ops.Session
	work     sync.WaitGroup
}

func newLife() *life { return &life{sessions: map[int64]ops.Session{}} }

// adopt records a newly opened session; false means the screen is gone
// and the caller must close it.
func (l *life) adopt(sid int64, s ops.Session) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.sessions[sid] = s
	return true
}

// release forgets a session the screen is about to close.
func (l *life) release(sid int64) ops.Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sessions[sid]
	delete(l.sessions, sid)
	return s
}

// begin marks an operation as running; false means the screen is gone.
func (l *life) begin() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.work.Add(1)
	return true
}

func (l *life) end() { l.work.Done() }

// shutdown refuses new sessions and operations and hands over the open
// sessions, to be closed once running work has settled.
func (l *life) shutdown() []ops.Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	out := make([]ops.Session, 0, len(l.sessions))
	for sid, s := range l.sessions {
		out = append(out, s)
		delete(l.sessions, sid)
	}
	return out
}
