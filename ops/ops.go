// Package ops holds warren's use cases, the one layer the command line
// and the dashboard both call: resolving a DLQ with what the config and
// the broker know of it, browsing and scanning it, looking up which
// logical IDs the inbox applied, planning and executing replay and
// quarantine with progress, and reading the audit log. Its clients are
// injected (Clients), so the front ends are tested with fakes of them and
// this package against a real broker and database. It imports no UI.
// docs/ARCHITECTURE.md draws the layers.
package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
)

// QueueReader is what resolving a DLQ needs from the management API;
// *mgmt.Client implements it.
type QueueReader interface {
	Snapshot(ctx context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error)
}

// ChannelRoomReader tells how many more channels the user may open under
// its max-channels limit; *mgmt.Client implements it.
type ChannelRoomReader interface {
	ChannelRoom(ctx context.Context) (room int, limited bool, err error)
}

// Clients are the pieces the layer works with, all from the selected
// config context. The composition root (app) builds them; tests pass
// their own.
type Clients struct {
	Context  *config.Context
	Operator string
	Mgmt     QueueReader
	// Dial connects to the broker in a vhost; each browse session and
	// each operation's publisher gets a connection of its own.
	Dial func(vhost string) (*amqp.Connection, error)
	// OpenAudit opens the context's audit store, once, on first use.
	OpenAudit func() (audit.Store, error)
	// OpenInbox opens the inbox of a queue, or returns nil, nil when none
	// is configured (never a nil pointer in a non-nil interface); a nil
	// OpenInbox means no queue has one.
	OpenInbox InboxOpener
	// Window is the browse page size; dlq.DefaultWindow when zero.
	Window int
	// Conventions are the team's own error-header conventions that apply
	// to a queue (from the config); nil has none.
	Conventions func(vhost, queue string) []dlq.Convention
	Now         func() time.Time
}

// Ops runs the use cases over one context's clients. Close it when the
// program or command ends.
type Ops struct {
	c    Clients
	host string

	auditOnce sync.Once
	store     audit.Store
	storeErr  error

	mu      sync.Mutex
	inboxes map[domain.QueueRef]InboxClient
	known   map[domain.QueueRef]config.Knowledge // per DLQ, learned by Resolve
	// confirmed are each DLQ's confirmed origins, learned by Resolve.
	confirmed map[domain.QueueRef]pairing
	knownOps  knownOps
}

// New returns the layer over c.
func New(c Clients) (*Ops, error) {
	if c.Context == nil || c.Mgmt == nil || c.Dial == nil || c.OpenAudit == nil {
		return nil, errors.New("ops: a context, a management client, a dial function and an audit store opener are required")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Conventions == nil {
		c.Conventions = func(string, string) []dlq.Convention { return nil }
	}
	host, _ := os.Hostname()
	return &Ops{c: c, host: host, inboxes: map[domain.QueueRef]InboxClient{}, known: map[domain.QueueRef]config.Knowledge{},
		confirmed: map[domain.QueueRef]pairing{}}, nil
}

// writable refuses what would change a broker's messages in a read-only
// context, whatever front end asks: every operation, and a browse that
// may cost a delivery (docs/ARCHITECTURE.md §7).
func (o *Ops) writable(what string) error {
	if c := o.c.Context; c.ReadOnly {
		return &readOnlyError{context: c.Name, what: what, flag: c.ReadOnlyFlag}
	}
	return nil
}

// CheckWritable refuses action a in a read-only context, before anything
// is read: what Plan and Run refuse, asked early by a front end that
// reads before it plans (an edit browses first).
func (o *Ops) CheckWritable(a Action) error { return o.writable(string(a)) }

// readOnlyError is ErrReadOnly, worded with the context and what it
// refused.
type readOnlyError struct {
	context, what string
	flag          bool // --read-only, not the context's read_only
}

func (e *readOnlyError) Error() string {
	if e.flag {
		return fmt.Sprintf("--read-only: %s refused", e.what)
	}
	return fmt.Sprintf("context %q is read-only: %s refused", e.context, e.what)
}

func (e *readOnlyError) Is(target error) bool { return target == ErrReadOnly }

// Context is the config context the layer works in.
func (o *Ops) Context() *config.Context { return o.c.Context }

// Close releases the inbox connections and the audit store.
func (o *Ops) Close() error {
	var errs []error
	o.mu.Lock()
	for _, c := range o.inboxes {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	o.inboxes = map[domain.QueueRef]InboxClient{}
	o.mu.Unlock()
	if o.store != nil {
		errs = append(errs, o.store.Close())
	}
	return errors.Join(errs...)
}

// AuditStore opens the context's audit store on first use and keeps it.
func (o *Ops) AuditStore() (audit.Store, error) {
	o.auditOnce.Do(func() {
		st, err := o.c.OpenAudit()
		if err != nil {
			// A failed open may still hand back a typed nil.
			st = nil
		}
		o.store, o.storeErr = st, err
	})
	return o.store, o.storeErr
}

// CheckAudit proves the audit store can be written, and the signing key
// read when the context names one, before anything is held: an operation
// that could not be audited must not start.
func (o *Ops) CheckAudit(ctx context.Context) error {
	st, err := o.AuditStore()
	if err != nil {
		return err
	}
	if err := st.Check(ctx); err != nil {
		return fmt.Errorf("%w (%s): %v; nothing was changed", actions.ErrAuditUnavailable, st.Describe(), err)
	}
	_, err = o.signingKey()
	return err
}

// Now is the layer's clock.
func (o *Ops) Now() time.Time { return o.c.Now() }
