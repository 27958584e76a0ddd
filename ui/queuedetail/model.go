// Package queue is the queue screen: one queue's settings and policy, the
// topology warnings about it, its consumers and their channels, and its
// recent history, refreshed by its own tagged tick.
package queuedetail

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/effect"
	"github.com/warrenops/warren/ui/styles"
)

// QueueDescriber is what the queue screen needs from the management API.
type QueueDescriber interface {
	Queue(ctx context.Context, vhost, name string) (*domain.QueueDetail, error)
}

// Options configure the queue screen.
type Options struct {
	Queue     domain.QueueRef
	Describer QueueDescriber
	Styles    styles.Styles
	Refresh   time.Duration
	// Now dates the figures' age; nil means time.Now.
	Now func() time.Time
	// Effects reads the inbox of the queue or of the queue a DLQ belongs
	// to; nil leaves the inbox line out.
	Effects effect.Reader
	// Window is how far back the judgement of the queue's movement looks
	// (trouble.DefaultWindow when not positive).
	Window time.Duration
}

const (
	defaultRefresh  = 2 * time.Second
	minFetchTimeout = 15 * time.Second
)

var lastID atomic.Int64

// Model is the queue screen.
type Model struct {
	id, tag   int
	ref       domain.QueueRef
	describer QueueDescriber
	refresh   time.Duration
	now       func() time.Time
	st        styles.Styles
	keys      KeyMap

	detail *domain.QueueDetail
	err    error
	// judge holds the queue's movement marks across refreshes, as the
	// overview's do (docs/ARCHITECTURE.md §4.10).
	judge *trouble.Tracker

	inbox effect.Fetcher
	last  effect.Msg // the inbox's last answer

	// gone is set when the queue was deleted; polling stops.
	gone bool

	vp viewport.Model
	common.Frame
	common.NoText
}

// New returns the queue screen; Init starts polling.
func New(o Options) *Model {
	if o.Refresh <= 0 {
		o.Refresh = defaultRefresh
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Model{
		id:        int(lastID.Add(1)),
		ref:       o.Queue,
		describer: o.Describer,
		refresh:   o.Refresh,
		now:       o.Now,
		st:        o.Styles,
		keys:      DefaultKeyMap(),
		vp:        viewport.New(0, 0),
		inbox:     effect.New(o.Effects),
		judge:     trouble.New(o.Window),
	}
}

// Init fetches the queue.
func (m *Model) Init() tea.Cmd { return m.fetch() }

// Title implements common.Screen; the root sanitises it, so it is raw.
func (m *Model) Title() string {
	if m.ref.Vhost == "/" {
		return m.ref.Name
	}
	return m.ref.Name + " (vhost " + m.ref.Vhost + ")"
}

// Keys implements common.Screen.
func (m *Model) Keys() help.KeyMap { return m.keys }

// Capturing implements common.Screen: the screen takes no text.
func (m *Model) Capturing() bool { return false }

// SetSize implements common.Screen.
func (m *Model) SetSize(width, height int) {
	m.Resize(width, height)
	m.vp.Width, m.vp.Height = width, max(height, 0)
	m.render()
}

// Update implements common.Screen.
func (m *Model) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	if common.Stale(msg, common.Stamp{ID: m.id, Tag: m.tag}) {
		return m, nil
	}
	switch msg := msg.(type) {
	case detailMsg:
		return m, m.apply(msg)
	case tickMsg:
		return m, m.fetch()
	case effect.Msg:
		m.applyEffect(msg)
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	}
	return m, nil
}

func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	nav := m.keys.Nav
	switch {
	case key.Matches(msg, m.keys.DLQ):
		return m.openDLQ()
	case key.Matches(msg, m.keys.Refresh):
		m.tag++
		m.gone = false
		return m.fetch()
	case key.Matches(msg, nav.Up):
		m.vp.ScrollUp(1)
	case key.Matches(msg, nav.Down):
		m.vp.ScrollDown(1)
	case key.Matches(msg, nav.PageUp):
		m.vp.PageUp()
	case key.Matches(msg, nav.PageDown):
		m.vp.PageDown()
	case key.Matches(msg, nav.Top):
		m.vp.GotoTop()
	case key.Matches(msg, nav.Bottom):
		m.vp.GotoBottom()
	}
	return nil
}

// openDLQ opens this queue's dead letters: itself when it is a DLQ, else
// its paired DLQ.
func (m *Model) openDLQ() tea.Cmd {
	if m.detail == nil {
		return common.ReportError(errors.New("queue " + m.ref.Name + " is not loaded yet"))
	}
	q := m.detail.Queue
	var ref domain.QueueRef
	switch {
	case q.IsDLQ() || q.Parking:
		ref = q.Ref()
	case q.DLQ != nil:
		ref = *q.DLQ
	case q.RetryTarget != nil:
		back := q.RetryTarget.Name
		return common.ReportError(errors.New("queue " + q.Name + " is a retry queue: its expired messages go back to " + back + ", not to a DLQ; the DLQ of " + back + " holds what finally failed"))
	default:
		return common.ReportError(errors.New("queue " + q.Name + " has no dead-letter queue: set x-dead-letter-exchange (argument or policy) and bind a queue to it"))
	}
	return func() tea.Msg { return common.OpenDLQMsg{Queue: ref} }
}

// fetch reads the queue; the command copies what it needs.
func (m *Model) fetch() tea.Cmd {
	d, ref, id, tag := m.describer, m.ref, m.id, m.tag
	timeout := max(5*m.refresh, minFetchTimeout)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		detail, err := d.Queue(ctx, ref.Vhost, ref.Name)
		return detailMsg{Stamp: common.Stamp{ID: id, Tag: tag}, Detail: detail, Err: err}
	}
}

func (m *Model) apply(msg detailMsg) tea.Cmd {
	m.err = msg.Err
	switch {
	case msg.Err == nil:
		m.detail = msg.Detail
		m.judge.Observe(msg.Detail.TakenAt, []domain.Queue{msg.Detail.Queue})
	case errors.Is(msg.Err, domain.ErrNotFound):
		m.gone = true
	}
	m.render()
	if m.gone || errors.Is(msg.Err, domain.ErrUnauthorized) {
		return nil
	}
	id, tag := m.id, m.tag
	return tea.Batch(
		tea.Tick(m.refresh, func(time.Time) tea.Msg { return tickMsg{Stamp: common.Stamp{ID: id, Tag: tag}} }),
		m.fetchEffect(),
	)
}

// View implements common.Screen.
func (m *Model) View() string { return m.vp.View() }

// render lays the content out again; it runs on new data or a new size,
// not on every frame. A line wider than the screen is wrapped, not cut:
// what it says last (whom a DLQ serves, how it was paired, a setting's
// source) is what a cut would lose.
func (m *Model) render() {
	m.vp.SetContent(common.Wrap(m.content(), m.vp.Width))
}
