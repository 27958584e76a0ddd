package domain

import (
	"testing"
)

func TestTopicMatch(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"orders.*", "orders.created", true},
		{"orders.*", "orders.created.eu", false},
		{"orders.#", "orders", true},
		{"orders.#", "orders.created.eu", true},
		{"#", "anything.at.all", true},
		{"*.created", "orders.created", true},
		{"*.created", "created", false},
		{"#.eu", "orders.created.eu", true},
		{"#.#.#.#.#.#.#.#.x", "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.y", false},
		{"orders.created", "orders.created", true},
		{"orders.created", "orders.deleted", false},
	}
	for _, tt := range tests {
		if got := TopicMatch(tt.pattern, tt.key); got != tt.want {
			t.Errorf("TopicMatch(%q, %q) = %v, want %v", tt.pattern, tt.key, got, tt.want)
		}
	}
}

// queue builds a queue whose dead-lettering is resolved from args.
func queue(vhost, name, typ string, args map[string]any) Queue {
	q := Queue{Vhost: vhost, Name: name, Type: typ, Arguments: args}
	q.ResolveDeadLettering()
	return q
}
