package audit

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// serveAgent runs an ssh-agent holding priv on a socket of the test's
// own, and points SSH_AUTH_SOCK at it.
func serveAgent(t *testing.T, priv ed25519.PrivateKey) {
	t.Helper()
	ring := agent.NewKeyring()
	if err := ring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(ring, c); c.Close() }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
}

func TestACheckpointSignedByTheAgentVerifies(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serveAgent(t, priv)
	k, err := LoadAgentKey(AgentKey)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := ssh.NewPublicKey(priv.Public())
	if k.Fingerprint() != ssh.FingerprintSHA256(pub) {
		t.Fatalf("the agent's key %s is not the one added", k.Fingerprint())
	}
	if _, err := LoadAgentKey(AgentKey + ":" + k.Fingerprint()); err != nil {
		t.Errorf("by fingerprint: %v", err)
	}
	if _, err := LoadAgentKey(AgentKey + ":SHA256:nothere"); err == nil || !strings.Contains(err.Error(), "no ed25519 key SHA256:nothere") {
		t.Errorf("an absent fingerprint: %v", err)
	}
	ctx := context.Background()
	s, _ := OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if _, err := s.Append(ctx, sample(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := AppendCheckpoint(ctx, s, k, checkpointOp); err != nil {
		t.Fatal(err)
	}
	res, err := VerifyWith(ctx, s, VerifyOptions{Signers: allowed(t, "ana@example.com "+k.AuthorizedKey())})
	if err != nil || !res.OK {
		t.Fatalf("verify: %v %+v", err, res)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	if _, err := LoadAgentKey(AgentKey); err == nil || !strings.Contains(err.Error(), "SSH_AUTH_SOCK is not set") {
		t.Errorf("no agent: %v", err)
	}
}
