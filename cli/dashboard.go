package cli

import (
	"io"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui"
	"github.com/warrenops/warren/ui/auditlog"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/deadletters"
	"github.com/warrenops/warren/ui/message"
	"github.com/warrenops/warren/ui/styles"
)

// Dashboard builds the TUI for the context: the management client for the
// overview and queue screens, the operations layer for the dead-letter
// screens, inboxes and the audit store. debug, when set, receives one
// line per UI message. The returned function releases what it opened.
func (a *App) Dashboard(debug io.Writer) (tea.Model, func(), error) {
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
	screens := newScreens(o, st)
	model := ui.New(ui.Options{
		Context:     c.Where(),
		NoConfig:    c.NoConfig(),
		Ignored:     ignoredShort(a.Ignored()),
		Environment: c.Environment,
		ReadOnly:    c.ReadOnly,
		InsecureTLS: c.TLS.InsecureSkipVerify,
		Unencrypted: plaintextWarning(c) != "",
		Refresh:     c.Refresh.Duration,
		Vhost:       c.Vhost,
		Lister:      m,
		Describer:   m,
		Effects:     o,
		Channels:    m,
		NewDLQ:      screens.NewDLQ,
		NewMessage:  screens.NewMessage,
		NewAudit:    screens.NewAudit,
		Debug:       debug,
		Styles:      &st,
	})
	return model, func() { o.Close() }, nil
}

// screens are the constructors the root model opens screens with.
type screens struct {
	NewDLQ     func(domain.QueueRef) common.Screen
	NewMessage func(common.OpenMessageMsg) common.Screen
	NewAudit   func() common.Screen
}

// newScreens wires the dead-letter, message and audit screens to the
// operations layer, with the context's guardrails. In a read-only
// context the DLQ screen gets no actions and the audit screen no
// resume, so nothing can change even if a key slipped through.
func newScreens(o *ops.Ops, st styles.Styles) screens {
	c := o.Context()
	deps := deadletters.Deps{Browser: o, Inbox: o, CompileFilter: ops.CompileFilter, Scanner: o}
	if !c.ReadOnly {
		deps.Actions = o
	}
	now := o.Now
	msgOpts := message.Options{Now: now, Styles: st, ReadOnly: c.ReadOnly, Prod: c.IsProd(), ConfirmThreshold: c.ConfirmThreshold}
	if !c.ReadOnly {
		msgOpts.Editor = o
	}
	// The audit screen resumes an incomplete operation, except in a
	// read-only context.
	auditOpts := auditlog.Options{Now: now, Styles: st, ReadOnly: c.ReadOnly, Prod: c.IsProd(), ConfirmThreshold: c.ConfirmThreshold}
	if !c.ReadOnly {
		auditOpts.Resumer = o.Audit()
	}
	return screens{
		NewDLQ: func(ref domain.QueueRef) common.Screen {
			return deadletters.New(ref, deps, deadletters.Options{
				ReadOnly: c.ReadOnly, Prod: c.IsProd(), ConfirmThreshold: c.ConfirmThreshold,
				Now: now, Styles: st,
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

// ignoredShort words the config files passed over for the header.
func ignoredShort(ignored []config.Ignored) []string {
	var out []string
	for _, i := range ignored {
		out = append(out, i.Short())
	}
	return out
}
