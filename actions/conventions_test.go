package actions

import (
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
)

// frameworkLetter is a letter a framework wrote into its error queue,
// naming its origin in headers a publisher controls.
func frameworkLetter(id string, f domain.Failure) domain.DeadLetter {
	f.Kind = domain.KindException
	return domain.DeadLetter{MessageID: id, LogicalID: id, LogicalIDFrom: domain.IDMessageID, Failure: f, Group: domain.GroupOf(f),
		OriginQueue: f.OriginQueue, OriginExchange: f.OriginExchange, Body: []byte("{}")}
}

func TestAFrameworkOriginIsUsedOnlyWhereThePairingConfirmsIt(t *testing.T) {
	mt := frameworkLetter("m-1", domain.Failure{Convention: domain.ConventionMassTransit, OriginQueue: "orders"})
	forged := frameworkLetter("m-2", domain.Failure{Convention: domain.ConventionMassTransit, OriginQueue: "victim"})
	spring := frameworkLetter("s-1", domain.Failure{Convention: domain.ConventionSpring, OriginExchange: "billing-events", OriginRoutingKey: "billing"})
	springElsewhere := frameworkLetter("s-2", domain.Failure{Convention: domain.ConventionSpring, OriginExchange: "billing-events", OriginRoutingKey: "payroll"})
	springDefault := frameworkLetter("s-3", domain.Failure{Convention: domain.ConventionSpring, OriginExchange: "", OriginRoutingKey: "orders"})
	nowhere := frameworkLetter("w-1", domain.Failure{Convention: domain.ConventionWatermill})
	var asked []string
	req := Request{Action: ActionReplay, Vhost: "/", Queue: "orders_error", Now: time.Now(),
		Letters: []domain.DeadLetter{mt, forged, spring, springElsewhere, springDefault, nowhere},
		Origins: Origins{Queues: map[string]bool{"orders": true, "billing": true}, Route: func(x, key string) bool {
			asked = append(asked, x+"/"+key)
			return x == "billing-events" && key == "billing"
		}},
	}
	p, err := NewPlan(req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range p.Items {
		got[it.Letter.MessageID] = it.Dest.Target()
	}
	want := map[string]string{"m-1": "queue:orders", "s-1": "exchange:billing-events/billing", "s-3": "queue:orders"}
	if len(got) != len(want) {
		t.Fatalf("moving %v, want %v", got, want)
	}
	for id, dest := range want {
		if got[id] != dest {
			t.Errorf("%s goes to %q, want %q", id, got[id], dest)
		}
	}
	if p.Unconfirmed != 2 || p.NoDestination != 1 {
		t.Errorf("unconfirmed %d, no destination %d; want 2 and 1", p.Unconfirmed, p.NoDestination)
	}
	if s := p.Summary(); !strings.Contains(s, "2 stay: destination not confirmed") {
		t.Errorf("the prompt does not say what stays: %s", s)
	}
	if strings.Join(asked, ",") != "billing-events/billing,billing-events/payroll" {
		t.Errorf("routes asked %v", asked)
	}

	// --to names the destination for every letter, confirmed or not.
	req.To = &Override{Exchange: "", RoutingKey: "orders"}
	p, _ = NewPlan(req)
	if p.Selected() != 6 || p.Unconfirmed != 0 {
		t.Errorf("with --to: %d moving, %d unconfirmed", p.Selected(), p.Unconfirmed)
	}
	// Nothing confirms without a pairing: the zero Origins.
	req.To, req.Origins = nil, Origins{}
	p, _ = NewPlan(req)
	if p.Selected() != 0 || p.Unconfirmed != 5 {
		t.Errorf("without a pairing: %d moving, %d unconfirmed", p.Selected(), p.Unconfirmed)
	}
}

func TestAnEasyNetQLetterParksAsItsEnvelopeAndReplaysAsItsMessage(t *testing.T) {
	d := frameworkLetter("e-1", domain.Failure{Convention: domain.ConventionEasyNetQ, OriginQueue: "billing"})
	d.Body, d.Properties = []byte(`{"OrderId":1}`), domain.Properties{ContentType: "application/json", MessageID: "e-1"}
	d.Raw = &domain.Enveloped{Body: []byte(`{"Exception":"boom","Message":"{\"OrderId\":1}"}`), Properties: domain.Properties{Type: "EasyNetQ.SystemMessages.Error, EasyNetQ"}}
	replay := makeCopy(d, stamp{action: ActionReplay, operation: "op", at: time.Now()})
	if string(replay.msg.Body) != `{"OrderId":1}` || replay.msg.ContentType != "application/json" || replay.msg.MessageId != "e-1" {
		t.Errorf("replayed %q (%s)", replay.msg.Body, replay.msg.ContentType)
	}
	park := makeCopy(d, stamp{action: ActionQuarantine, operation: "op", at: time.Now(), reason: "poison"})
	if !strings.Contains(string(park.msg.Body), "Exception") || park.msg.Type != "EasyNetQ.SystemMessages.Error, EasyNetQ" {
		t.Errorf("parked %q (%s): not the envelope", park.msg.Body, park.msg.Type)
	}
}

// An envelope's original message is what is replayed, with its own
// headers: the deaths it records as carried are those of the x-death that
// original held, not the envelope's, so a broker that goes on counting on
// a published x-death is not taken for new failures.
func TestAnEnvelopedCopyRecordsTheDeathsItsOriginalCarries(t *testing.T) {
	death := func(queue string, n int64) amqp.Table {
		return amqp.Table{"queue": queue, "reason": "rejected", "count": n, "exchange": ""}
	}
	tests := []struct {
		name    string
		headers amqp.Table
		want    amqp.Table
	}{
		{name: "an original never dead-lettered", headers: amqp.Table{"tenant": "eu"}, want: amqp.Table{}},
		{name: "an original the broker dead-lettered twice before", headers: amqp.Table{"x-death": []any{death("billing", 2), death("billing.retry", 2)}},
			want: amqp.Table{"billing": int64(2), "billing.retry": int64(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := frameworkLetter("e-1", domain.Failure{Convention: domain.ConventionEasyNetQ, OriginQueue: "billing"})
			d.Headers = tt.headers
			// The envelope's own x-death: the error queue's, not the original's.
			d.Deaths = []domain.Death{{Queue: "billing_error", Reason: "expired", Count: 5}}
			d.Raw = &domain.Enveloped{Body: []byte(`{"Exception":"boom"}`), Headers: amqp.Table{"x-death": []any{death("billing_error", 5)}}}
			got := makeCopy(d, stamp{action: ActionReplay, operation: "op", at: time.Now()}).msg.Headers[domain.HeaderReplayDeaths]
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("carried deaths %v, want %v", got, tt.want)
			}
		})
	}
}

func TestACopyCarriesNoRoutingHeaders(t *testing.T) {
	d := frameworkLetter("r-1", domain.Failure{Convention: domain.ConventionRascal, OriginQueue: "orders"})
	d.Headers = map[string]any{"CC": []any{"orders.orders"}, "BCC": []any{"audit"}, "rascal": map[string]any{"originalQueue": "orders"}}
	c := makeCopy(d, stamp{action: ActionReplay, operation: "op", at: time.Now()})
	if _, ok := c.msg.Headers["CC"]; ok {
		t.Error("the copy keeps CC: the broker would route it to orders.orders too")
	}
	if _, ok := c.msg.Headers["BCC"]; ok {
		t.Error("the copy keeps BCC")
	}
	if c.msg.Headers["rascal"] == nil {
		t.Error("the framework's own headers must stay on the copy")
	}
}
