package mgmt

import (
	"testing"

	"github.com/warrenops/warren/domain"
)

func TestErrorQueuesPairByDeadLetteringThenNamingThenMessages(t *testing.T) {
	topo := domain.Topology{Exchanges: map[domain.ExchangeRef]string{{Vhost: "v", Name: "dlx"}: "fanout"},
		Bindings: map[domain.ExchangeRef][]domain.Binding{{Vhost: "v", Name: "dlx"}: {{Source: "dlx", Destination: "pay.dead"}}}}
	qs := []domain.Queue{
		{Vhost: "v", Name: "orders"}, {Vhost: "v", Name: "orders_error", Messages: 6}, {Vhost: "v", Name: "orders_skipped"},
		{Vhost: "v", Name: "billing"}, {Vhost: "v", Name: "billing.dlq", Messages: 5},
		{Vhost: "v", Name: "Sales"}, {Vhost: "v", Name: "error", Messages: 2},
		queue("v", "pay", "classic", dlx("dlx", "")), {Vhost: "v", Name: "pay.dead"}, {Vhost: "v", Name: "pay_error"},
		{Vhost: "v", Name: "EasyNetQ_Default_Error_Queue"},
	}
	learned := []domain.DLQOverride{
		{Vhost: "v", Queue: "Sales", DLQ: "error"},
		{Vhost: "v", Queue: "orders", DLQ: "error"}, // naming pairs orders first
		{Vhost: "v", Queue: "pay", DLQ: "error"},    // dead-lettering pairs pay first
		{Vhost: "v", Queue: "gone", DLQ: "error"},
	}
	pairDLQs(qs, &topo, nil, learned...)
	by := map[string]*domain.Queue{}
	for i := range qs {
		by[qs[i].Name] = &qs[i]
	}
	for _, c := range []struct{ queue, dlq, source string }{
		{"orders", "orders_error", domain.PairedByNaming},
		{"billing", "billing.dlq", domain.PairedByNaming},
		{"Sales", "error", domain.PairedByLetter},
		{"pay", "pay.dead", domain.PairedByDLX},
	} {
		q := by[c.queue]
		if q.DLQ == nil || q.DLQ.Name != c.dlq || q.DLQSource != c.source {
			t.Errorf("%s pairs with %v by %q, want %s by %s", c.queue, q.DLQ, q.DLQSource, c.dlq, c.source)
		}
	}
	if by["orders"].DLQMessages != 6 || by["orders_error"].PairedBy != domain.PairedByNaming {
		t.Errorf("orders shows %d dead letters; orders_error paired by %q", by["orders"].DLQMessages, by["orders_error"].PairedBy)
	}
	if s := by["orders_skipped"]; !s.IsDLQ() || len(s.DLQOf) != 1 || s.DLQOf[0].Name != "orders" {
		t.Errorf("orders_skipped serves %v", s.DLQOf)
	}
	for _, name := range []string{"orders_error", "billing.dlq", "error", "EasyNetQ_Default_Error_Queue", "pay_error"} {
		if !by[name].IsDLQ() || !by[name].ErrorQueue {
			t.Errorf("%s is not judged as an error queue", name)
		}
	}
	if by["EasyNetQ_Default_Error_Queue"].DLQOf != nil {
		t.Error("a shared error queue serves no queue before its messages say which")
	}
	for _, name := range []string{"orders", "billing", "Sales", "pay"} {
		if by[name].IsDLQ() {
			t.Errorf("%s is judged as a DLQ", name)
		}
	}
}

func TestErrorQueueOfNamesTheQueueItServes(t *testing.T) {
	for in, want := range map[string]string{"orders_error": "orders", "orders_skipped": "orders", "billing.dlq": "billing", "_error": "", "orders": ""} {
		got, ok := ErrorQueueOf(in)
		if got != want || ok != (want != "") {
			t.Errorf("ErrorQueueOf(%q) = %q, %v", in, got, ok)
		}
	}
}

// A snapshot of a few rows reads no pairing: the rows keep the pairing
// their last full list gave, an error queue's included, or it would be
// judged as a queue with no consumers until the next list.
func TestARowReadAloneKeepsItsPairing(t *testing.T) {
	ref := &domain.QueueRef{Vhost: "v", Name: "orders"}
	old := domain.Queue{Name: "orders_error", DLQ: ref, DLQSource: domain.PairedByNaming, DLQOf: []domain.QueueRef{*ref}, PairedBy: domain.PairedByNaming,
		RetryTarget: ref, DLQMessages: 4, Parking: true, ErrorQueue: true}
	fresh := domain.Queue{Name: "orders_error", Messages: 9}
	fresh.KeepPairing(old)
	if fresh.DLQ != ref || fresh.DLQSource != domain.PairedByNaming || len(fresh.DLQOf) != 1 || fresh.PairedBy != domain.PairedByNaming ||
		fresh.RetryTarget != ref || fresh.DLQMessages != 4 || !fresh.Parking || !fresh.ErrorQueue || fresh.Messages != 9 {
		t.Errorf("kept %+v", fresh)
	}
	if !fresh.IsDLQ() {
		t.Error("the error queue read alone is no longer judged as a DLQ")
	}
}
