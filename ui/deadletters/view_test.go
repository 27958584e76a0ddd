package deadletters

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui/common"
)

func TestInboxStatus(t *testing.T) {
	tests := []struct {
		name  string
		inbox InboxLookup
		want  map[string]string
		note  string
	}{
		{name: "present is applied, absent is pending", inbox: fakeInbox{applied: map[string]time.Time{"ev-1": t0}},
			want: map[string]string{"ev-1": "applied", "ev-3": "pending", "9f86d081": "unknown"}},
		{name: "no inbox configured is unknown", want: map[string]string{"ev-1": "unknown"}, note: "inbox unknown: no inbox configured"},
		{name: "an unreachable database is unknown and says why", inbox: fakeInbox{err: errors.New("dial tcp 10.0.0.1:5432: connection refused")},
			want: map[string]string{"ev-1": "unknown"}, note: "inbox unknown: dial tcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{newSession(ops.Page{Letters: sampleLetters()})}}, Inbox: tt.inbox}, Options{})
			d.browsing(4)
			for id, want := range tt.want {
				if got := d.m.held.inbox[id].label(); got != want {
					t.Errorf("%s: %s, want %s", id, got, want)
				}
			}
			if tt.note != "" && !strings.Contains(d.m.View(), tt.note) {
				t.Errorf("view lacks %q:\n%s", tt.note, d.m.View())
			}
		})
	}
}

func TestEnterOpensTheInspector(t *testing.T) {
	d, _ := browsingDriver(t, Options{}, nil)
	d.keys("enter")
	d.until("the open request", func() bool { _, ok := lastOut[common.OpenMessageMsg](d); return ok })
	msg, _ := lastOut[common.OpenMessageMsg](d)
	if msg.Letter.LogicalID != "ev-1" || msg.Inbox != "applied" || !strings.HasPrefix(msg.InboxDetail, "applied at ") || msg.Queue != ref {
		t.Errorf("open = %+v", msg)
	}
}

func TestNextPage(t *testing.T) {
	ls := sampleLetters()
	s := newSession(ops.Page{Letters: ls[:2]}, ops.Page{Letters: ls[2:], End: true})
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}}, Options{})
	d.browsing(2)
	d.keys("n")
	d.browsing(4)
	if !d.m.end || !strings.Contains(d.m.View(), "end of queue") {
		t.Errorf("the last page is not marked:\n%s", d.m.View())
	}
	d.keys("n")
	if !strings.Contains(d.infoText(), "nothing arrived since") {
		t.Errorf("info = %q", d.infoText())
	}
}

// After the end, n reads what arrived since: the held messages are not
// all the queue has once new dead letters come in.
func TestNextPageAfterTheEndReadsWhatArrivedSince(t *testing.T) {
	ls := sampleLetters()
	s := newSession(ops.Page{Letters: ls[:2], End: true, Depth: 2}, ops.Page{Letters: ls[2:], End: true, Depth: 4, Notes: []string{"read 2 more that arrived in orders.dlq after the browse opened"}})
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}}, Options{})
	d.browsing(2)
	if v := d.m.View(); !strings.Contains(v, "2 held of 2 when opened · end of queue (n: what arrived since)") {
		t.Fatalf("the end does not say n reads what arrived since:\n%s", v)
	}
	d.keys("n")
	d.browsing(4)
	if v := d.m.View(); !strings.Contains(v, "4 held of 2 when opened") || !strings.Contains(v, "read 2 more that arrived in orders.dlq after the browse opened") {
		t.Errorf("the page of new arrivals is not told apart:\n%s", v)
	}
}

func TestHostileContentNeverReachesTheTerminal(t *testing.T) {
	evil := letter(0, "ev-\x1b[2J", "rejected\x1b]52;c;cHduZWQ=\x07", "orders\xff\xfe", 1, 1)
	evil.MessageID = "m\x1b[31m"
	evil.Headers = map[string]any{"x-\x1b[2J": "\x1b]52;c;ZXZpbA==\x07"}
	evil.Body = []byte("\x1b[2J\x1b]52;c;ZXZpbA==\x07\xff")
	s := newSession(ops.Page{Letters: []domain.DeadLetter{evil}, Notes: []string{"note \x1b[2J"}})
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}}, Options{})
	d.browsing(1)
	d.keys("/")
	d.typeText("bogus")
	d.keys("enter")
	if v := d.m.View(); strings.ContainsRune(v, '\x1b') || strings.ContainsRune(v, '\x07') {
		t.Fatalf("raw control bytes in the view: %q", v)
	}
}

func TestTheViewFitsTheScreen(t *testing.T) {
	long := strings.Repeat("a long note about consumers on this DLQ ", 8)
	many := make([]domain.DeadLetter, 60)
	for i := range many {
		many[i] = letter(i, fmt.Sprintf("ev-%d", i), []string{"rejected", "expired", "maxlen", "delivery_limit"}[i%4], fmt.Sprintf("origin-%d", i%9), i%7, i)
	}
	for _, size := range [][2]int{{120, 40}, {80, 24}, {100, 30}} {
		for _, keys := range [][]string{nil, {"*", "r"}} {
			t.Run(fmt.Sprintf("%dx%d %v", size[0], size[1], keys), func(t *testing.T) {
				s := newSession(ops.Page{Letters: many, Notes: []string{long}})
				d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}, Actions: &fakeActions{confirm: ops.Confirm{Phrase: "orders.dlq 60", Why: "production context"}}}, Options{})
				d.m.SetSize(size[0], size[1])
				d.browsing(60)
				d.keys(keys...)
				if len(keys) > 0 {
					d.until("the prompt", func() bool { return d.m.mode() == prompting })
				}
				v := d.m.View()
				lines := strings.Split(v, "\n")
				if len(lines) > size[1] {
					t.Errorf("%d lines for a height of %d:\n%s", len(lines), size[1], v)
				}
				for _, l := range lines {
					if w := ansi.StringWidth(l); w > size[0] {
						t.Errorf("line of width %d > %d: %q", w, size[0], l)
					}
				}
			})
		}
	}
}

func TestAMessageWithoutXDeathIsMarkedAndExplained(t *testing.T) {
	ls := sampleLetters()
	straight := letter(4, "ev-5", "", "", 0, 0)
	straight.Deaths, straight.DeadLetteredAt = nil, time.Time{}
	s := newSession(ops.Page{Letters: append(ls, straight)})
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}}, Options{})
	d.m.SetSize(120, 40)
	d.browsing(5)
	v := d.m.View()
	var row string
	for _, line := range strings.Split(v, "\n") {
		if strings.Contains(line, "ev-5") {
			row = line
		}
	}
	if !strings.Contains(row, "no x-death") || !strings.Contains(row, " — ") {
		t.Errorf("the row does not say it has no x-death and no origin: %q", row)
	}
	if words := strings.Join(strings.Fields(v), " "); !strings.Contains(words, "no x-death 1 █") || !strings.Contains(words, "(none) 1 █") {
		t.Errorf("the histograms do not count it as its row words it:\n%s", v)
	}
	if !strings.Contains(v, "not dead-lettered by the broker (no x-death): published straight into the queue") {
		t.Errorf("no legend under the table:\n%s", v)
	}
	d2 := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{newSession(ops.Page{Letters: sampleLetters()})}}}, Options{})
	d2.browsing(4)
	if strings.Contains(d2.m.View(), "no x-death") {
		t.Errorf("the legend shows though every message carries x-death")
	}
}

// The columns keep their place as the operator scrolls: a long ID or
// reason far down the list is measured before it comes on screen.
func TestTheColumnsDoNotMoveWhileScrolling(t *testing.T) {
	var ls []domain.DeadLetter
	for i := range 80 {
		ls = append(ls, letter(i, fmt.Sprintf("ev-%d", i), "rejected", "orders", 1, 5))
	}
	ls[79] = letter(79, "order-2026-12-06-a-very-long-id", "delivery_limit", "orders.invoicing", 20, 5)
	s := newSession(ops.Page{Letters: ls, End: true})
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}}, Options{})
	d.browsing(80)
	header := func() string {
		for _, l := range strings.Split(ansi.Strip(d.m.View()), "\n") {
			if strings.Contains(l, "LOGICAL ID") {
				return l
			}
		}
		t.Fatalf("no header:\n%s", d.m.View())
		return ""
	}
	top := header()
	d.keys("G")
	if bottom := header(); bottom != top || !strings.Contains(ansi.Strip(d.m.View()), "delivery_limit") {
		t.Fatalf("the header moved as the list scrolled:\n%q\n%q", top, bottom)
	}
}

// IDs that share a start are cut in the middle, where they are the
// same, so that the rows still read apart on a narrow terminal.
func TestIDsAreCutInTheMiddle(t *testing.T) {
	if got := cutMiddle("ev-orders.the-long-part-0011", 12); got != "ev-or…t-0011" {
		t.Errorf("cutMiddle = %q", got)
	}
	if got := cutMiddle("ev-1", 12); got != "ev-1" {
		t.Errorf("a short ID was cut: %q", got)
	}
	var ls []domain.DeadLetter
	for i := range 3 {
		ls = append(ls, letter(i, fmt.Sprintf("ev-orders.the-long-shared-start-%04d", i), "rejected", "orders", 1, 5))
	}
	s := newSession(ops.Page{Letters: ls, End: true})
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}}, Options{})
	d.m.SetSize(80, 30)
	d.browsing(3)
	v := ansi.Strip(d.m.View())
	for i := range 3 {
		if !strings.Contains(v, fmt.Sprintf("%04d", i)) {
			t.Errorf("the row of ID …%04d does not show its end:\n%s", i, v)
		}
	}
}
