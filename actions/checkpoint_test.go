//go:build integration

package actions

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// With a signing key, an operation ends with a checkpoint after its
// final record, and the head it reports is the checkpoint's.
func TestAnOperationWithASigningKeyEndsWithACheckpoint(t *testing.T) {
	s := newScene(t, 3, plain)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := audit.NewSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	sess, letters := s.browse(t, s.conn, s.dlq)
	env := s.env(sess)
	env.Checkpoint = key
	res, err := Execute(testCtx(t), s.plan(t, Request{Letters: letters}), env, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := s.records(t)
	final, cp := recs[len(recs)-2], recs[len(recs)-1]
	if final.Outcome != domain.OutcomeFinal || !audit.IsCheckpoint(cp) || cp.Detail["operation"] != res.Operation {
		t.Fatalf("the log ends with %s then %s/%s, want the final record then its checkpoint", final.Outcome, cp.Action, cp.Outcome)
	}
	if res.Head == nil || *res.Head != audit.HeadOf(cp) {
		t.Fatalf("result's head %v, want the checkpoint's, %v", res.Head, audit.HeadOf(cp))
	}
	signers, err := audit.ParseAllowedSigners(strings.NewReader("ana "+key.AuthorizedKey()), "allowed_signers")
	if err != nil {
		t.Fatal(err)
	}
	v, err := audit.VerifyWith(context.Background(), s.store, audit.VerifyOptions{Signers: signers, ExpectHead: res.Head})
	if err != nil || !v.OK || v.Checkpoints.Signed != 1 || v.Checkpoints.Unsigned != 0 {
		t.Fatalf("verify = %v, %+v, %v", v.Lines(), v.Checkpoints, err)
	}
}
