package message

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

var t0 = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func sample() common.OpenMessageMsg {
	first := t0.Add(-50 * time.Minute)
	return common.OpenMessageMsg{
		Queue: domain.QueueRef{Vhost: "/", Name: "orders.dlq"},
		Letter: domain.DeadLetter{
			Position: 2, DeliveryTag: 3, MessageID: "m-42", LogicalID: "ev-42", LogicalIDFrom: domain.IDHeader,
			Reason: "rejected", OriginQueue: "orders", OriginExchange: "orders", RoutingKeys: []string{"order.created"},
			Attempts: 4, ReplayCount: 1, DeadLetteredAt: t0.Add(-5 * time.Minute), Size: 60,
			DeliveryCount: -1, AcquiredCount: -1, Headroom: -1, Redelivered: true,
			Deaths: []domain.Death{
				{Queue: "orders", Reason: "rejected", Exchange: "orders", RoutingKeys: []string{"order.created"}, Count: 3, Time: first},
				{Queue: "orders.retry", Reason: "expired", Exchange: "", RoutingKeys: []string{"orders"}, Count: 3, Time: first.Add(time.Second), OriginalExpiration: "10000"},
			},
			Properties: domain.Properties{
				ContentType: "application/json", DeliveryMode: 2, MessageID: "m-42", CorrelationID: "c-7",
				Timestamp: t0.Add(-time.Hour), Type: "order.created", AppID: "checkout",
			},
			Headers: map[string]any{
				"event_id":               "ev-42",
				"x-death":                []any{map[string]any{"count": int64(3)}},
				"x-first-death-queue":    "orders",
				"x-first-death-exchange": "",
				"x-first-death-reason":   "rejected",
				"x-warren-replay-count":  int32(1),
				"trace":                  map[string]any{"span": "ab12", "sampled": true},
			},
			Body: []byte(`{"order":42,"items":[{"sku":"A-1","qty":2}],"total":"19.90"}`),
		},
		Inbox:       "pending",
		InboxDetail: "no inbox row for this logical ID",
	}
}

// program runs the inspector as the whole program, sized like a terminal.
type program struct{ s common.Screen }

func (p program) Init() tea.Cmd { return p.s.Init() }

func (p program) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		p.s.SetSize(ws.Width, ws.Height)
		return p, nil
	}
	s, cmd := p.s.Update(msg)
	return program{s: s}, cmd
}

func (p program) View() string { return p.s.View() }

func newModel(msg common.OpenMessageMsg) *Model {
	return New(msg, Options{Now: func() time.Time { return t0 }, Styles: styles.New(true)})
}

func TestGoldenInspector(t *testing.T) {
	tests := []struct {
		name string
		keys string
	}{
		{name: "top"},
		{name: "bottom", keys: "G"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm := teatest.NewTestModel(t, program{s: newModel(sample())}, teatest.WithInitialTermSize(120, 40))
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Dead-lettering")) },
				teatest.WithDuration(5*time.Second))
			if tt.keys != "" {
				tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(tt.keys)})
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			teatest.RequireEqualOutput(t, []byte(tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()))
		})
	}
}

// The inspector shows a body as format.BodyText words it; the cases of
// that wording are tested there, these that the screen draws it whole.
func TestTheBodyIsShownAsTheFormatterWordsIt(t *testing.T) {
	tests := []struct {
		name  string
		body  []byte
		props domain.Properties
		want  []string
	}{
		{name: "json is indented", body: []byte(`{"a":1}`), props: domain.Properties{ContentType: "application/json"},
			want: []string{"json · 7 B", "  {\n    \"a\": 1\n  }"}},
		{name: "text with two bad bytes is a hex dump with an ASCII column", body: []byte("{\"id\": 4\xff\xfe}\n"),
			want: []string{"bytes · 12 B", `00000000  7b 22 69 64 22 3a 20 34  ff fe 7d 0a              |{"id": 4..}.|`}},
		{name: "a compressed body says why it is bytes", body: []byte("xyz"), props: domain.Properties{ContentEncoding: "gzip"},
			want: []string{"bytes · 3 B · content encoding gzip, shown as bytes", "78 79 7a"}},
		{name: "a large binary body says how much more there is", body: bytes.Repeat([]byte{0}, 2*format.HexLimit),
			want: []string{"bytes · 8.0 KiB", "00000ff0  00", "… 4096 more bytes not shown (warren dlq show --json gives the whole body)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := sample()
			msg.Letter.Body, msg.Letter.Properties = tt.body, tt.props
			m := newModel(msg)
			m.SetSize(120, 40)
			all := strings.Join(m.lines, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("lacks %q in:\n%s", w, all[strings.Index(all, "Body"):])
				}
			}
		})
	}
}

func TestTheRealSizeIsShown(t *testing.T) {
	msg := sample()
	msg.Letter.Body = bytes.Repeat([]byte("x"), 200_000)
	msg.Letter.Properties.ContentType = "text/plain"
	m := newModel(msg)
	m.SetSize(120, 40)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("G")})
	full := strings.Join(m.lines, "\n")
	if !strings.Contains(full, "text · 195.3 KiB") || !strings.Contains(full, "… 134464 more bytes not shown") {
		t.Errorf("the body header does not state the real size, or the end what was left out")
	}
}

func TestScrollingAndHexToggle(t *testing.T) {
	m := newModel(sample())
	m.SetSize(120, 10)
	if !strings.Contains(m.View(), "lines 1–9 of") {
		t.Fatalf("no scroll position:\n%s", m.View())
	}
	keys := []struct {
		key  tea.KeyMsg
		want int
	}{
		{tea.KeyMsg{Type: tea.KeyDown}, 1},
		{tea.KeyMsg{Type: tea.KeyUp}, 0},
		{tea.KeyMsg{Type: tea.KeyUp}, 0},
		{tea.KeyMsg{Type: tea.KeyPgDown}, 8},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("G")}, len(m.lines) - 9},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("g")}, 0},
	}
	for _, k := range keys {
		m.Update(k.key)
		if m.offset != k.want {
			t.Fatalf("after %s offset = %d, want %d", k.key, m.offset, k.want)
		}
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
	if !strings.Contains(strings.Join(m.lines, "\n"), "bytes · 60 B") {
		t.Error("x did not switch the body to hex")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
	if !strings.Contains(strings.Join(m.lines, "\n"), "json · 60 B") {
		t.Error("x did not switch the body back")
	}
}

func TestHostileContentNeverReachesTheTerminal(t *testing.T) {
	msg := sample()
	l := &msg.Letter
	l.MessageID = "m\x1b[2J"
	l.LogicalID = "ev\x1b]52;c;ZXZpbA==\x07"
	l.OriginQueue = "orders\xff"
	l.Deaths[0].Queue = "q\x1b[31m"
	l.Deaths[0].RoutingKeys = []string{"rk\x9b2J"}
	l.Properties.ContentType = "text/plain\x1b[2J"
	l.Properties.AppID = "\x1b]0;title\x07"
	l.Headers = map[string]any{
		"x-\x1b[2J": "\x1b]52;c;ZXZpbA==\x07",
		"nested":    map[string]any{"k\x1b": []any{"\x1b[5m", []byte{0x1b}}},
	}
	l.Body = []byte("\x1b[2J\x1b]52;c;ZXZpbA==\x07 text\xff")
	msg.InboxDetail = "\x1b[2J"
	m := newModel(msg)
	m.SetSize(120, 200)
	for _, hex := range []bool{false, true} {
		m.hex = hex
		m.render()
		if v := m.View(); strings.ContainsAny(v, "\x1b\x07\u009b") {
			t.Fatalf("raw control bytes in the view (hex=%v): %q", hex, v)
		}
	}
}

func TestAMessageWithoutXDeathSaysTheBrokerNeverDeadLetteredIt(t *testing.T) {
	msg := sample()
	l := &msg.Letter
	l.Deaths, l.Reason, l.OriginQueue, l.OriginExchange, l.RoutingKeys, l.DeadLetteredAt = nil, "", "", "", nil, time.Time{}
	delete(l.Headers, "x-death")
	for _, h := range []string{"x-first-death-queue", "x-first-death-exchange", "x-first-death-reason"} {
		delete(l.Headers, h)
	}
	m := newModel(msg)
	m.SetSize(120, 200)
	v := m.View()
	dead := v[strings.Index(v, "Dead-lettering"):strings.Index(v, "Inbox")]
	if !strings.Contains(dead, "not dead-lettered by the broker (no x-death)") {
		t.Errorf("the dead-lettering section does not say so:\n%s", dead)
	}
	for _, blank := range []string{"reason", "origin queue", "dead-lettered at"} {
		if strings.Contains(dead, blank) {
			t.Errorf("the section still has a blank %q field:\n%s", blank, dead)
		}
	}
	if !strings.Contains(v, "none: not dead-lettered by the broker (no x-death)") {
		t.Errorf("the x-death section does not say so")
	}
}

// massTransitSample is a letter MassTransit moved to orders_error, as the
// reader decodes it, with an escape sequence in its stack trace.
func massTransitSample() common.OpenMessageMsg {
	f := domain.Failure{Convention: domain.ConventionMassTransit, Kind: domain.KindException, OriginQueue: "orders",
		ErrorType: "Orders.OrderNotFoundException", ErrorMessage: "Order 1001 not found",
		StackTrace: "   at Orders.SubmitOrderConsumer.Consume(ConsumeContext`1 context) in /src/SubmitOrderConsumer.cs:line 42\x1b[2J\n\tat MassTransit.Pipeline.Filters.ConsumerMessageFilter`2.Send()",
		Attempts:   5, FailedAt: t0.Add(-3 * time.Minute), Missing: []string{"failed_at (MT-Fault-Timestamp is not a time)"}}
	return common.OpenMessageMsg{
		Queue: domain.QueueRef{Vhost: "/", Name: "orders_error"},
		Letter: domain.DeadLetter{
			Position: 0, DeliveryTag: 1, MessageID: "m-1001", LogicalID: "m-1001", LogicalIDFrom: domain.IDMessageID,
			Reason: domain.KindException, OriginQueue: "orders", Attempts: 5, DeadLetteredAt: t0.Add(-3 * time.Minute), Size: 25,
			DeliveryCount: -1, AcquiredCount: -1, Headroom: -1, Failure: f, Group: domain.GroupOf(f),
			Properties: domain.Properties{ContentType: "application/vnd.masstransit+json", MessageID: "m-1001"},
			Headers: map[string]any{"MT-Reason": "fault", "MT-Fault-ExceptionType": "Orders.OrderNotFoundException",
				"MT-Fault-Message": "Order 1001 not found", "MT-Fault-InputAddress": "rabbitmq://rabbit/orders"},
			Body: []byte(`{"message":{"orderId":1001}}`),
		},
		Inbox: "pending",
	}
}

func TestGoldenInspectorOnAMassTransitFault(t *testing.T) {
	tm := teatest.NewTestModel(t, program{s: newModel(massTransitSample())}, teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Failure")) },
		teatest.WithDuration(5*time.Second))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	view := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()
	for _, want := range []string{"MassTransit error queue (MT-Fault-*)", "Orders.OrderNotFoundException", "Order 1001 not found",
		"queue orders", "failed_at (MT-Fault-Timestamp is not a time)", `\x1b[2J`} {
		if !strings.Contains(view, want) {
			t.Errorf("the inspector does not show %q", want)
		}
	}
	if strings.Contains(view, "\x1b[2J") || strings.Contains(view, "no x-death") {
		t.Error("an escape reached the screen, or the framework's letter reads as never dead-lettered")
	}
	teatest.RequireEqualOutput(t, []byte(view))
}

func TestMarksAPublisherWroteAreShownAsItsClaim(t *testing.T) {
	msg := sample()
	msg.Letter.MarksClaimed, msg.Letter.ClaimedReplays, msg.Letter.ReplayCount = true, 4, 0
	msg.Letter.Headers["x-warren-quarantine-reason"] = "poison"
	m := newModel(msg)
	m.SetSize(120, 80)
	v := m.View()
	if !strings.Contains(v, "quarantined, replayed 4× claimed by the message: no operation of the audit log wrote it") {
		t.Errorf("the inspector does not say the marks are the message's claim:\n%s", v)
	}
}

// The ages shown count on while the operator reads: the content is laid
// out again on the inspector's own tick, and a tick of an inspector
// since closed starts no clock of its own.
func TestTheAgesCountOnWhileTheMessageIsRead(t *testing.T) {
	now := t0
	m := New(sample(), Options{Now: func() time.Time { return now }, Styles: styles.New(true)})
	m.SetSize(100, 60)
	if m.Init() == nil {
		t.Fatal("the inspector starts no clock")
	}
	if v := m.View(); !strings.Contains(v, "dead-lettered at   2024-05-01T02:55:00Z (5m ago)") {
		t.Fatalf("the death's age when opened:\n%s", v)
	}
	now = now.Add(61 * time.Second)
	_, cmd := m.Update(agoTick{m})
	if v := m.View(); !strings.Contains(v, "dead-lettered at   2024-05-01T02:55:00Z (6m01s ago)") || cmd == nil {
		t.Errorf("a tick later the age reads (next tick %v):\n%s", cmd != nil, v)
	}
	other := newModel(sample())
	if _, cmd := other.Update(agoTick{m}); cmd != nil {
		t.Error("an inspector took another's tick and started a second clock")
	}
}
