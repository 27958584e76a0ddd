package dlq

import (
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

func TestTheFilterSelectsByFailureGroupAndError(t *testing.T) {
	a := Decode(massTransitFault("m-1", "Order 1001 not found"), Options{}, false)
	b := Decode(massTransitFault("m-2", "Order 1002 not found"), Options{}, false)
	c := Decode(springRepublished("s-1", "Card 4242 declined"), Options{}, false)
	f, err := domain.CompileFilter(`group == "` + a.Group + `"`)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		d    domain.DeadLetter
		want bool
	}{{a, true}, {b, true}, {c, false}} {
		if got, err := f.Match(x.d, nil, time.Now()); err != nil || got != x.want {
			t.Errorf("group filter on %s: %v, %v; want %v", x.d.MessageID, got, err, x.want)
		}
	}
	g, err := domain.CompileFilter(`convention == "spring" && error_type endsWith "PaymentDeclinedException" && origin_routing_key == "billing"`)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := g.Match(c, nil, time.Now()); !ok {
		t.Error("the Spring letter is not selected by its convention, type and routing key")
	}
}
