package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"
)

// TLSConfig builds the client TLS settings for amqps:// and https://, or
// returns nil when the context configures none.
func (c *Context) TLSConfig() (*tls.Config, error) {
	t := c.TLS
	if t.CAFile == "" && t.CertFile == "" && !t.InsecureSkipVerify {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // only when the operator set it explicitly
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("context %s: tls.ca_file: %w", c.Name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("context %s: tls.ca_file %s holds no PEM certificate", c.Name, t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := loadKeyPair(t.CertFile, t.KeyFile)
		if errors.Is(err, ErrRefused) {
			return nil, fmt.Errorf("context %s: %w", c.Name, err)
		}
		if err != nil {
			return nil, fmt.Errorf("context %s: tls.cert_file/key_file: %w", c.Name, err)
		}
		// An expired client certificate is refused by the broker with an
		// alert that may not reach the client before the connection
		// closes: say so here, where it is certain.
		if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil && time.Now().After(leaf.NotAfter) {
			return nil, fmt.Errorf("context %s: the client certificate (tls.cert_file) has expired (valid until %s); renew it",
				c.Name, leaf.NotAfter.UTC().Format(time.RFC3339))
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// loadKeyPair is tls.LoadX509KeyPair with the key read as a secret: a
// key file others may read is refused.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := readPrivate("tls.key_file", keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
