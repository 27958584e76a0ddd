package dlq

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// warren's marks change how it treats a message: a quarantined one stays
// out of bulk replays, a replayed one counts as a loop. A publisher can
// write them too; they are believed only for an operation the audit log
// knows.
func TestWarrensMarksAreBelievedOnlyForAKnownOperation(t *testing.T) {
	known := func(id string) bool { return id == "20261204T031502Z-9f86d081" }
	marked := func(op string) amqp.Delivery {
		h := amqp.Table{"x-warren-quarantine-reason": "poison", "x-warren-replay-count": int32(3),
			"x-death": []any{deathEntry("orders", "rejected", 1, t0)}}
		if op != "" {
			h["x-warren-operation"] = op
		}
		return amqp.Delivery{MessageId: "m", Headers: h}
	}
	o := Options{KnownOperation: known}
	ours := Decode(marked("20261204T031502Z-9f86d081"), o, false)
	if !ours.Quarantined || ours.ReplayCount != 3 || ours.MarksClaimed || ours.Attempts != 4 {
		t.Errorf("marks of a known operation: quarantined %v, replays %d, claimed %v, attempts %d", ours.Quarantined, ours.ReplayCount, ours.MarksClaimed, ours.Attempts)
	}
	for _, op := range []string{"", "20991231T000000Z-forged00"} {
		d := Decode(marked(op), o, false)
		if d.Quarantined || d.ReplayCount != 0 || !d.MarksClaimed || d.ClaimedReplays != 3 || d.Attempts != 1 {
			t.Errorf("marks naming %q: quarantined %v, replays %d, claimed %v (%d), attempts %d", op, d.Quarantined, d.ReplayCount, d.MarksClaimed, d.ClaimedReplays, d.Attempts)
		}
	}
	if d := Decode(marked(""), Options{}, false); !d.Quarantined || d.MarksClaimed {
		t.Error("without an audit log to ask, the marks are read as before")
	}
	plain := Decode(amqp.Delivery{MessageId: "p"}, o, false)
	if plain.MarksClaimed {
		t.Error("a message without marks claims none")
	}
}
