package deadletters

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

// fakeScanner reports progress, then waits for release (or a cancel)
// before it answers.
type fakeScanner struct {
	stats     *domain.Stats
	err       error
	progress  []int
	started   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
	allowRisk []bool
}

func newScanner(st *domain.Stats, err error) *fakeScanner {
	return &fakeScanner{stats: st, err: err, started: make(chan struct{}), release: make(chan struct{}), cancelled: make(chan struct{})}
}

func (f *fakeScanner) Scan(ctx context.Context, _ domain.QueueRef, allowRisk bool, progress func(int)) (*domain.Stats, error) {
	f.allowRisk = append(f.allowRisk, allowRisk)
	close(f.started)
	for _, n := range f.progress {
		progress(n)
	}
	select {
	case <-f.release:
		return f.stats, f.err
	case <-ctx.Done():
		close(f.cancelled)
		return nil, ctx.Err()
	}
}

// wholeStats are 996 messages the scan read, beside the 4 held.
func wholeStats() *domain.Stats {
	return &domain.Stats{
		Expected: 996, Total: 996, Bytes: 2 << 20, Complete: true, Took: 1200 * time.Millisecond,
		Attempts:    map[int]int{1: 500, 3: 496},
		Reasons:     map[string]int{"rejected": 900, "expired": 96},
		Origins:     map[string]int{"orders": 996},
		ReplayLoops: 7, Quarantined: 2,
		OldestDeadLettered: t0.Add(-76 * time.Hour),
	}
}

func scanningDriver(t *testing.T, sc *fakeScanner) *driver {
	t.Helper()
	d := newDriver(t, Deps{
		Browser: &fakeBrowser{sessions: []*fakeSession{newSession(ops.Page{Letters: sampleLetters()})}},
		Inbox:   fakeInbox{},
		Scanner: sc,
	}, Options{})
	d.browsing(4)
	return d
}

func TestTheWholeQueueIsScannedForStatistics(t *testing.T) {
	sc := newScanner(wholeStats(), nil)
	sc.progress = []int{1000}
	d := scanningDriver(t, sc)
	d.keys("S")
	d.until("the scan's progress", func() bool {
		return strings.Contains(d.m.View(), "scanning the whole queue for statistics: 1000 read · esc cancels")
	})
	if !d.m.HandlesEsc() {
		t.Fatal("a running scan must keep esc for itself")
	}
	if h := helpOf(d.m); !strings.Contains(h, "esc cancel the scan") {
		t.Fatalf("help while scanning = %q", h)
	}
	d.keys("n")
	if e := d.errorText(); !strings.Contains(e, "a whole-queue scan holds the messages of orders.dlq") {
		t.Fatalf("next page during a scan = %q", e)
	}
	close(sc.release)
	d.until("the whole queue's figures", func() bool { return d.m.scan.show })
	v := d.m.View()
	for _, want := range []string{
		"Whole queue at 03:00:00",
		"1000 messages, 4 held · 2.0 MiB",
		"oldest 3d04h · scan took 1.2s",
		"↻ 8 replay loops · 3 quarantined",
		"attempts (whole queue)",
		"rejected       902",
		"orders   999",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if h := helpOf(d.m); !strings.Contains(h, "S stats of held messages") {
		t.Fatalf("help with the whole queue shown = %q", h)
	}
	d.keys("S")
	if v := d.m.View(); !strings.Contains(v, "attempts (4 shown)") || strings.Contains(v, "Whole queue at") {
		t.Fatalf("S did not go back to the held messages:\n%s", v)
	}
}

func TestEscCancelsAScan(t *testing.T) {
	sc := newScanner(wholeStats(), nil)
	d := scanningDriver(t, sc)
	d.keys("S")
	d.until("the scan to run", func() bool { return isClosed(sc.started) })
	d.keys("esc")
	<-sc.cancelled
	if info := d.infoText(); !strings.Contains(info, "whole-queue scan of orders.dlq cancelled") {
		t.Fatalf("info = %q", info)
	}
	if d.m.scan.running || d.m.scan.show || d.m.HandlesEsc() {
		t.Fatalf("scan state after cancel = %+v", d.m.scan)
	}
}

func TestClosingTheScreenCancelsAScan(t *testing.T) {
	sc := newScanner(wholeStats(), nil)
	d := scanningDriver(t, sc)
	d.keys("S")
	d.until("the scan to run", func() bool { return isClosed(sc.started) })
	if cmd := d.m.Close(); cmd != nil {
		cmd()
	}
	select {
	case <-sc.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the screen left the scan running")
	}
}

func TestARefusedOrFailedScanSaysWhy(t *testing.T) {
	refused := newScanner(nil, &domain.RefusedError{Reason: "it is a quorum queue with delivery limit 5"})
	d := scanningDriver(t, refused)
	d.keys("S")
	close(refused.release)
	d.until("the refusal", func() bool { return !d.m.scan.running })
	if v := d.m.View(); !strings.Contains(v, "Whole-queue statistics refused: it is a quorum queue with delivery limit 5") {
		t.Fatalf("view does not say why:\n%s", v)
	}

	failed := newScanner(nil, errors.New("connection reset"))
	d = scanningDriver(t, failed)
	d.keys("S")
	close(failed.release)
	if e := d.errorText(); !strings.Contains(e, "scanning orders.dlq for statistics failed: connection reset; press S to retry") {
		t.Fatalf("error = %q", e)
	}
}

func TestWithoutAScannerSIsExplained(t *testing.T) {
	d, _ := browsingDriver(t, Options{}, nil)
	d.keys("S")
	if e := d.errorText(); !strings.Contains(e, "whole-queue statistics are not available") {
		t.Fatalf("error = %q", e)
	}
}

func TestStaleScanAnswersAreDropped(t *testing.T) {
	d := scanningDriver(t, newScanner(wholeStats(), nil))
	d.m.Update(scanMsg{id: d.m.scan.id + 1000, stats: wholeStats()})
	d.m.Update(scanProgressMsg{id: d.m.scan.id + 1000, read: 5})
	if d.m.scan.show || d.m.scan.read != 0 {
		t.Fatalf("a scan nobody waits for changed the screen: %+v", d.m.scan)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestTheWholeQueuePanelFitsTheScreen(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {100, 30}, {80, 24}, {80, 14}} {
		sc := newScanner(wholeStats(), nil)
		close(sc.release)
		d := scanningDriver(t, sc)
		d.m.SetSize(size[0], size[1])
		d.keys("S")
		d.until("the whole queue's figures", func() bool { return d.m.scan.show })
		lines := strings.Split(d.m.View(), "\n")
		if len(lines) > size[1] {
			t.Errorf("%dx%d: %d lines:\n%s", size[0], size[1], len(lines), d.m.View())
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%dx%d: line of width %d: %q", size[0], size[1], w, l)
			}
		}
	}
}

func TestNoScanWhileAPageLoads(t *testing.T) {
	sc := newScanner(wholeStats(), nil)
	d := scanningDriver(t, sc)
	d.m.loading = true
	d.keys("S")
	if e := d.errorText(); !strings.Contains(e, "a page of orders.dlq is loading") || d.m.scan.running {
		t.Fatalf("S while a page loads = %q (running %v)", e, d.m.scan.running)
	}
}

// The scan holds the queue's messages while it runs: a session reopened
// then would find the queue empty and say it reached the end.
func TestReopeningWaitsForAScan(t *testing.T) {
	sc := newScanner(wholeStats(), nil)
	d := scanningDriver(t, sc)
	d.keys("S")
	d.until("the scan to run", func() bool { return isClosed(sc.started) })
	sid := d.m.sid
	d.keys("R")
	if e := d.errorText(); !strings.Contains(e, "a whole-queue scan holds the messages of orders.dlq") {
		t.Fatalf("R during a scan: error = %q", e)
	}
	if d.m.sid != sid || d.m.state != browsing {
		t.Fatal("R reopened the session while the scan held the queue")
	}
	close(sc.release)
	d.until("the scan to end", func() bool { return !d.m.scan.running })
}

// Messages that became ready after the scan started (another client's
// given back, new dead letters) are not in its figures, and the screen
// says so: the whole queue is larger than they show.
func TestTheWholeQueueSaysWhatBecameReadyAfterTheScanStarted(t *testing.T) {
	st := wholeStats()
	st.Unread = 91850
	sc := newScanner(st, nil)
	close(sc.release)
	d := scanningDriver(t, sc)
	d.keys("S")
	d.until("the whole queue's figures", func() bool { return d.m.scan.show })
	if v := d.m.View(); !strings.Contains(v, "91850 ready since, not counted") {
		t.Errorf("view lacks what the scan did not count:\n%s", v)
	}
}

// The scan counts the messages this screen holds among those it could
// not read: only another client's are said to be held elsewhere.
func TestTheWholeQueueSaysWhatAnotherClientHolds(t *testing.T) {
	for _, tt := range []struct {
		held int
		want string
	}{
		{held: 4 + 29, want: "29 held by others, not counted"},
		{held: 4, want: ""}, // the screen's own four
	} {
		st := wholeStats()
		st.Held = tt.held
		sc := newScanner(st, nil)
		close(sc.release)
		d := scanningDriver(t, sc)
		if n := len(d.m.held.letters); n != 4 {
			t.Fatalf("the screen holds %d letters, want 4", n)
		}
		d.keys("S")
		d.until("the whole queue's figures", func() bool { return d.m.scan.show })
		v := d.m.View()
		if tt.want != "" && !strings.Contains(v, tt.want) {
			t.Errorf("held %d: view lacks %q:\n%s", tt.held, tt.want, v)
		}
		if tt.want == "" && strings.Contains(v, "held by others") {
			t.Errorf("held %d: the screen's own messages are said to be another client's:\n%s", tt.held, v)
		}
	}
}
