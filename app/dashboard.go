package app

import (
	"context"
	"io"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui"
	"github.com/warrenops/warren/ui/auditlog"
	"github.com/warrenops/warren/ui/channels"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/deadletters"
	"github.com/warrenops/warren/ui/message"
	"github.com/warrenops/warren/ui/overview"
	"github.com/warrenops/warren/ui/queuedetail"
	"github.com/warrenops/warren/ui/styles"
)

// Dashboard builds the TUI for the context: the management client for the
// overview and queue screens, the operations layer for the dead-letter
// screens, inboxes and the audit store. debug, when set, receives one
// line per UI message. The returned function releases what it opened.
func (a *Factory) Dashboard(debug io.Writer) (tea.Model, func(), error) {
	c, err := a.Config()
	if err != nil {
		return nil, nil, err
	}
	m, err := a.Mgmt()
	if err != nil {
		return nil, nil, err
	}
	o, err := a.opsOver(c, m)
	if err != nil {
		return nil, nil, err
	}
	st := styles.Default()
	screens := NewScreens(m, o, st)
	model := ui.New(ui.Options{
		Context:     c.Where(),
		NoConfig:    c.NoConfig(),
		Ignored:     ignoredShort(a.Ignored()),
		Environment: c.Environment,
		ReadOnly:    c.ReadOnly,
		InsecureTLS: c.TLS.InsecureSkipVerify,
		Unencrypted: PlaintextWarning(c) != "",
		Refresh:     c.Refresh.Duration,
		Vhost:       c.Vhost,
		Contexts:    a.contextChoices(c),
		Overview:    screens.Overview,
		Channels:    m,
		NewQueue:    screens.NewQueue,
		NewChannels: screens.NewChannels,
		NewDLQ:      screens.NewDLQ,
		NewMessage:  screens.NewMessage,
		NewAudit:    screens.NewAudit,
		Debug:       debug,
		Styles:      &st,
	})
	return model, func() { o.Close() }, nil
}

// contextChoices are the config's contexts for the switcher, c current.
func (a *Factory) contextChoices(c *config.Context) []ui.ContextChoice {
	f := a.ConfigFile()
	if f == nil {
		return nil
	}
	var out []ui.ContextChoice
	for _, name := range f.ContextNames() {
		choice := ui.ContextChoice{Name: name, Current: name == c.Name}
		if cc, err := f.Context(name); err == nil {
			choice.Environment = cc.Environment
		}
		out = append(out, choice)
	}
	return out
}

// Broker is what the overview, queue and channels screens read from the
// management API; *mgmt.Client implements it.
type Broker interface {
	overview.QueueLister
	queuedetail.QueueDescriber
	channels.Lister
}

// Screens are every screen of the dashboard: the overview it starts on,
// and the constructors the root model opens the others with.
type Screens struct {
	Overview    *overview.Model
	NewQueue    func(domain.QueueRef) common.Screen
	NewChannels func() common.Screen
	NewDLQ      func(domain.QueueRef) common.Screen
	NewMessage  func(common.OpenMessageMsg) common.Screen
	NewAudit    func() common.Screen
}

// The DLQ screen's prompt asks the operations layer whether a staging
// would be refused, before the operator confirms.
var _ deadletters.StagingChecker = (*ops.Ops)(nil)

// NewScreens wires every screen: the overview, queue and channels
// screens to the management API b, the dead-letter, message and audit
// screens to the operations layer, with the context's guardrails. In a
// read-only context the DLQ screen gets no actions and the audit screen
// no resume, so nothing can change even if a key slipped through.
func NewScreens(b Broker, o *ops.Ops, st styles.Styles) Screens {
	c := o.Context()
	refresh := c.Refresh.Duration
	deps := deadletters.Deps{Browser: o, Inbox: o, CompileFilter: ops.CompileFilter, Scanner: o, Exporter: exporter{o}}
	if !c.ReadOnly {
		deps.Actions = o
	}
	now := o.Now
	msgOpts := message.Options{Now: now, Styles: st, ReadOnly: c.ReadOnly}
	if !c.ReadOnly {
		msgOpts.Editor = o
	}
	// The audit screen resumes an incomplete operation, except in a
	// read-only context.
	auditOpts := auditlog.Options{Now: now, Styles: st, ReadOnly: c.ReadOnly}
	if !c.ReadOnly {
		auditOpts.Resumer = o
	}
	return Screens{
		Overview: overview.New(overview.Options{Lister: b, Styles: st, Refresh: refresh, Vhost: c.Vhost, Effects: o}),
		NewQueue: func(ref domain.QueueRef) common.Screen {
			return queuedetail.New(queuedetail.Options{Queue: ref, Describer: b, Styles: st, Refresh: refresh, Now: now, Effects: o})
		},
		NewChannels: func() common.Screen {
			return channels.New(channels.Options{Lister: b, Vhost: c.Vhost, Refresh: refresh, Styles: st, Now: now})
		},
		NewDLQ: func(ref domain.QueueRef) common.Screen {
			return deadletters.New(ref, deps, deadletters.Options{
				ReadOnly: c.ReadOnly, Now: now, Styles: st,
			})
		},
		NewMessage: func(msg common.OpenMessageMsg) common.Screen {
			return message.New(msg, msgOpts)
		},
		NewAudit: func() common.Screen {
			return auditlog.New(o.Audit(), auditOpts)
		},
	}
}

// exporter writes the DLQ screen's exports, their header naming this
// warren's version as `dlq export`'s do.
type exporter struct{ o *ops.Ops }

func (e exporter) ExportFile(ctx context.Context, f ops.FileExport, progress func(read int)) (ops.FileExportResult, error) {
	f.Version = Version()
	return e.o.ExportFile(ctx, f, progress)
}

// ignoredShort words the config files passed over for the header.
func ignoredShort(ignored []config.Ignored) []string {
	var out []string
	for _, i := range ignored {
		out = append(out, i.Short())
	}
	return out
}
