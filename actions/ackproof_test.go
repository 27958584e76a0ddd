package actions

import (
	"errors"
	"testing"

	"github.com/warrenops/warren/domain"
)

// fakeHolder records settles; ackErr and syncErr make them fail.
type fakeHolder struct {
	ackErr, syncErr error
	acked, returned []uint64
	syncs           int
}

func (f *fakeHolder) Ack(tag uint64) error {
	if f.ackErr != nil {
		return f.ackErr
	}
	f.acked = append(f.acked, tag)
	return nil
}
func (f *fakeHolder) Return(tag uint64) error { f.returned = append(f.returned, tag); return nil }
func (f *fakeHolder) Sync() error             { f.syncs++; return f.syncErr }

func TestAConfirmedCopyWhoseSourceAckFailsIsUnknown(t *testing.T) {
	h := &fakeHolder{ackErr: errors.New("channel closed")}
	o := MessageOutcome{Outcome: Confirmed}
	err := settleSource(Env{Session: h}, Item{Letter: domain.DeadLetter{DeliveryTag: 7}}, &o)
	if err == nil || o.Outcome != Unknown || o.SourceAcked {
		t.Fatalf("outcome %s acked=%v err=%v; want unknown, not acked, an error", o.Outcome, o.SourceAcked, err)
	}
}

func TestAcksAreProvenInBatchesAndUnprovenOnesAreUnknown(t *testing.T) {
	cases := []struct {
		name        string
		acks        int
		syncErr     error
		wantSyncs   int
		wantUnknown int
	}{
		{"a full batch is proven at once", syncEvery, nil, 1, 0},
		{"a partial batch waits for the final proof", syncEvery - 1, nil, 0, 0},
		{"a failed proof makes the whole batch unknown", syncEvery, errors.New("channel closed"), 1, syncEvery},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &fakeHolder{syncErr: c.syncErr}
			outcomes := make([]MessageOutcome, c.acks)
			p := &ackProof{env: Env{Session: h}, outcomes: outcomes}
			var err error
			for i := range outcomes {
				outcomes[i] = MessageOutcome{Item: i, Outcome: Confirmed, SourceAcked: true}
				if e := p.add(i); e != nil {
					err = e
				}
			}
			if (err != nil) != (c.syncErr != nil) || h.syncs != c.wantSyncs {
				t.Fatalf("err=%v syncs=%d; want error %v and %d syncs", err, h.syncs, c.syncErr != nil, c.wantSyncs)
			}
			unknown := 0
			for _, o := range outcomes {
				if o.Outcome == Unknown {
					unknown++
					if o.SourceAcked {
						t.Fatal("an unproven ack is still marked acked")
					}
				}
			}
			if unknown != c.wantUnknown {
				t.Fatalf("%d unknown, want %d", unknown, c.wantUnknown)
			}
			if err := p.prove(); err != nil && c.syncErr == nil {
				t.Fatalf("final proof: %v", err)
			}
		})
	}
}

func TestProvenBatchesAreReportedAndAReportFailureStops(t *testing.T) {
	h := &fakeHolder{}
	outcomes := make([]MessageOutcome, syncEvery+3)
	var reported [][]int
	refuse := false
	p := &ackProof{env: Env{Session: h}, outcomes: outcomes, proven: func(batch []int) error {
		if refuse {
			return ErrAuditUnavailable
		}
		reported = append(reported, batch)
		return nil
	}}
	for i := range outcomes {
		outcomes[i] = MessageOutcome{Item: i, Outcome: Confirmed, SourceAcked: true}
		if err := p.add(i); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	if len(reported) != 1 || len(reported[0]) != syncEvery || reported[0][0] != 0 {
		t.Fatalf("reported %d batches, want the first full one at once", len(reported))
	}
	refuse = true
	if err := p.prove(); !errors.Is(err, ErrAuditUnavailable) {
		t.Fatalf("final proof with the store refusing: %v, want ErrAuditUnavailable", err)
	}
	if stopCause(ErrAuditUnavailable) != ErrAuditUnavailable || !errors.Is(stopCause(errors.New("closed")), ErrSessionLost) {
		t.Fatal("stopCause does not keep an audit failure apart from a lost session")
	}
}
