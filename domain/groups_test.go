package domain

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNormalizeMakesVariablePartsPlaceholders(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Order 1001 not found", "Order <n> not found"},
		{"Order 1002 not found.", "Order <n> not found."},
		{"customer 3f2a9c1e-0b7d-4c55-9a1e-2b3c4d5e6f70 is blocked", "customer <uuid> is blocked"},
		{"no account for alice@example.com", "no account for <email>"},
		{"no account for 'alice'", "no account for <str>"},
		{`key "orders/1001" exists`, "key <str> exists"},
		{"pointer 0x7ffe4a2b at offset 12", "pointer <hex> at offset <n>"},
		{"digest 9f86d081884c7d65 mismatch", "digest <hex> mismatch"},
		{"amount 12.50 exceeds 10,000", "amount <n> exceeds <n>"},
		{"order-77 failed   after\n3 tries", "order-<n> failed after <n> tries"},
		{"Timeout", "Timeout"},
		{"", ""},
		// Words that only look like hex stay words.
		{"deadbeef cafe", "deadbeef cafe"},
	}
	for _, c := range cases {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestOneGroupForMessagesThatDifferOnlyInTheirValues(t *testing.T) {
	a := Failure{Convention: ConventionMassTransit, Kind: KindException, OriginQueue: "orders",
		ErrorType: "OrderNotFound", ErrorMessage: "Order 1001 not found"}
	b := a
	b.ErrorMessage = "Order 1002 not found"
	c := a
	c.ErrorType = "TimeoutException"
	d := a
	d.OriginQueue = "billing"
	if GroupOf(a) != GroupOf(b) {
		t.Errorf("two orders not found are two groups: %s, %s", GroupOf(a), GroupOf(b))
	}
	if GroupOf(a) == GroupOf(c) || GroupOf(a) == GroupOf(d) {
		t.Error("another error type or origin shares the group")
	}
	// Stable across runs and machines: the ID is a digest of the
	// fingerprint, written down here once.
	if got := GroupOf(a); got != "bb92467b00" {
		t.Errorf("group ID %q, want bb92467b00 as on every earlier run", got)
	}
	if got, again := GroupOf(a), (Fingerprint{Convention: ConventionMassTransit, Origin: "orders", Type: "OrderNotFound", Message: "Order <n> not found"}).ID(); got != again {
		t.Errorf("group ID %s is not the fingerprint's %s", got, again)
	}
}

func TestGroupsCountSpanAndAttempts(t *testing.T) {
	g := NewGroups(true)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	for i, n := range []int{1, 3, 2} {
		f := Failure{Convention: ConventionSpring, Kind: KindException, OriginExchange: "billing-events", OriginRoutingKey: "billing",
			ErrorType: "com.example.PaymentDeclined", ErrorMessage: "card 4242 declined", FailedAt: t0.Add(time.Duration(i) * time.Minute)}
		g.Add(f, n, "id", "id")
	}
	g.Add(Failure{Convention: ConventionBroker, Kind: ReasonExpired, OriginQueue: "orders"}, 1, "x", "")
	list := g.List()
	if len(list) != 2 {
		t.Fatalf("%d groups, want 2: %+v", len(list), list)
	}
	top := list[0]
	if top.Count != 3 || top.MinAttempts != 1 || top.MaxAttempts != 3 || top.Origin != "billing-events/billing" ||
		!top.FirstFailed.Equal(t0) || !top.LastFailed.Equal(t0.Add(2*time.Minute)) || len(top.BusinessIDs) != 3 ||
		top.Message != "card <n> declined" || top.Example != "card 4242 declined" {
		t.Errorf("top group %+v", top)
	}
	if list[1].Type != ReasonExpired || len(list[1].BusinessIDs) != 0 {
		t.Errorf("a broker group is typed by its reason and a hash ID is no business ID: %+v", list[1])
	}
}

func TestGroupsStayBoundedWhateverTheMessagesSay(t *testing.T) {
	g := NewGroups(false)
	for i := 0; i < MaxStatKeys+50; i++ {
		g.Add(Failure{Convention: ConventionRascal, ErrorType: "E" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strconv.Itoa(i)}, 1, "", "")
	}
	list := g.List()
	if len(list) != MaxStatKeys+1 {
		t.Fatalf("%d groups, want %d and one for the rest", len(list), MaxStatKeys+1)
	}
	var other int
	for _, grp := range list {
		if grp.Convention == OtherKey {
			other = grp.Count
		}
	}
	if other != 50 {
		t.Errorf("the rest group counts %d, want 50", other)
	}
}
