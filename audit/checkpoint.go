package audit

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/warrenops/warren/domain"
	"golang.org/x/crypto/ssh"
)

// Checkpoints. Whoever can rewrite a store can rehash the whole chain;
// what they cannot do without the operator's key is sign its head. With a
// signing key, an operation ends with a checkpoint record (action
// "audit", outcome "checkpoint", no operation ID) that signs the head
// right before it: detail head_seq and head_hash, the signer's public key
// (key, in authorized_keys form) and the signature (signature_format,
// signature, base64). The key signs checkpointMessage of that head with
// ed25519, through golang.org/x/crypto/ssh. Verify, given the allowed
// signers, checks every checkpoint and reports the records after the last
// one as unsigned.

// CheckpointAction and CheckpointOutcome mark a checkpoint record.
const (
	CheckpointAction  = "audit"
	CheckpointOutcome = "checkpoint"
)

// SigningKey signs checkpoints: an ed25519 key.
type SigningKey struct {
	signer ssh.Signer
}

// LoadSigningKey reads an OpenSSH ed25519 private key without a
// passphrase from path ("~/" is the home directory), as `ssh-keygen -t
// ed25519 -N ""` writes it.
func LoadSigningKey(path string) (*SigningKey, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("audit signing key %s: %w", path, err)
		}
		path = filepath.Join(home, rest)
	}
	b, err := readOwnKey(path)
	if err != nil {
		return nil, err
	}
	raw, err := ssh.ParseRawPrivateKey(b)
	var protected *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &protected):
		return nil, fmt.Errorf("audit signing key %s is protected by a passphrase, which warren cannot ask for: give it a key of its own without one, readable by you only", path)
	case err != nil:
		return nil, fmt.Errorf("audit signing key %s is not an OpenSSH private key: %v", path, err)
	}
	priv, ok := raw.(*ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("audit signing key %s is not an ed25519 key (ssh-keygen -t ed25519 makes one)", path)
	}
	return NewSigningKey(*priv)
}

// readOwnKey reads a private key file, refusing one that is not a regular
// file of the user's own that only the user may read, as ssh refuses it.
// The checks look at the file opened, so what is read is what was checked.
func readOwnKey(path string) ([]byte, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("audit signing key %s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit signing key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("audit signing key: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("audit signing key %s is not a regular file", path)
	case ok && int(st.Uid) != os.Getuid():
		return nil, fmt.Errorf("audit signing key %s belongs to another user (uid %d): use a key of your own", path, st.Uid)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("audit signing key %s can be read or written by others (mode %04o): chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	return io.ReadAll(f)
}

// NewSigningKey signs with priv.
func NewSigningKey(priv ed25519.PrivateKey) (*SigningKey, error) {
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("audit signing key: %w", err)
	}
	return &SigningKey{signer: s}, nil
}

// Fingerprint names the key as ssh-keygen -l does: "SHA256:…".
func (k *SigningKey) Fingerprint() string { return ssh.FingerprintSHA256(k.signer.PublicKey()) }

// AuthorizedKey is the public key in the form an allowed_signers line
// takes after its principal: "ssh-ed25519 AAAA…".
func (k *SigningKey) AuthorizedKey() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k.signer.PublicKey())))
}

// checkpointMessage is what a checkpoint signs: the head, in a form used
// for nothing else.
func checkpointMessage(h domain.AuditHead) []byte {
	return fmt.Appendf(nil, "warren audit checkpoint v1\nseq %d\nsha256 %s\n", h.Seq, h.Hash)
}

// appender is what the stores do under their append lock; a checkpoint
// needs it, since it must sign the record right before it.
type appender interface {
	appendAfter(ctx context.Context, build func(prev *Record) ([]Record, error)) ([]Record, error)
}

// AppendCheckpoint appends a checkpoint signed with k over the head of s,
// with op's operator, host and context, and detail operation naming the
// operation it closes. The head it signs is the last record when the
// checkpoint is linked, whoever wrote it.
func AppendCheckpoint(ctx context.Context, s Store, k *SigningKey, op Op) (Record, error) {
	a, ok := s.(appender)
	if !ok {
		return Record{}, fmt.Errorf("audit: %s cannot append a checkpoint", s.Describe())
	}
	out, err := a.appendAfter(ctx, func(prev *Record) ([]Record, error) {
		if prev == nil {
			return nil, errors.New("audit: an empty log has no head to sign")
		}
		h := HeadOf(*prev)
		sig, err := k.signer.Sign(rand.Reader, checkpointMessage(h))
		if err != nil {
			return nil, fmt.Errorf("audit: signing the checkpoint: %w", err)
		}
		return []Record{{
			Operator: op.Operator, Host: op.Host, Context: op.Context,
			Action: CheckpointAction, Outcome: CheckpointOutcome,
			Detail: map[string]string{
				"head_seq":         strconv.FormatInt(h.Seq, 10),
				"head_hash":        h.Hash,
				"key":              k.AuthorizedKey(),
				"signature_format": sig.Format,
				"signature":        base64.StdEncoding.EncodeToString(sig.Blob),
				"operation":        op.ID,
			},
		}}, nil
	})
	if err != nil {
		return Record{}, err
	}
	return out[0], nil
}

// IsCheckpoint reports a checkpoint record.
func IsCheckpoint(r Record) bool {
	return r.Action == CheckpointAction && r.Outcome == CheckpointOutcome
}

// checkCheckpoint checks checkpoint r, linked after the record whose hash
// is r.PrevHash, against the allowed signers; it returns the principals
// of the key that signed it, or why it cannot be trusted.
func checkCheckpoint(r Record, allowed *AllowedSigners) (principals, problem string) {
	d := r.Detail
	if d["head_seq"] != strconv.FormatInt(r.Seq-1, 10) || d["head_hash"] != r.PrevHash {
		return "", fmt.Sprintf("the checkpoint signs seq %s sha256:%s, not the record before it: the log was rewritten",
			d["head_seq"], short(d["head_hash"]))
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(d["key"]))
	if err != nil {
		return "", fmt.Sprintf("the checkpoint names no readable key: %v", err)
	}
	signer, ok := allowed.find(key)
	if !ok {
		return "", fmt.Sprintf("the checkpoint is signed by %s, a key the allowed signers do not list", ssh.FingerprintSHA256(key))
	}
	blob, err := base64.StdEncoding.DecodeString(d["signature"])
	if err == nil {
		err = signer.key.Verify(checkpointMessage(domain.AuditHead{Seq: r.Seq - 1, Hash: r.PrevHash}), &ssh.Signature{Format: d["signature_format"], Blob: blob})
	}
	if err != nil {
		return "", fmt.Sprintf("the checkpoint's signature by %s does not hold (%v): the log was rewritten or the checkpoint forged", signer.principals, err)
	}
	return signer.principals, ""
}
