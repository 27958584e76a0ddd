package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLSBroker is the 4.3 broker's TLS side as make services sets it up: an
// AMQPS and an HTTPS listener that verify the peer and require a client
// certificate, from a CA whose files the tests read.
type TLSBroker struct {
	AMQPSURL string // without credentials
	HTTPSURL string
	CAFile   string
	// CertFile and KeyFile are a client certificate (CN guest) the
	// broker accepts.
	CertFile, KeyFile string

	ca    *x509.Certificate
	caKey crypto.Signer
}

// TLSDir is where make services keeps the 4.3 broker's CA and
// certificates: WARREN_TEST_TLS_DIR, else the services cache.
func TLSDir() string {
	if d := os.Getenv("WARREN_TEST_TLS_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("WARREN_CACHE_DIR")
	switch {
	case cache != "":
	case os.Geteuid() == 0:
		cache = "/var/cache/warren"
	default:
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "warren")
	}
	return filepath.Join(cache, "rabbitmq-4.3", "tls")
}

// TLS returns the 4.3 broker's TLS listeners and certificates, whichever
// broker the other tests use: make services always brings them up, and a
// missing one fails the test.
func TLS(t testing.TB) *TLSBroker {
	t.Helper()
	dir := TLSDir()
	b := &TLSBroker{
		AMQPSURL: env("WARREN_TEST_AMQPS_URL", "amqps://127.0.0.1:5674/"),
		HTTPSURL: env("WARREN_TEST_MGMT_HTTPS_URL", "https://127.0.0.1:15674"),
		CAFile:   filepath.Join(dir, "ca.pem"),
		CertFile: filepath.Join(dir, "client.pem"),
		KeyFile:  filepath.Join(dir, "client-key.pem"),
	}
	caPEM, err := os.ReadFile(b.CAFile)
	if err != nil {
		t.Fatalf("the 4.3 broker's test CA is missing (make services makes it): %v", err)
	}
	block, _ := pem.Decode(caPEM)
	if block == nil {
		t.Fatalf("%s holds no PEM certificate", b.CAFile)
	}
	if b.ca, err = x509.ParseCertificate(block.Bytes); err != nil {
		t.Fatalf("%s: %v", b.CAFile, err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca-key.pem"))
	if err != nil {
		t.Fatalf("the test CA's key is missing (make services makes it): %v", err)
	}
	if block, _ = pem.Decode(keyPEM); block == nil {
		t.Fatal("ca-key.pem holds no PEM key")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatalf("ca-key.pem: %v", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		t.Fatalf("ca-key.pem: %T cannot sign", key)
	}
	b.caKey = signer
	return b
}

// ExpiredClient mints a client certificate from the broker's own CA that
// ended yesterday, and returns its certificate and key files.
func (b *TLSBroker) ExpiredClient(t testing.TB) (certFile, keyFile string) {
	t.Helper()
	now := time.Now()
	return mint(t, "expired-client", &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "guest"},
		NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, b.ca, b.caKey)
}

// OtherCA writes a CA certificate that signed nothing the broker has: a
// client that trusts only it must refuse the broker.
func OtherCA(t testing.TB) string {
	t.Helper()
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "warren other CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	cert, _ := mint(t, "other-ca", tmpl, nil, nil)
	return cert
}

// mint signs tmpl with parent's key (itself when parent is nil) and
// writes the certificate and a new key as PEM files.
func mint(t testing.TB, name string, tmpl, parent *x509.Certificate, parentKey crypto.Signer) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
