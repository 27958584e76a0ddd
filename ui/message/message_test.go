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

	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

var t0 = time.Date(2024, 5, 1, 3, 0, 0, 0, time.UTC)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func sample() common.OpenMessageMsg {
	first := t0.Add(-50 * time.Minute)
	return common.OpenMessageMsg{
		Queue: mgmt.QueueRef{Vhost: "/", Name: "orders.dlq"},
		Letter: dlq.DeadLetter{
			Position: 2, DeliveryTag: 3, MessageID: "m-42", LogicalID: "ev-42", LogicalIDFrom: dlq.IDHeader,
			Reason: "rejected", OriginQueue: "orders", OriginExchange: "orders", RoutingKeys: []string{"order.created"},
			Attempts: 4, ReplayCount: 1, DeadLetteredAt: t0.Add(-5 * time.Minute), Size: 60,
			DeliveryCount: -1, Headroom: -1, Redelivered: true,
			Deaths: []dlq.Death{
				{Queue: "orders", Reason: "rejected", Exchange: "orders", RoutingKeys: []string{"order.created"}, Count: 3, Time: first},
				{Queue: "orders.retry", Reason: "expired", Exchange: "", RoutingKeys: []string{"orders"}, Count: 3, Time: first.Add(time.Second), OriginalExpiration: "10000"},
			},
			Properties: dlq.Properties{
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

func TestBodyDecoding(t *testing.T) {
	big := strings.Repeat("a", textLimit+100)
	tests := []struct {
		name    string
		body    []byte
		props   dlq.Properties
		hex     bool
		kind    string
		want    []string
		notWant []string
	}{
		{name: "json is indented", body: []byte(`{"a":1}`), props: dlq.Properties{ContentType: "application/json"}, kind: "json", want: []string{"{\n  \"a\": 1\n}"}},
		{name: "json without a content type is recognised", body: []byte(`[1,2]`), kind: "json", want: []string{"[\n  1,\n  2\n]"}},
		{name: "invalid json says so and shows text", body: []byte(`{"a":`), props: dlq.Properties{ContentType: "application/json"}, kind: "text", want: []string{`{"a":`, "not valid JSON"}},
		{name: "text is shown as text", body: []byte("hello\nworld"), props: dlq.Properties{ContentType: "text/plain"}, kind: "text", want: []string{"hello\nworld"}},
		{name: "escapes in text are made visible", body: []byte("a\x1b[2Jb"), kind: "text", want: []string{`a\x1b[2Jb`}},
		{name: "invalid utf-8 is a hex dump", body: []byte{0xff, 0xfe, 'A'}, kind: "hex", want: []string{"00000000  ff fe 41"}},
		{name: "a compressed body is shown as bytes", body: []byte("xyz"), props: dlq.Properties{ContentEncoding: "gzip"}, kind: "hex", want: []string{"content encoding gzip, shown as bytes"}},
		{name: "hex on request", body: []byte("hi"), hex: true, kind: "hex", want: []string{"68 69"}},
		{name: "large text is cut and says how much is shown", body: []byte(big), kind: "text", want: []string{"first 64.0 KiB shown"}, notWant: []string{big}},
		{name: "large binary is cut too", body: bytes.Repeat([]byte{0}, hexLimit*2), kind: "hex", want: []string{"first 4.0 KiB shown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, text, note := decode(tt.body, tt.props, tt.hex)
			if kind != tt.kind {
				t.Errorf("kind = %s, want %s", kind, tt.kind)
			}
			all := text + "\n" + note
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("lacks %q in %q", w, all)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(all, w) {
					t.Errorf("should not contain the whole body")
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
	if !strings.Contains(full, "text · 195.3 KiB · first 64.0 KiB shown") {
		t.Errorf("the body header does not state the real size")
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
	if !strings.Contains(strings.Join(m.lines, "\n"), "hex · 60 B") {
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
