package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestASecretFileMustBeTheUsersAndReadableByNoOneElse(t *testing.T) {
	dir := t.TempDir()
	me := userName(os.Getuid())
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		mode os.FileMode
		path string // a file of that mode by default
		want []string
	}{
		{"private", 0o600, "", nil},
		{"read-only to its owner", 0o400, "", nil},
		{"readable by others", 0o644, "", []string{"has mode 0644 and owner " + me, "`chmod 600 "}},
		{"readable by the group", 0o640, "", []string{"has mode 0640", "`chmod 600 "}},
		{"writable by the group", 0o620, "", []string{"has mode 0620", "`chmod 600 "}},
		{"a directory", 0, dir, []string{"is not a regular file"}},
		{"a FIFO, refused without blocking", 0, fifo, []string{"is not a regular file"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = filepath.Join(dir, "pw-"+string(rune('a'+i)))
				if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			pw, err := (&Context{PasswordFile: path}).Password()
			if tc.want == nil {
				if err != nil || pw != "s3cret" {
					t.Fatalf("Password = %q, %v", pw, err)
				}
				return
			}
			if !errors.Is(err, ErrRefused) || pw != "" {
				t.Fatalf("Password = %q, %v; want a refusal", pw, err)
			}
			for _, want := range append(tc.want, "password_file "+path) {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("refusal %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatal("the refusal quotes the secret")
			}
		})
	}
}

// otherOwners is a file's stat as another user's file reads: what a
// chown gives, without needing root to make one.
type otherOwners struct {
	fs.FileInfo
	uid uint32
}

func (o otherOwners) Sys() any {
	st := *o.FileInfo.Sys().(*syscall.Stat_t)
	st.Uid = o.uid
	return &st
}

func TestASecretFileOfAnotherOwnerIsRefusedWithTheChown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw file")
	if err := os.WriteFile(path, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	other := uint32(os.Getuid() + 1)
	err = notPrivate("password_file", path, otherOwners{fi, other})
	want := "`chown " + userName(os.Getuid()) + " '" + path + "'`"
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "owner "+userName(int(other))) || !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %v; want it to name the owner and %s", err, want)
	}
	if err := notPrivate("password_file", path, fi); err != nil {
		t.Fatalf("the user's own 0600 file: %v", err)
	}
}

func TestATLSKeyFileOthersCanReadIsRefused(t *testing.T) {
	cert, key := clientPair(t)
	c := &Context{Name: "t", TLS: TLS{CertFile: cert, KeyFile: key}}
	if cfg, err := c.TLSConfig(); err != nil || len(cfg.Certificates) != 1 {
		t.Fatalf("a private key file: %v", err)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.TLSConfig()
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "context t: tls.key_file "+key+" has mode 0644") ||
		!strings.Contains(err.Error(), "`chmod 600 "+key+"`") {
		t.Fatalf("a key file others can read: %v", err)
	}
}

// clientPair writes a self-signed certificate and its key, mode 0600.
func clientPair(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "guest"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
