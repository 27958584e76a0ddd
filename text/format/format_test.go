package format

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/domain/trouble"
)

var now = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func check(t *testing.T, tests []struct{ name, got, want string }) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestFiguresFitTheirColumns(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"small count is exact", Count(12000), "12000"},
		{"large count is compact", Count(12_345_678), "12.3M"},
		{"huge count is compact", Count(3_400_000_000), "3.4G"},
		{"zero rate", Rate(0), "0"},
		{"slow rate keeps a decimal", Rate(0.25), "0.2"},
		{"rate", Rate(80), "80"},
		{"fast rate", Rate(12500), "12.5k"},
		{"very fast rate", Rate(2.5e6), "2.5M"},
		{"rate in a sentence has its unit", PerSecond(12.34), "12/s"},
	})
}

func TestDurationsKeepTheirTwoLargestUnits(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"seconds", Duration(45 * time.Second), "45s"},
		{"whole minutes", Duration(10 * time.Minute), "10m"},
		{"minutes and seconds", Duration(10*time.Minute + 5*time.Second), "10m05s"},
		{"hours", Duration(65 * time.Minute), "1h05m"},
		{"hours and minutes", Duration(21*time.Hour + 4*time.Minute + 30*time.Second), "21h04m"},
		{"minutes keep their seconds", Duration(4*time.Minute + 5*time.Second), "4m05s"},
		{"days keep their hours under ten days", Duration(76 * time.Hour), "3d04h"},
		{"just under ten days", Duration(10*24*time.Hour - time.Hour), "9d23h"},
		{"ten days and more are whole days", Duration(10 * 24 * time.Hour), "10d"},
		{"a year is whole days, never cut", Duration(335*24*time.Hour + 21*time.Hour), "335d"},
		{"negative is zero", Duration(-time.Second), "0s"},
		{"rounds to the second", Duration(1500 * time.Millisecond), "2s"},
		{"a period under a second keeps its milliseconds", Period(250 * time.Millisecond), "250ms"},
		{"a longer period is a duration", Period(90 * time.Second), "1m30s"},
		{"work done keeps its milliseconds", Elapsed(1234567 * time.Microsecond), "1.235s"},
	})
}

// A column sized by DurationWidth for the longest span shown never cuts
// the words for a shorter one.
func TestDurationWidthFitsEveryShorterSpan(t *testing.T) {
	day := 24 * time.Hour
	spans := []time.Duration{0, 9 * time.Second, 59*time.Minute + 59*time.Second, 23*time.Hour + 59*time.Minute,
		10*day - time.Hour, 10 * day, 335*day + 21*time.Hour, 99_999 * day, 100_000 * day, time.Duration(math.MaxInt64)}
	for i, longest := range spans {
		w := DurationWidth(longest)
		for _, d := range spans[:i+1] {
			if got := len(Duration(d)); got > w {
				t.Errorf("DurationWidth(%v) = %d, but %v is worded %q (%d cells)", longest, w, d, Duration(d), got)
			}
		}
	}
	if got := DurationWidth(335*day + 21*time.Hour); got != 6 {
		t.Errorf("a 335-day age needs a column of %d cells, want the usual 6", got)
	}
	// A head message timestamp of year 1 makes an age as long as a
	// time.Duration gets.
	if got := DurationWidth(time.Duration(math.MaxInt64)); got != len("106751d") {
		t.Errorf("the longest span needs %d cells, want %d", got, len("106751d"))
	}
}

func TestAgesAreDurationsBeforeNow(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"age", Age(now, now.Add(-5*time.Hour-7*time.Minute)), "5h07m"},
		{"unknown time has no age", Age(now, time.Time{}), Unknown},
		{"a time ahead of the clock is 0s old", Age(now, now.Add(time.Minute)), "0s"},
		{"ago", Ago(5*time.Hour + 7*time.Minute), "5h07m ago"},
		{"time is UTC RFC 3339", Time(now.In(time.FixedZone("CEST", 7200))), "2024-05-01T12:00:00Z"},
		{"zero time is unknown", Time(time.Time{}), Unknown},
	})
}

func TestSizesUseBinaryMultiples(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"bytes", Bytes(512), "512 B"},
		{"kibibytes", Bytes(1536), "1.5 KiB"},
		{"mebibytes", Bytes(3 << 20), "3.0 MiB"},
		{"gibibytes", Bytes(5 << 30), "5.0 GiB"},
	})
}

func TestCountsInSentences(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"one", Messages(1), "1 message"},
		{"none", Messages(0), "0 messages"},
		{"many", Messages(37), "37 messages"},
		{"one thing", Plural(1, "dead letter"), "1 dead letter"},
		{"no things", Plural(int64(0), "dead letter"), "0 dead letters"},
		{"many things", Plural(int64(1200000), "dead letter"), "1200000 dead letters"},
		{"default vhost is left out", QueueName("/", "orders"), "orders"},
		{"other vhost is named", QueueName("eu", "orders"), "orders (vhost eu)"},
		{"names are sanitised", QueueName("/", "ord\x1b[31mers"), `ord\x1b[31mers`},
	})
}

func TestEveryMovementHasWords(t *testing.T) {
	tests := []struct {
		name       string
		d          domain.Drain
		cell, note string
	}{
		{"no rates", domain.Drain{Movement: domain.NoRates}, Unknown, "drain unknown: rates not fetched yet"},
		{"empty", domain.Drain{Movement: domain.Empty}, "empty", "empty"},
		{"draining", domain.Drain{Movement: domain.Draining, ETA: 32 * time.Second}, "ETA 32s", "drains in 32s"},
		{"growing", domain.Drain{Movement: domain.Growing, Growth: 12.34}, "growing +12/s", "not draining: growing +12/s"},
		{"held", domain.Drain{Movement: domain.Held}, "held", "held: no consumers (a DLQ or parking queue keeps its messages until someone acts)"},
		{"retry wait", domain.Drain{Movement: domain.RetryWait}, "retry wait", "held until the messages' TTL sends them back (retry queue)"},
		{"no consumers", domain.Drain{Movement: domain.NoConsumers}, "no consumers", "not draining: no consumers"},
		{"stalled", domain.Drain{Movement: domain.Stalled}, "stalled", "not draining: consumers are not acknowledging"},
		{"steady", domain.Drain{Movement: domain.Steady}, "steady", "not draining: in = out, the backlog stays"},
		{"delayed", domain.Drain{Movement: domain.Delayed}, "delayed", "not ready yet: every message waits out its delayed retry"},
		{"DLX backlog", domain.Drain{Movement: domain.DLXBacklog}, "DLX backlog", "nothing to consume: every message is a dead letter held for the DLX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Drain(tt.d); got != tt.cell {
				t.Errorf("Drain = %q, want %q", got, tt.cell)
			}
			if got := DrainNote(tt.d); got != tt.note {
				t.Errorf("DrainNote = %q, want %q", got, tt.note)
			}
		})
	}
}

func TestRetryNoteSaysWhereAndWhen(t *testing.T) {
	target := &domain.QueueRef{Vhost: "/", Name: "orders"}
	check(t, []struct{ name, got, want string }{
		{"not a retry queue", RetryNote(domain.Queue{Name: "orders"}), ""},
		{"without a TTL", RetryNote(domain.Queue{Name: "orders.retry", RetryTarget: target}), "retry queue: expired messages go back to orders"},
		{"with a TTL", RetryNote(domain.Queue{Name: "orders.retry", RetryTarget: target,
			Arguments: map[string]any{"x-message-ttl": 250}}), "retry queue: expired messages go back to orders after 250ms"},
	})
}

func TestEffectSaysThePaceAndTheLast(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"with a last effect", Effect(domain.Effect{Window: time.Minute, Rate: 2, Now: now, Last: now.Add(-3 * time.Second)}),
			"2.0 effects/s over the last 1m, last 3s ago"},
		{"none", Effect(domain.Effect{Window: time.Minute, Now: now}), "0 effects/s over the last 1m, none ever recorded"},
	})
}

func TestLogicalIDSaysWhenItIsAHash(t *testing.T) {
	hash := domain.DeadLetter{LogicalID: "sha256:0123456789abcdef", LogicalIDFrom: domain.IDHash}
	header := domain.DeadLetter{LogicalID: "ord-1", LogicalIDFrom: domain.IDHeader}
	check(t, []struct{ name, got, want string }{
		{"a hash is marked in a list", LogicalID(hash), "#sha256:0123456789abcdef"},
		{"a configured ID is plain in a list", LogicalID(header), "ord-1"},
		{"a hash says so in full", LogicalIDSource(hash), "sha256:0123456789abcdef (content hash: no configured ID found)"},
		{"a configured ID names its source", LogicalIDSource(header), "ord-1 (from header)"},
		{"no source known", LogicalIDSource(domain.DeadLetter{LogicalID: "x"}), "x"},
	})
	for _, tt := range []struct {
		name string
		l    domain.DeadLetter
		s    string
		want bool
	}{
		{"as typed", hash, "sha256:0123456789abcdef", true},
		{"as listed", hash, "#sha256:0123456789abcdef", true},
		{"a configured ID is not marked", header, "#ord-1", false},
		{"another ID", header, "ord-2", false},
		{"an ID with control characters, as shown", domain.DeadLetter{LogicalID: "\x1b[2Jev-x"}, `\x1b[2Jev-x`, true},
		{"an ID with control characters, as it is", domain.DeadLetter{LogicalID: "\x1b[2Jev-x"}, "\x1b[2Jev-x", true},
		{"a plain ID is not matched by its escaped look-alike", domain.DeadLetter{LogicalID: `\x41`}, "A", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := MatchesLogicalID(tt.l, tt.s); got != tt.want {
				t.Fatalf("MatchesLogicalID(%q) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestDelayedRetryAndTheFiguresOf43(t *testing.T) {
	one, three, zero, bytes := int64(1), int64(3), int64(0), int64(2048)
	check(t, []struct{ name, got, want string }{
		{"the broker's words", DelayedRetry(domain.DelayedRetry{Broker: "all (min: 2000ms, max: 10000ms)", Type: "all", Min: 2000, Max: 10000}), "all (min: 2000ms, max: 10000ms)"},
		{"from a policy", DelayedRetry(domain.DelayedRetry{Type: "failed", Min: 500, Max: 90000}), "failed (min: 500ms, max: 1m30s)"},
		{"type only", DelayedRetry(domain.DelayedRetry{Type: "returned", Min: -1, Max: -1}), "returned"},
		{"nothing said", DelayedRetry(domain.DelayedRetry{Min: -1, Max: -1}), ""},
		{"hostile words", DelayedRetry(domain.DelayedRetry{Broker: "all\x1b[2J"}), "all\\x1b[2J"},
		{"delayed messages", DelayedNote(domain.Queue{Delayed: &three, DelayedRetry: "all (min: 2000ms, max: 10000ms)"}),
			"3 delayed (delayed retry all (min: 2000ms, max: 10000ms)), ready again after the delay"},
		{"none delayed", DelayedNote(domain.Queue{Delayed: &zero}), ""},
		{"delayed unknown", DelayedNote(domain.Queue{}), ""},
		{"DLX held with bytes", DLXHeldNote(domain.Queue{DLXHeld: &three, DLXHeldBytes: &bytes}), "3 dead letters held for the DLX (2.0 KiB)"},
		{"DLX held without bytes", DLXHeldNote(domain.Queue{DLXHeld: &three}), "3 dead letters held for the DLX"},
		{"DLX held unknown", DLXHeldNote(domain.Queue{}), ""},
		{"one DLX held", DLXHeldNote(domain.Queue{DLXHeld: &one}), "1 dead letter held for the DLX"},
		{"DLX mark", Mark(trouble.Mark{Kind: trouble.DLXGrowing, Added: 4}, "", time.Minute),
			"DLX backlog growing (+4 in the last 1m)"},
	})
}

func TestClaimedMarksSayWhoseTheyAre(t *testing.T) {
	l := domain.DeadLetter{MarksClaimed: true, ClaimedReplays: 3, Headers: map[string]any{domain.HeaderQuarantineReason: "x"}}
	if got := ClaimedMarks(l); got != "quarantined, replayed 3× claimed by the message: no operation of the audit log wrote it" {
		t.Errorf("%q", got)
	}
	if ClaimedMarks(domain.DeadLetter{}) != "" {
		t.Error("a message without claims")
	}
}

// One dead letter is one, in every sentence the trouble marks and the
// check print.
func TestAssessCountsOneAsOne(t *testing.T) {
	for _, tc := range []struct {
		q    domain.Queue
		want string
	}{
		{domain.Queue{Name: "orders", DLQ: &domain.QueueRef{Name: "orders.dlq"}, DLQMessages: 1}, "1 dead letter in orders.dlq"},
		{domain.Queue{Name: "orders.dlq", ErrorQueue: true, Messages: 1}, "holds 1 dead letter"},
		{domain.Queue{Name: "orders.parked", Parking: true, Messages: 1}, "parking queue: 1 quarantined message, out of replays"},
		{domain.Queue{Name: "orders.dlq", ErrorQueue: true, Messages: 2}, "holds 2 dead letters"},
	} {
		_, reasons := Assess(tc.q, nil, time.Minute, "")
		if got := strings.Join(reasons, "; "); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want it to start %q", tc.q.Name, got, tc.want)
		}
	}
}

// What a walk read and did not move is still in the queue, whatever
// kept it there: the plan, a return, a stop.
func TestOutcomeCountsWhatIsStillInTheQueue(t *testing.T) {
	c := domain.Counts{Operation: "op-1", Selected: 1, Confirmed: 0, Returned: 1, NotSent: 2, Taken: 3, Moved: 0}
	want := "replay op-1: 1 selected, 0 skipped as applied, 0 confirmed, 1 returned, 0 nacked, 0 unknown, 2 not sent (still in the DLQ); 3 read, 0 moved, 3 of them still in orders.dlq"
	if got := Outcome("replay", "orders.dlq", c); got != want {
		t.Errorf("Outcome =\n %q\nwant\n %q", got, want)
	}
	c = domain.Counts{Operation: "op-2", Selected: 5, Confirmed: 5, Taken: 12, Moved: 5, Deduplicated: 4}
	if got := Outcome("resume", "orders.dlq", c); !strings.HasSuffix(got, "; 12 read, 5 moved, 3 of them still in orders.dlq") {
		t.Errorf("Outcome of a resume = %q: want the twins it removed out of what is still there", got)
	}
}
