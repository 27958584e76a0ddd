//go:build linux && integration

package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	amqp "github.com/rabbitmq/amqp091-go"
	"golang.org/x/term"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/testkit"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/message"
	"github.com/warrenops/warren/ui/styles"
)

// escapes are terminal commands a hostile producer can hide anywhere: clear
// the screen, retitle the window, write the clipboard (OSC 52), a C1 CSI,
// a bidirectional override, backspace and carriage return.
const escapes = "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\u009b31m\u202e\b\r"

// The hostile scene's queues: names carry escapes too.
const (
	hostileOrigin = "orders\x1b[31m\u009b\x07"
	hostileDLQ    = "dlq\x1b]0;pwned\x07"
)

// clientMaxDepth is how deep the AMQP client (amqp091-go) reads nested
// tables and arrays; a deeper one kills the connection it arrives on.
const clientMaxDepth = 32

// nestedTable is a header value of depth tables, one inside the other.
func nestedTable(depth int) any {
	nested := any("bottom" + escapes)
	for i := range depth {
		nested = amqp.Table{"level": int32(i), "next": nested}
	}
	return nested
}

// hostileMessages is the corpus, one message per way to be hostile.
func hostileMessages() []amqp.Publishing {
	binary := make([]byte, 4096)
	for i := range binary {
		binary[i] = byte(i)
	}
	line := []byte("a line \x1b[31mred\x1b[0m \u009b1m\ttab\n")
	big := bytes.Repeat(line, 16<<20/len(line)+1)[:16<<20]
	many := amqp.Table{}
	for i := range 1000 {
		many[fmt.Sprintf("h%04d", i)] = fmt.Sprintf("value %d%s", i, escapes)
	}
	nested := nestedTable(clientMaxDepth)
	return []amqp.Publishing{
		{MessageId: "hostile-binary", ContentType: "application/octet-stream", Body: binary},
		{MessageId: "hostile-16mib", ContentType: "text/plain", Body: big},
		{MessageId: "hostile-nested", Headers: amqp.Table{"deep": nested}, Body: []byte(`{"nested":true}`)},
		{MessageId: "hostile-1000-headers", Headers: many, Body: []byte("many headers")},
		{MessageId: "hostile-field-types", Headers: amqp.Table{
			"int8": int8(-8), "int16": int16(-16), "int32": int32(-32), "int64": int64(math.MinInt64),
			"uint8": uint8(255), "uint16": uint16(65535), "uint32": uint32(math.MaxUint32),
			// The broker refuses NaN and infinities (Erlang has no such floats).
			"float32": float32(-3.25), "float64": -1e-300, "float64-max": math.MaxFloat64,
			"decimal": amqp.Decimal{Scale: 9, Value: -123456789}, "bool": true,
			"time": time.Unix(1<<40, 0), "time-zero": time.Unix(0, 0), "bytes": []byte{0, 0x1b, 0x9b, 0xff},
			"void": nil, "string": "text" + escapes, "table": amqp.Table{"k" + escapes: "v" + escapes},
			"array": []any{int32(1), "two" + escapes, []any{nil, true}, amqp.Table{"x": 1.5}, []byte{0x07}},
		}, Body: []byte("every field type")},
		{MessageId: "hostile-invalid-utf8", ContentType: "text/plain; charset=\xff", Type: "\xfe\xfd", AppId: "app\xc0\xaf",
			CorrelationId: "\xe2\x82", Headers: amqp.Table{"bad-value": "\xff\xfe", "bad\xffname": "v", "bad-bytes": []byte{0xff}},
			Body: []byte("\xff\xfe\xfd invalid \xc3\x28 utf-8")},
		{MessageId: "id-" + escapes, ContentType: "text/plain" + escapes, Type: escapes, AppId: escapes, CorrelationId: escapes,
			ReplyTo: escapes, Headers: amqp.Table{"name" + escapes: "value" + escapes}, Body: []byte("body" + escapes)},
		{Body: []byte("no message_id, no timestamp")},
		{MessageId: "hostile-forged-x-death", Headers: amqp.Table{
			"x-death": []any{
				amqp.Table{"count": "lots", "queue": int32(5), "reason": escapes, "time": "yesterday", "routing-keys": "nope"},
				amqp.Table{"count": int64(math.MaxInt64), "queue": "elsewhere" + escapes, "reason": "expired", "exchange": escapes,
					"time": time.Unix(1e9, 0), "routing-keys": []any{"k" + escapes}},
				amqp.Table{"count": int64(3), "queue": hostileOrigin, "reason": "rejected", "time": time.Unix(1e9, 0),
					"exchange": "", "routing-keys": []any{hostileOrigin}},
			},
			"x-first-death-queue": "evil" + escapes, "x-first-death-reason": escapes,
		}, Body: []byte("forged history")},
	}
}

// hostileScene holds the corpus in a DLQ, dead-lettered by the broker,
// and each message as the DLQ delivers it, by logical ID.
type hostileScene struct {
	vhost, config, audit string
	held                 map[string]amqp.Delivery
}

func newHostileScene(t *testing.T) *hostileScene {
	t.Helper()
	s := &hostileScene{vhost: testkit.Vhost(t, "warren-cli-hostile"), held: map[string]amqp.Delivery{}}
	ch := vhostChannel(t, s.vhost)
	if _, err := ch.QueueDeclare(hostileDLQ, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(hostileOrigin, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": hostileDLQ}); err != nil {
		t.Fatal(err)
	}
	msgs := hostileMessages()
	testkit.DeadLetter(t, ch, hostileOrigin, hostileDLQ, msgs)
	// Keep each message exactly as the DLQ holds it, then give it back.
	var tags []uint64
	for range msgs {
		d, ok, err := ch.Get(hostileDLQ, false)
		if err != nil || !ok {
			t.Fatalf("get from the DLQ: %v", err)
		}
		s.held[dlq.Decode(d, dlq.Options{}, false).LogicalID] = d
		tags = append(tags, d.DeliveryTag)
	}
	for _, tag := range tags {
		if err := ch.Nack(tag, false, true); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.held) != len(msgs) {
		t.Fatalf("%d distinct logical IDs for %d messages", len(s.held), len(msgs))
	}
	waitReady(t, s.vhost, hostileDLQ, len(msgs))
	dir := t.TempDir()
	s.audit = filepath.Join(dir, "audit.jsonl")
	s.config = filepath.Join(dir, "warren.toml")
	testEnv("WARREN_HOSTILE_TEST_PASSWORD", "guest")
	text := fmt.Sprintf("current_context = \"t\"\n[contexts.t]\namqp_url = %q\nmanagement_url = %q\nusername = \"guest\"\npassword_env = \"WARREN_HOSTILE_TEST_PASSWORD\"\nvhost = %q\naudit = \"file:%s\"\n", testAMQP, testMgmt, s.vhost, s.audit)
	if err := os.WriteFile(s.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs one command on the scene's config; it must succeed.
func (s *hostileScene) run(t *testing.T, args ...string) cliRun {
	t.Helper()
	r := execCLI(t, append([]string{"--config", s.config}, args...)...)
	if r.err != nil {
		t.Fatalf("warren %q: %v\nstderr: %q", args, r.err, clip(r.errOut))
	}
	screenSafe(t, "stderr of "+strings.Join(args, " "), r.errOut)
	return r
}

// screenSafe fails when text would command a terminal: invalid UTF-8 (a
// lone byte can be an 8-bit C1 control), C0 controls other than newline
// and tab, DEL, C1 controls and bidirectional overrides.
func screenSafe(t *testing.T, where, text string) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Errorf("%s is not valid UTF-8", where)
		return
	}
	for i, r := range text {
		unsafe := (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
		if unsafe {
			t.Errorf("%s holds %U at byte %d: …%q…", where, r, i, text[max(0, i-40):min(len(text), i+20)])
			return
		}
	}
}

// jsonSafe fails when out is not JSON or carries raw control characters.
func jsonSafe(t *testing.T, where, out string) {
	t.Helper()
	if !json.Valid([]byte(out)) {
		t.Errorf("%s is not valid JSON: %q", where, clip(out))
	}
	if i := strings.IndexFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' }); i >= 0 {
		t.Errorf("%s holds a raw control character at byte %d", where, i)
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func digest(b []byte) [32]byte { return sha256.Sum256(b) }

func TestHostileCorpusIsListedShownAndCountedSafely(t *testing.T) {
	t.Parallel()
	s := newHostileScene(t)
	t.Run("dlq ls", func(t *testing.T) {
		out := s.run(t, "dlq", "ls", hostileDLQ).out
		screenSafe(t, "dlq ls", out)
		for id, d := range s.held {
			dl := dlq.Decode(d, dlq.Options{}, false)
			if !strings.Contains(out, format.LogicalID(dl)) {
				t.Errorf("dlq ls does not list %q", id)
			}
		}
		var got lsJSON
		out = s.run(t, "dlq", "ls", hostileDLQ, "--json").out
		jsonSafe(t, "dlq ls --json", out)
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != len(s.held) {
			t.Fatalf("dlq ls --json lists %d messages, want %d", len(got.Messages), len(s.held))
		}
		for _, m := range got.Messages {
			d, ok := s.held[m.LogicalID]
			switch {
			case !ok:
				t.Errorf("dlq ls --json: logical ID %q is not one the DLQ holds", m.LogicalID)
			case m.Size != len(d.Body) || m.OriginQueue != hostileOrigin || m.MessageID != d.MessageId && utf8.ValidString(d.MessageId):
				t.Errorf("dlq ls --json: %q has size %d, origin %q, message_id %q", m.LogicalID, m.Size, m.OriginQueue, m.MessageID)
			}
		}
	})
	t.Run("dlq show", func(t *testing.T) {
		for id, d := range s.held {
			screenSafe(t, fmt.Sprintf("dlq show --id %q", id), s.run(t, "dlq", "show", hostileDLQ, "--id", id).out)
			out := s.run(t, "dlq", "show", hostileDLQ, "--id", id, "--json").out
			jsonSafe(t, fmt.Sprintf("dlq show --id %q --json", id), out)
			var got struct {
				Messages []showJSON `json:"messages"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Messages) != 1 {
				t.Fatalf("dlq show --id %q --json: %d messages (%v)", id, len(got.Messages), err)
			}
			m := got.Messages[0]
			body := []byte(m.Body)
			if m.BodyEncoding == "base64" {
				body, _ = base64.StdEncoding.DecodeString(m.Body)
			}
			if m.LogicalID != id || digest(body) != digest(d.Body) {
				t.Errorf("dlq show --json: logical ID %q (want %q), body intact %v", m.LogicalID, id, digest(body) == digest(d.Body))
			}
		}
	})
	t.Run("dlq stats", func(t *testing.T) {
		screenSafe(t, "dlq stats", s.run(t, "dlq", "stats", hostileDLQ).out)
		out := s.run(t, "dlq", "stats", hostileDLQ, "--json").out
		jsonSafe(t, "dlq stats --json", out)
		var got statsJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.Total != len(s.held) {
			t.Errorf("dlq stats --json counts %d messages (%v), want %d", got.Total, err, len(s.held))
		}
	})
	t.Run("plans", func(t *testing.T) {
		screenSafe(t, "dlq replay --dry-run", s.run(t, "dlq", "replay", hostileDLQ, "--dry-run").out)
		screenSafe(t, "dlq quarantine --dry-run", s.run(t, "dlq", "quarantine", hostileDLQ, "--dry-run", "--reason", "why").out)
		// A reason holding escapes would go into every copy's headers,
		// which other tools print as they are: it is refused, and the
		// refusal quotes it safely.
		r := execCLI(t, "--config", s.config, "dlq", "quarantine", hostileDLQ, "--dry-run", "--reason", "why"+escapes)
		if r.code() != app.ExitUsage || !strings.Contains(r.errOut+fmt.Sprint(r.err), "holds a control character") {
			t.Errorf("a quarantine reason of escapes: exit %d (%v), want 2 refusing it", r.code(), r.err)
		}
		screenSafe(t, "the refusal of a reason of escapes", r.errOut+fmt.Sprint(r.err))
	})
	waitReady(t, s.vhost, hostileDLQ, len(s.held))
}

func TestHostileCorpusRendersInTheInspectorAndDashboardWithoutEscapes(t *testing.T) {
	s := newHostileScene(t)
	profile := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.Ascii)
	t.Cleanup(func() { lipgloss.SetColorProfile(profile) })
	ref := domain.QueueRef{Vhost: s.vhost, Name: hostileDLQ}
	for id, d := range s.held {
		m := message.New(common.OpenMessageMsg{Queue: ref, Letter: dlq.Decode(d, dlq.Options{}, true), Inbox: "unknown", InboxDetail: escapes},
			message.Options{Styles: styles.Default()})
		m.SetSize(100, 0)
		screenSafe(t, fmt.Sprintf("the inspector on %q", id), m.View())
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
		screenSafe(t, fmt.Sprintf("the inspector on %q in hex", id), m.View())
	}
	a := &App{ConfigPath: s.config, In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}
	tm := teatest.NewTestModel(t, tuiModel(t, a, nil), teatest.WithInitialTermSize(160, 50))
	var screen screenLog
	tm.Send(common.OpenDLQMsg{Queue: ref})
	screen.waitScreen(t, tm, "hostile-field-types")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	screen.waitScreen(t, tm, "Headers")
	tm.Type("q")
	screenSafe(t, "the dashboard on the hostile DLQ", tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).View())
}

func TestHostileCorpusIsReplayedByteForByteAndExported(t *testing.T) {
	s := newHostileScene(t)
	out := s.run(t, "dlq", "replay", hostileDLQ, "--yes", "--json").out
	jsonSafe(t, "dlq replay --json", out)
	var res struct{ Selected, Confirmed, Returned, Nacked, Unknown int }
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Confirmed != len(s.held) || res.Selected != len(s.held) {
		t.Fatalf("replay: %+v (%v), want all %d confirmed", res, err, len(s.held))
	}
	waitReady(t, s.vhost, hostileDLQ, 0)
	waitReady(t, s.vhost, hostileOrigin, len(s.held))
	ch := vhostChannel(t, s.vhost)
	for range s.held {
		got, ok, err := ch.Get(hostileOrigin, true)
		if err != nil || !ok {
			t.Fatalf("get the replayed copy: %v", err)
		}
		id := dlq.Decode(got, dlq.Options{}, false).LogicalID
		if want, ok := s.held[id]; !ok {
			t.Errorf("a replayed copy with logical ID %q the DLQ never held", id)
		} else {
			sameMessage(t, id, want, got)
		}
	}
	s.exported(t)
}

// sameMessage compares a replayed copy with the dead letter it came from:
// the body byte for byte, every property, every header, and nothing added
// but warren's own headers.
func sameMessage(t *testing.T, id string, want, got amqp.Delivery) {
	t.Helper()
	if digest(got.Body) != digest(want.Body) {
		t.Errorf("%q: the body changed (%d bytes, want %d)", id, len(got.Body), len(want.Body))
	}
	props := func(d amqp.Delivery) []any {
		return []any{d.ContentType, d.ContentEncoding, d.DeliveryMode, d.Priority, d.CorrelationId, d.ReplyTo,
			d.Expiration, d.MessageId, d.Timestamp, d.Type, d.UserId, d.AppId}
	}
	if !reflect.DeepEqual(props(got), props(want)) {
		t.Errorf("%q: properties %q, want %q", id, props(got), props(want))
	}
	for k, v := range want.Headers {
		if !reflect.DeepEqual(got.Headers[k], v) {
			t.Errorf("%q: header %q is %#v, want %#v", id, k, clip(fmt.Sprint(got.Headers[k])), clip(fmt.Sprint(v)))
		}
	}
	for k := range got.Headers {
		if _, ok := want.Headers[k]; !ok && !strings.HasPrefix(k, "x-warren-") {
			t.Errorf("%q: header %q was added", id, k)
		}
	}
}

// exported checks the audit log of the replay: exact in JSONL and CSV,
// and harmless when printed on a terminal.
func (s *hostileScene) exported(t *testing.T) {
	t.Helper()
	out := s.run(t, "audit", "export").out
	confirmed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var rec audit.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit export: %v in %q", err, clip(line))
		}
		if rec.Outcome == domain.OutcomeConfirmed {
			for _, id := range rec.LogicalIDs {
				confirmed[id] = true
			}
		}
	}
	for id := range s.held {
		if !confirmed[id] {
			t.Errorf("audit export: no confirmed record names %q exactly", id)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(s.run(t, "audit", "export", "--format", "csv").out)).ReadAll()
	if err != nil || len(rows) < 4 {
		t.Errorf("audit export --format csv: %d rows (%v)", len(rows), err)
	}
	for _, args := range [][]string{{"audit", "export"}, {"audit", "export", "--format", "csv"}, {"audit", "tail"}, {"audit", "verify"}} {
		screenSafe(t, "warren "+strings.Join(args, " ")+" on a terminal", s.onTerminal(t, args...))
	}
}

// onTerminal runs a command whose stdout is a pseudo-terminal and returns
// what reached the screen.
func (s *hostileScene) onTerminal(t *testing.T, args ...string) string {
	t.Helper()
	master, tty := openPTY(t)
	defer master.Close()
	const end = "\n--end of output--\n"
	var screen bytes.Buffer
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for !bytes.HasSuffix(screen.Bytes(), []byte(end)) {
			n, err := master.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var errOut bytes.Buffer
	a := &App{In: strings.NewReader(""), Out: tty, Err: &errOut}
	r := execCLIOn(t, a, &bytes.Buffer{}, &errOut, append([]string{"--config", s.config}, args...)...)
	_, _ = tty.WriteString(end)
	if err := <-done; err != nil {
		t.Fatalf("read the terminal: %v", err)
	}
	tty.Close()
	if r.err != nil {
		t.Fatalf("warren %q on a terminal: %v", args, r.err)
	}
	return strings.TrimSuffix(screen.String(), end)
}

// openPTY opens a pseudo-terminal in raw mode, so the screen receives
// exactly what was written.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatalf("unlock the pseudo-terminal: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("name the pseudo-terminal: %v", errno)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal side: %v", err)
	}
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatalf("raw mode: %v", err)
	}
	return master, tty
}

// declare adds a queue to a read-only test scene.
func declare(t *testing.T, vhost, name string, args amqp.Table) {
	t.Helper()
	if _, err := vhostChannel(t, vhost).QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
}

// Before 3.13 the broker never writes x-last-death-*, so on those versions
// such headers can only come from the producer; they must not choose where
// a replay publishes.
func TestHostileForgedLastDeathHeadersCannotRedirectAReplay(t *testing.T) {
	s := newROScene(t)
	declare(t, s.vhost, "payments", nil)
	testkit.DeadLetter(t, vhostChannel(t, s.vhost), "orders", "orders.dlq", []amqp.Publishing{{MessageId: "forged",
		Headers: amqp.Table{"x-last-death-queue": "payments", "x-last-death-reason": "rejected", "x-last-death-exchange": ""}}})
	if r := execCLI(t, "--config", s.config(t, ""), "dlq", "replay", "orders.dlq", "--yes"); r.err != nil {
		t.Fatalf("replay: %v", r.err)
	}
	if got := ready(t, s.vhost, "payments"); got != 0 {
		t.Errorf("the replay published into payments, the queue a forged x-last-death-queue named (%d messages there)", got)
	}
	if got := ready(t, s.vhost, "orders"); got != 4 {
		t.Errorf("orders, where the broker dead-lettered every message (x-death), holds %d messages, want 4", got)
	}
}

// A header nested deeper than the AMQP client reads closes the connection
// it arrives on, so no browse gets past it. The DLQ must keep every
// message, and the operator must learn why warren cannot read it.
func TestHostileHeadersTooDeepForTheClientAreExplainedAndLoseNothing(t *testing.T) {
	s := newROScene(t)
	// Expiry dead-letters it without a client ever receiving it.
	declare(t, s.vhost, "orders.wait", amqp.Table{"x-message-ttl": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	ch := vhostChannel(t, s.vhost)
	if err := ch.Publish("", "orders.wait", false, false, amqp.Publishing{MessageId: "deep", Headers: amqp.Table{"deep": nestedTable(50)}}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, s.vhost, "orders.dlq", 4)
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "after"}})
	for _, args := range [][]string{{"dlq", "ls", "orders.dlq"}, {"dlq", "stats", "orders.dlq"}, {"dlq", "replay", "orders.dlq", "--yes"}} {
		r := execCLI(t, append([]string{"--config", s.config(t, "")}, args...)...)
		if r.err == nil || !strings.Contains(r.err.Error(), "headers the AMQP client cannot decode") {
			t.Errorf("warren %s fails without naming the unreadable headers: %v", strings.Join(args, " "), r.err)
		}
		waitReady(t, s.vhost, "orders.dlq", 5)
	}
}
