//go:build integration

package audit

import (
	"context"
	"testing"
)

func TestPostgresCheckpointsAreSignedAndChecked(t *testing.T) {
	ctx := context.Background()
	table, admin := pgTable(t)
	s := openPG(t, table)
	k, line := newKey(t, "ana")
	var recs []Record
	for i := 1; i <= 6; i++ {
		r, err := s.Append(ctx, sample(i))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	cp, err := AppendCheckpoint(ctx, s, k, checkpointOp)
	if err != nil {
		t.Fatal(err)
	}
	recs = append(recs, cp)
	res, err := VerifyWith(ctx, s, VerifyOptions{Signers: allowed(t, line)})
	if err != nil || !res.OK || res.Checkpoints.Signed != 1 || res.Checkpoints.Unsigned != 0 {
		t.Fatalf("Verify = %+v %v", res, err)
	}
	replaceRows(t, admin, table, rehashFrom(recs, 1))
	res, err = VerifyWith(ctx, s, VerifyOptions{Signers: allowed(t, line)})
	if err != nil || res.OK || res.BrokenSeq != 7 {
		t.Fatalf("Verify of a rehashed table = %q %v, want broken at the checkpoint, seq 7", res.String(), err)
	}
}

func TestPostgresVerifyWithTheKeptHeadDetectsWhatIsMissing(t *testing.T) {
	for _, tc := range headCases() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			table, admin := pgTable(t)
			s := openPG(t, table)
			var recs []Record
			for i := 1; i <= headChain; i++ {
				r, err := s.Append(ctx, sample(i))
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
			if tc.tamper != nil {
				replaceRows(t, admin, table, tc.tamper(recs))
			}
			checkHeadCase(t, s, tc, HeadOf(recs[tc.expectSeq-1]))
		})
	}
}
