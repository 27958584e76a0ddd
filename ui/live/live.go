// Package live connects the dead-letter screens (ui/dlq, ui/message,
// ui/audit) to the real packages: browse sessions of sources/dlq, inbox
// lookups, the plans and execution of actions, and the audit store. The
// screens only know their own small interfaces; this package is the one
// place that implements them.
package live

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/mgmt"
	uiaudit "github.com/warrenops/warren/ui/audit"
	"github.com/warrenops/warren/ui/common"
	uidlq "github.com/warrenops/warren/ui/dlq"
	"github.com/warrenops/warren/ui/message"
	"github.com/warrenops/warren/ui/styles"
)

// QueueReader is what browsing needs from the management API;
// *mgmt.Client implements it.
type QueueReader interface {
	Snapshot(ctx context.Context, o mgmt.SnapshotOptions) (*mgmt.Snapshot, error)
}

// Services are the pieces the adapter works with, all from the selected
// config context.
type Services struct {
	Context  *config.Context
	Operator string
	Mgmt     QueueReader
	// Dial connects to the broker in a vhost; each browse session gets
	// a connection of its own, closed with the session.
	Dial func(vhost string) (*amqp.Connection, error)
	// OpenAudit opens the context's audit store, once, on first use.
	OpenAudit func() (audit.Store, error)
	// OpenInbox opens the inbox of a queue, or returns nil, nil when none
	// is configured (never a nil pointer in a non-nil interface); a nil
	// OpenInbox means no queue has one.
	OpenInbox InboxOpener
	// Window is the browse page size; dlq.DefaultWindow when zero.
	Window int
	Now    func() time.Time
}

// Live implements the screens' interfaces. Close it when the program
// ends.
type Live struct {
	s    Services
	host string

	auditOnce sync.Once
	store     audit.Store
	storeErr  error

	mu      sync.Mutex
	inboxes map[mgmt.QueueRef]InboxClient
	known   map[mgmt.QueueRef]config.Knowledge // per DLQ, learned by Open
}

// New returns the adapter over s.
func New(s Services) (*Live, error) {
	if s.Context == nil || s.Mgmt == nil || s.Dial == nil || s.OpenAudit == nil {
		return nil, errors.New("live: a context, a management client, a dial function and an audit store opener are required")
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	host, _ := os.Hostname()
	return &Live{s: s, host: host, inboxes: map[mgmt.QueueRef]InboxClient{}, known: map[mgmt.QueueRef]config.Knowledge{}}, nil
}

// Close releases the inbox connections and the audit store.
func (l *Live) Close() error {
	var errs []error
	l.mu.Lock()
	for _, c := range l.inboxes {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	l.inboxes = map[mgmt.QueueRef]InboxClient{}
	l.mu.Unlock()
	if l.store != nil {
		errs = append(errs, l.store.Close())
	}
	return errors.Join(errs...)
}

func (l *Live) auditStore() (audit.Store, error) {
	l.auditOnce.Do(func() { l.store, l.storeErr = l.s.OpenAudit() })
	return l.store, l.storeErr
}

// DLQDeps are the DLQ screen's services. In a read-only context there are
// no actions at all, so nothing can change even if a key slipped through.
func (l *Live) DLQDeps() uidlq.Deps {
	d := uidlq.Deps{Browser: l, Inbox: l, CompileFilter: compileFilter, Scanner: l}
	if !l.s.Context.ReadOnly {
		d.Actions = l
	}
	return d
}

// Screens are the constructors the root model opens screens with.
type Screens struct {
	NewDLQ     func(mgmt.QueueRef) common.Screen
	NewMessage func(common.OpenMessageMsg) common.Screen
	NewAudit   func() common.Screen
}

// Screens returns the constructors, with the context's guardrails.
func (l *Live) Screens(st styles.Styles) Screens {
	c := l.s.Context
	return Screens{
		NewDLQ: func(ref mgmt.QueueRef) common.Screen {
			return uidlq.New(ref, l.DLQDeps(), uidlq.Options{
				ReadOnly: c.ReadOnly, Prod: c.IsProd(), ConfirmThreshold: c.ConfirmThreshold,
				Now: l.s.Now, Styles: st,
			})
		},
		NewMessage: func(msg common.OpenMessageMsg) common.Screen {
			return message.New(msg, message.Options{Now: l.s.Now, Styles: st})
		},
		NewAudit: func() common.Screen {
			return uiaudit.New(AuditReader{l}, uiaudit.Options{Now: l.s.Now, Styles: st})
		},
	}
}
