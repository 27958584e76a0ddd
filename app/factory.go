// Package app is warren's composition root: the one place that loads the
// config, builds the clients (management API, AMQP, audit store, inboxes),
// the operations layer over them, and every screen of the dashboard.
// Commands (cli) take what they need from a Factory; nothing else dials.
// It also says how errors end the process (exit codes).
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/sources/broker"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/sources/nodes"
	"github.com/warrenops/warren/text/sanitize"
)

// Settings are what the command line chose: the config file, the
// context, the global guardrails and a one-off target.
type Settings struct {
	ConfigPath  string
	ContextName string
	ReadOnly    bool
	Operator    string
	// Target is a one-off target from --amqp-url, --management-url and
	// --username; it overrides the context, or the local broker when
	// there is no config file.
	Target config.Target
	// NewManagement, when set, replaces the context's management API
	// client for every command but the dashboard, so a command's own
	// logic runs in tests without a broker.
	NewManagement func(*config.Context) (Management, error)
	// Dial, when set, replaces the context's AMQP dial for every
	// command, so a test can see every connection the operations layer
	// opens.
	Dial func(vhost string) (*amqp.Connection, error)
	// Err receives warnings said before anything else (config files
	// ignored, an audit file open to others).
	Err io.Writer
}

// Factory builds what commands and the dashboard work with, from the
// settings; it loads the config once.
type Factory struct {
	s Settings

	// auditWarned is set once the audit file's mode has been warned of,
	// or the dashboard has taken the terminal (see warnAuditFile).
	auditWarned atomic.Bool

	file    *config.File
	ctx     *config.Context
	ignored []config.Ignored

	// amqpNodes are the context's AMQP nodes, kept so that every dial
	// goes first to the node that answered the last one.
	amqpMu    sync.Mutex
	amqpNodes *nodes.Set
}

// New returns the factory for s.
func New(s Settings) *Factory {
	if s.Err == nil {
		s.Err = io.Discard
	}
	return &Factory{s: s}
}

// Config loads the config file and selects the context, once. With no
// config file found (and no --config), the context is the local broker
// as guest (config.Local); a one-off target from the flags then applies
// to whichever context was chosen.
func (a *Factory) Config() (*config.Context, error) {
	if a.ctx != nil {
		return a.ctx, nil
	}
	if strings.ContainsFunc(a.s.Operator, unicode.IsControl) {
		return nil, Usage(fmt.Errorf("--operator %s: the name the audit log records must hold no control character (a newline, an escape, a tab)", strconv.Quote(a.s.Operator)))
	}
	f, c, err := a.loadContext()
	if err != nil {
		return nil, err
	}
	if err := c.Apply(a.s.Target); err != nil {
		return nil, Usage(err)
	}

	if a.s.ReadOnly && !c.ReadOnly {
		c.ReadOnly, c.ReadOnlyFlag = true, true
	}
	a.file, a.ctx = f, c
	return c, nil
}

func (a *Factory) loadContext() (*config.File, *config.Context, error) {
	found, err := config.Locate(a.s.ConfigPath)
	// Said before the dashboard takes the terminal; its header says it
	// again.
	a.ignored = found.Ignored
	for _, i := range found.Ignored {
		fmt.Fprintf(a.s.Err, "warren: %s\n", sanitize.Text(i.String()))
	}
	if errors.Is(err, config.ErrNotFound) {
		if a.s.ContextName != "" {
			return nil, nil, Usage(fmt.Errorf("--context %s: %w", a.s.ContextName, err))
		}
		return nil, config.Local(), nil
	}
	if err != nil {
		return nil, nil, Usage(err)
	}
	f, err := found.Load()
	if err != nil {
		return nil, nil, configError(err)
	}
	c, err := f.Context(a.s.ContextName)
	if err != nil {
		return nil, nil, Usage(err)
	}
	return f, c, nil
}

// configError marks a config fault as bad config (exit 2), or as refused
// (exit 3) when warren will not act on it for safety's sake.
func configError(err error) error {
	if errors.Is(err, config.ErrRefused) {
		return Refused(err)
	}
	return Usage(err)
}

// ConfigFile returns the loaded file (after Config); nil when there is
// none and the local broker stands in.
func (a *Factory) ConfigFile() *config.File { return a.file }

// Ignored are the config files found in the working directory and not
// read (after Config).
func (a *Factory) Ignored() []config.Ignored { return a.ignored }

// OperatorName is who the audit log names: flag, config, then $USER.
func (a *Factory) OperatorName() string {
	if a.s.Operator != "" {
		return a.s.Operator
	}
	if a.ctx != nil && a.ctx.Operator != "" {
		return a.ctx.Operator
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}

// login is what connecting needs: the context, its password and its TLS
// settings.
func (a *Factory) login() (*config.Context, string, *tls.Config, error) {
	c, err := a.Config()
	if err != nil {
		return nil, "", nil, err
	}
	pw, err := c.Password()
	if err != nil {
		return nil, "", nil, configError(err)
	}
	tc, err := c.TLSConfig()
	if err != nil {
		return nil, "", nil, configError(err)
	}
	return c, pw, tc, nil
}

// Mgmt returns a management API client for the context.
func (a *Factory) Mgmt() (*mgmt.Client, error) {
	c, pw, tc, err := a.login()
	if err != nil {
		return nil, err
	}
	return mgmt.New(mgmt.Options{URL: c.ManagementURL, Fallbacks: c.FallbackManagementURLs, MetricsURL: c.MetricsURL, Username: c.Username, Password: pw, TLS: tc,
		DLQOverrides: DLQOverrides(c), ParkingQueues: ParkingQueues(c), PasswordHint: c.PasswordHint(),
		Learned: loadPairings(c.Name), OnLearn: func(l domain.DLQOverride) {
			// A pairing that cannot be kept still holds in this process;
			// nothing may write to the terminal the dashboard draws on.
			_ = keepPairing(c.Name, l)
		}})
}

// DLQOverrides are the DLQ pairings the config pins (docs/ARCHITECTURE.md §6).
func DLQOverrides(c *config.Context) []domain.DLQOverride {
	var out []domain.DLQOverride
	for _, q := range c.Queues {
		if q.DLQ != "" {
			out = append(out, domain.DLQOverride{Vhost: q.Vhost, Queue: q.Name, DLQ: q.DLQ})
		}
	}
	return out
}

// ParkingQueues are the parking queues the config names (quarantine).
func ParkingQueues(c *config.Context) []domain.QueueRef {
	var out []domain.QueueRef
	for _, q := range c.Queues {
		if q.Quarantine != "" {
			out = append(out, domain.QueueRef{Vhost: q.Vhost, Name: q.Quarantine})
		}
	}
	return out
}

// DialAMQP connects to the context's broker in vhost.
func (a *Factory) DialAMQP(vhost string) (*amqp.Connection, error) {
	if a.s.Dial != nil {
		return a.s.Dial(vhost)
	}
	c, pw, tc, err := a.login()
	if err != nil {
		return nil, err
	}
	a.amqpMu.Lock()
	if a.amqpNodes == nil {
		a.amqpNodes = nodes.New(c.AMQPURL, c.FallbackAMQPURLs)
	}
	set := a.amqpNodes
	a.amqpMu.Unlock()
	return broker.Dial(broker.Options{URL: c.AMQPURL, Nodes: set, Username: c.Username, Password: pw, Vhost: vhost, TLS: tc,
		Name: "warren " + a.OperatorName(), PasswordHint: c.PasswordHint()})
}

// AuditStore opens the context's audit store.
func (a *Factory) AuditStore() (audit.Store, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	dsn, err := c.AuditDSN()
	if err != nil {
		return nil, Usage(err)
	}
	st, err := audit.Open(c.Audit, dsn)
	if err != nil {
		return nil, err
	}
	a.warnAuditFile(st)
	return st, nil
}

// Inbox opens the inbox of the queue that vhost/queue belongs to (the
// queue itself or the queue whose DLQ it is); nil, nil when none is
// configured.
func (a *Factory) Inbox(ctx context.Context, vhost, queue string) (*inbox.Client, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	q := c.QueueConfig(vhost, queue)
	if q == nil || q.Inbox == nil {
		q = c.QueueForDLQ(vhost, queue)
	}
	if q == nil || q.Inbox == nil {
		return nil, nil
	}
	dsn, err := q.Inbox.DSN()
	if err != nil {
		return nil, configError(err)
	}
	if dsn == "" {
		return nil, fmt.Errorf("inbox of queue %s: environment variable %s is empty", q.Name, q.Inbox.DSNEnv)
	}
	return inbox.Open(ctx, inbox.Options{DSN: dsn, Table: q.Inbox.Table, IDColumn: q.Inbox.IDColumn, TimeColumn: q.Inbox.TimeColumn})
}

// Management is what the commands read from the management API;
// *mgmt.Client implements it.
type Management interface {
	Snapshot(ctx context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error)
	Overview(ctx context.Context) (*domain.Overview, error)
	Channels(ctx context.Context, vhost string) (*domain.ChannelList, error)
}

// Management returns the context and the commands' management API
// client: the one Settings.NewManagement builds, else the context's.
func (a *Factory) Management() (*config.Context, Management, error) {
	c, err := a.Config()
	if err != nil {
		return nil, nil, err
	}
	var m Management
	if a.s.NewManagement != nil {
		m, err = a.s.NewManagement(c)
	} else {
		m, err = a.Mgmt()
	}
	if err != nil {
		return nil, nil, err
	}
	return c, m, nil
}

// Ops builds the operations layer over the context's clients; the
// caller closes it.
func (a *Factory) Ops() (*ops.Ops, error) {
	c, m, err := a.Management()
	if err != nil {
		return nil, err
	}
	return a.opsOver(c, m)
}

// opsOver builds the operations layer over the management client m.
func (a *Factory) opsOver(c *config.Context, m ops.QueueReader) (*ops.Ops, error) {
	return ops.New(ops.Clients{
		Context:   c,
		Operator:  a.OperatorName(),
		Mgmt:      m,
		Dial:      a.DialAMQP,
		OpenAudit: a.AuditStore,
		OpenInbox: func(ctx context.Context, vhost, queue string) (ops.InboxClient, error) {
			in, err := a.Inbox(ctx, vhost, queue)
			if err != nil || in == nil {
				return nil, err
			}
			return inboxClient{in}, nil
		},
		Conventions: func(_, queue string) []dlq.Convention { return conventionsFor(c, queue) },
	})
}

// conventionsFor are the context's own conventions that read queue's
// messages; the config validated them when it loaded.
func conventionsFor(c *config.Context, queue string) []dlq.Convention {
	var out []dlq.Convention
	for _, cv := range c.ConventionsFor(queue) {
		if d, err := dlq.NewConvention(cv.Name, cv.Fields()); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// inboxClient gives the inbox pool the Close signature the layer wants.
type inboxClient struct{ *inbox.Client }

func (c inboxClient) Close() error {
	c.Client.Close()
	return nil
}
