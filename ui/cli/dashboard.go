package cli

import (
	"context"
	"io"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/ui"
	"github.com/warrenops/warren/ui/live"
	"github.com/warrenops/warren/ui/styles"
)

// Dashboard builds the TUI for the context: the management client for the
// overview and queue screens, the live adapter for the dead-letter
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
	lv, err := live.New(live.Services{
		Context:   c,
		Operator:  a.OperatorName(),
		Mgmt:      m,
		Dial:      a.DialAMQP,
		OpenAudit: a.AuditStore,
		OpenInbox: func(ctx context.Context, vhost, queue string) (live.InboxClient, error) {
			in, err := a.Inbox(ctx, vhost, queue)
			if err != nil || in == nil {
				return nil, err
			}
			return inboxClient{in}, nil
		},
	})
	if err != nil {
		return nil, nil, err
	}
	st := styles.Default()
	screens := lv.Screens(st)
	model := ui.New(ui.Options{
		Context:     c.Name,
		Environment: c.Environment,
		ReadOnly:    c.ReadOnly,
		InsecureTLS: c.TLS.InsecureSkipVerify,
		Refresh:     c.Refresh.Duration,
		Vhost:       c.Vhost,
		Lister:      m,
		Describer:   m,
		Effects:     lv,
		NewDLQ:      screens.NewDLQ,
		NewMessage:  screens.NewMessage,
		NewAudit:    screens.NewAudit,
		Debug:       debug,
		Styles:      &st,
	})
	return model, func() { lv.Close() }, nil
}

// inboxClient gives the inbox pool the Close signature the adapter wants.
type inboxClient struct{ *inbox.Client }

func (c inboxClient) Close() error {
	c.Client.Close()
	return nil
}
