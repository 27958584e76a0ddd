package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// TLSProblem says which TLS setting of a context ([contexts.X.tls]) an
// error points at, for AMQPS and the management API's HTTPS alike; ok is
// false when err is no TLS failure.
// Alerts from the broker reach the client only as text (the AMQP client
// wraps them in a frame error), so those are matched by their words.
func TLSProblem(err error) (msg string, ok bool) {
	if err == nil {
		return "", false
	}
	var (
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
		verify   *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &unknown):
		return "its certificate is not signed by a CA in tls.ca_file; set tls.ca_file to the CA that signed the broker's certificate", true
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Sprintf("its certificate has expired or is not yet valid (%v); the broker's certificate must be renewed", invalid), true
	case errors.As(err, &hostname):
		return fmt.Sprintf("its certificate is not valid for this host (%v); connect by a name the certificate lists", hostname), true
	case errors.As(err, &verify):
		return fmt.Sprintf("its certificate could not be verified (%v); check tls.ca_file", verify.Err), true
	}
	text := err.Error()
	switch {
	case strings.Contains(text, "tls: certificate required"):
		return "the broker requires a client certificate; set tls.cert_file and tls.key_file", true
	case strings.Contains(text, "tls: expired certificate"):
		return "the client certificate (tls.cert_file) has expired and the broker refused it; renew it", true
	case strings.Contains(text, "tls: unknown certificate authority"):
		return "the broker does not trust the CA that signed the client certificate (tls.cert_file); use one its CA issued", true
	case strings.Contains(text, "tls: bad certificate"), strings.Contains(text, "tls: unsupported certificate"),
		strings.Contains(text, "tls: revoked certificate"), strings.Contains(text, "tls: certificate unknown"):
		return fmt.Sprintf("the broker refused the client certificate (tls.cert_file): %s", remoteAlert(text)), true
	}
	return "", false
}

// remoteAlert is the alert's own words, without the wrapping.
func remoteAlert(text string) string {
	if i := strings.Index(text, "tls: "); i >= 0 {
		return strings.TrimRight(text[i+len("tls: "):], `"`)
	}
	return text
}

// MissingClientCert explains a TLS connection the broker closed while
// warren had no client certificate to offer: the broker's "certificate
// required" alert does not always reach the client before the connection
// closes, so the close itself is the sign.
func MissingClientCert(cfg *tls.Config, err error) (msg string, ok bool) {
	if cfg == nil || len(cfg.Certificates) > 0 || err == nil {
		return "", false
	}
	text := err.Error()
	closed := errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(text, "channel/connection is not open") || strings.Contains(text, "connection reset by peer")
	if !closed {
		return "", false
	}
	return "the broker closed the connection during the TLS handshake: it requires a client certificate; set tls.cert_file and tls.key_file", true
}
