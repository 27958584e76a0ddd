package audit

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// newKey is a fresh signing key and the allowed_signers line naming it
// principal.
func newKey(t testing.TB, principal string) (*SigningKey, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return k, principal + " " + k.AuthorizedKey()
}

func allowed(t testing.TB, lines ...string) *AllowedSigners {
	t.Helper()
	a, err := ParseAllowedSigners(strings.NewReader(strings.Join(lines, "\n")), "allowed_signers")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var checkpointOp = Op{ID: "op-x", Operator: "ana", Host: "ops-1", Context: "prod"}

// signedChain is a file store of n records with a checkpoint after the
// first m of them (seq m+1), then the rest.
func signedChain(t *testing.T, k *SigningKey, m, n int) (*FileStore, []Record) {
	t.Helper()
	ctx := context.Background()
	s, _ := OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	for i := 1; i <= m; i++ {
		if _, err := s.Append(ctx, sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := AppendCheckpoint(ctx, s, k, checkpointOp)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Seq != int64(m+1) || cp.Detail["head_seq"] != strconv.Itoa(m) || cp.Operation != "" || cp.Detail["operation"] != "op-x" {
		t.Fatalf("checkpoint %+v, want seq %d signing seq %d for op-x", cp, m+1, m)
	}
	for i := m + 1; i < n; i++ {
		if _, err := s.Append(ctx, sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	return s, scanAll(t, s)
}

func TestVerifyChecksCheckpointsAndCountsTheUnsignedTail(t *testing.T) {
	k, line := newKey(t, "ana@example.com")
	ctx := context.Background()
	s, _ := signedChain(t, k, 9, 13) // checkpoint at seq 10, then 3 records
	res, err := VerifyWith(ctx, s, VerifyOptions{Signers: allowed(t, "# the on-call team", line)})
	if err != nil {
		t.Fatal(err)
	}
	cp := res.Checkpoints
	if !res.OK || cp == nil || cp.Signed != 1 || cp.LastSeq != 10 || cp.Unsigned != 3 || cp.Principals != "ana@example.com" {
		t.Fatalf("Verify = %+v, checkpoints %+v", res, cp)
	}
	want := "3 records after the last signed checkpoint at seq 10 are not signed; that checkpoint is signed by ana@example.com"
	if got := cp.String(); got != want {
		t.Fatalf("report %q, want %q", got, want)
	}
	if _, err := AppendCheckpoint(ctx, s, k, checkpointOp); err != nil {
		t.Fatal(err)
	}
	res, _ = VerifyWith(ctx, s, VerifyOptions{Signers: allowed(t, line)})
	if got := res.Checkpoints.String(); !res.OK || got != "the last record is the checkpoint at seq 14, signed by ana@example.com" {
		t.Fatalf("after a second checkpoint: ok %v, %q", res.OK, got)
	}
	// Without the allowed signers a checkpoint is a record like any other.
	mustVerify(t, s, 14)
}

func TestVerifyWithoutACheckpointReportsEveryRecordUnsigned(t *testing.T) {
	_, line := newKey(t, "ana")
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeChain(t, path, 5)
	s, _ := OpenFile(path)
	res, err := VerifyWith(context.Background(), s, VerifyOptions{Signers: allowed(t, line)})
	if err != nil || !res.OK || res.Checkpoints.String() != "no signed checkpoint: 5 records are not signed" {
		t.Fatalf("Verify = %+v %v", res, err)
	}
}

// Each case rewrites a signed chain as one who can write the store but
// does not hold the key; Verify must break at the checkpoint.
func TestVerifyRefusesACheckpointThatDoesNotHold(t *testing.T) {
	k, line := newKey(t, "ana")
	mallory, _ := newKey(t, "mallory")
	tests := []struct {
		name   string
		tamper func(t *testing.T, recs []Record) []Record
		want   string
	}{
		{"the chain rewritten and rehashed under the checkpoint", func(t *testing.T, recs []Record) []Record {
			return rehashFrom(recs, 2)
		}, "the checkpoint signs seq 9 sha256:"},
		{"the checkpoint's head rewritten to match", func(t *testing.T, recs []Record) []Record {
			out := rehashFrom(recs, 2)
			cp := out[9]
			cp.Detail = copyDetail(cp.Detail)
			cp.Detail["head_hash"] = out[8].Hash
			return resealFrom(out, 9, cp)
		}, "the checkpoint's signature by ana does not hold"},
		{"the checkpoint signed again with another key", func(t *testing.T, recs []Record) []Record {
			out := rehashFrom(recs, 2)
			cp := out[9]
			h := HeadOf(out[8])
			sig, err := mallory.signer.Sign(rand.Reader, checkpointMessage(h))
			if err != nil {
				t.Fatal(err)
			}
			cp.Detail = copyDetail(cp.Detail)
			cp.Detail["head_hash"], cp.Detail["key"] = h.Hash, mallory.AuthorizedKey()
			cp.Detail["signature"] = base64.StdEncoding.EncodeToString(sig.Blob)
			return resealFrom(out, 9, cp)
		}, "a key the allowed signers do not list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, recs := signedChain(t, k, 9, 13)
			writeRecords(t, s.Path(), tt.tamper(t, recs))
			res, err := VerifyWith(context.Background(), s, VerifyOptions{Signers: allowed(t, line)})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || res.BrokenSeq != 10 || !strings.Contains(res.Reason, tt.want) {
				t.Fatalf("Verify = %q, want broken at the checkpoint, seq 10, saying %q", res.String(), tt.want)
			}
			if plain, _ := Verify(context.Background(), s); !plain.OK {
				t.Fatalf("the rewritten chain is not a valid chain, so the case proves nothing: %q", plain.String())
			}
		})
	}
}

func copyDetail(d map[string]string) map[string]string {
	out := make(map[string]string, len(d))
	for k, v := range d {
		out[k] = v
	}
	return out
}

// resealFrom puts r at index i and hashes every record from there again.
func resealFrom(recs []Record, i int, r Record) []Record {
	out := append([]Record(nil), recs[:i]...)
	out = append(out, seal(r, &out[i-1], r.Time))
	for _, next := range recs[i+1:] {
		out = append(out, seal(next, &out[len(out)-1], next.Time))
	}
	return out
}

func writeRecords(t *testing.T, path string, recs []Record) {
	t.Helper()
	var b []byte
	for _, r := range recs {
		line, err := marshalLine(r)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAppendCheckpointRefusesAnEmptyLog(t *testing.T) {
	k, _ := newKey(t, "ana")
	s, _ := OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if _, err := AppendCheckpoint(context.Background(), s, k, checkpointOp); err == nil || !strings.Contains(err.Error(), "no head") {
		t.Fatalf("AppendCheckpoint on an empty log = %v", err)
	}
}

func TestLoadSigningKeyTakesAnOwnUnencryptedEd25519Key(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, block *pem.Block, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(block), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	plain, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	locked, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecBlock, err := ssh.MarshalPrivateKey(ec, "")
	if err != nil {
		t.Fatal(err)
	}
	good := write("good", plain, 0o600)
	k, err := LoadSigningKey(good)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := ssh.NewPublicKey(priv.Public())
	if k.Fingerprint() != ssh.FingerprintSHA256(pub) {
		t.Fatalf("fingerprint %s, want the key's", k.Fingerprint())
	}
	tests := []struct{ name, path, want string }{
		{"readable by others", write("open", plain, 0o644), "chmod 600"},
		{"protected by a passphrase", write("locked", locked, 0o600), "passphrase"},
		{"not ed25519", write("ecdsa", ecBlock, 0o600), "not an ed25519 key"},
		{"a public key", write("pub", &pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1}}, 0o600), "not an OpenSSH private key"},
		{"missing", filepath.Join(dir, "none"), "no such file"},
		{"a directory", dir, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := LoadSigningKey(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadSigningKey = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestParseAllowedSignersReadsOpenSSHLines(t *testing.T) {
	_, line := newKey(t, "ana@example.com")
	key := strings.TrimPrefix(line, "ana@example.com ")
	good := []string{
		line,
		"# comment\n\n" + line + " a comment",
		`"ana@example.com,bob@example.com" ` + key,
		`ana@example.com namespaces="git",valid-after="20240101" ` + key,
		"ana@example.com\t" + key,
	}
	for _, text := range good {
		if _, err := ParseAllowedSigners(strings.NewReader(text), "signers"); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
	bad := []struct{ text, want string }{
		{"", "lists no signer"},
		{"# only a comment\n", "lists no signer"},
		{key, "line 1: want `principal key-type base64-key`"},
		{"ana ssh-ed25519 notbase64!", "line 1: want"},
		{"ana cert-authority " + key, "certificate authority"},
	}
	for _, tt := range bad {
		if _, err := ParseAllowedSigners(strings.NewReader(tt.text), "signers"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error saying %q", tt.text, err, tt.want)
		}
	}
}
