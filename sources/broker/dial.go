// Package broker opens AMQP connections with the errors an operator can
// act on: bad credentials, unknown vhost, broker unreachable, TLS refused.
package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/nodes"
	"github.com/warrenops/warren/text/sanitize"
)

// Options say where and as whom to connect.
type Options struct {
	URL string // amqp:// or amqps://, without a password
	// Nodes, when set, are the cluster's nodes, URL's first, then its
	// fallbacks: each dial goes to the node that answered last, and on
	// to the others in turn while one does not answer.
	Nodes    *nodes.Set
	Username string
	Password string
	Vhost    string // overrides the URL's path when set
	TLS      *tls.Config
	Name     string // connection_name shown in the management UI
	Timeout  time.Duration
	// PasswordHint ends a bad-credentials error: what to check, naming
	// where the password came from (config.Context.PasswordHint).
	PasswordHint string
}

// defaultPasswordHint ends a bad-credentials error when the caller gave
// no hint of its own.
const defaultPasswordHint = "check username and the password variable (password_env)"

// Dial connects and returns an error that says what to do on failure. The
// password never appears in an error.
func Dial(o Options) (*amqp.Connection, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("amqp_url is not a URL: %w", err)
	}
	vhost := o.Vhost
	if vhost == "" {
		vhost = strings.TrimPrefix(u.Path, "/")
		if vhost == "" {
			vhost = "/"
		} else if v, err := url.PathUnescape(vhost); err == nil {
			vhost = v
		}
	}
	set := o.Nodes
	if set == nil {
		set = nodes.New(o.URL, nil)
	}
	return nodes.Try(set, nodeDown, func(raw string) (*amqp.Connection, error) {
		return dialOne(o, raw, vhost)
	})
}

// dialOne connects to the node at raw.
func dialOne(o Options, raw, vhost string) (*amqp.Connection, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("amqp_url is not a URL: %w", err)
	}
	u.User = nil
	where := u.Redacted()
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	props := amqp.NewConnectionProperties()
	name := o.Name
	if name == "" {
		name = "warren"
	}
	props.SetClientConnectionName(name)
	cfg := amqp.Config{
		SASL:            []amqp.Authentication{&amqp.PlainAuth{Username: o.Username, Password: o.Password}},
		Vhost:           vhost,
		TLSClientConfig: o.TLS,
		Heartbeat:       10 * time.Second,
		Properties:      props,
		Dial: func(network, addr string) (net.Conn, error) {
			c, err := amqp.DefaultDial(timeout)(network, addr)
			if err != nil {
				return nil, err
			}
			return coalesce(c), nil
		},
	}
	conn, err := amqp.DialConfig(u.String(), cfg)
	if msg, ok := config.MissingClientCert(o.TLS, err); ok && u.Scheme == "amqps" {
		if _, known := config.TLSProblem(err); !known {
			return nil, fmt.Errorf("broker %s: TLS refused: %s (%v)", where, msg, err)
		}
	}
	if err != nil {
		return nil, &dialError{explained: Explain(err, where, o.Username, vhost, o.PasswordHint), cause: err}
	}
	return conn, nil
}

// dialError is an explained dial error that keeps its cause, for
// nodeDown.
type dialError struct{ explained, cause error }

func (e *dialError) Error() string { return e.explained.Error() }
func (e *dialError) Unwrap() error { return e.cause }

// nodeDown says whether a dial error is the node not answering: nothing
// listens, the connection breaks or times out before the handshake, or
// the node is starting or stopping and closes it. Bad credentials, a
// missing vhost or a limit reached are the cluster's answer, not the
// node's.
func nodeDown(err error) bool {
	var (
		de *dialError
		oe *net.OpError
		ne net.Error
		ae *amqp.Error
	)
	if !errors.As(err, &de) {
		return false
	}
	switch {
	case errors.As(de.cause, &oe) && oe.Op == "dial",
		errors.As(de.cause, &ne) && ne.Timeout(),
		errors.Is(de.cause, syscall.ECONNRESET), errors.Is(de.cause, io.EOF):
		return true
	case errors.As(de.cause, &ae) && ae.Code == amqp.FrameError && (strings.Contains(ae.Reason, "EOF") ||
		strings.Contains(ae.Reason, "timeout") || strings.Contains(ae.Reason, "connection reset")):
		return true
	}
	return false
}

// Explain turns a dial error into one an operator can act on; hint ends a
// bad-credentials error (empty: a generic one).
func Explain(err error, where, user, vhost, hint string) error {
	if hint == "" {
		hint = defaultPasswordHint
	}
	var ae *amqp.Error
	var ne net.Error
	var oe *net.OpError
	var rec tls.RecordHeaderError
	if msg, ok := config.TLSProblem(err); ok {
		return fmt.Errorf("broker %s: TLS refused: %s", where, msg)
	}
	switch {
	case errors.As(err, &ae) && ae.Code == amqp.AccessRefused:
		if strings.Contains(ae.Reason, "vhost") {
			return fmt.Errorf("broker %s: user %q may not access vhost %q; grant permissions or pick another vhost", where, user, vhost)
		}
		return fmt.Errorf("broker %s: bad credentials for user %q; %s", where, user, hint)
	case errors.Is(err, amqp.ErrCredentials):
		return fmt.Errorf("broker %s: bad credentials for user %q; %s", where, user, hint)
	case errors.As(err, &ae) && ae.Code == amqp.NotAllowed && strings.Contains(ae.Reason, "limit"):
		// A user's, a vhost's or the node's connection limit: warren
		// needs one connection for a browse and one more for the
		// copies of an operation.
		return fmt.Errorf("broker %s: the broker refused another connection: %s; warren opens one for each browse and one more for an operation's copies: raise the limit or close other connections of user %q",
			where, sanitize.Text(ae.Reason), user)
	case errors.As(err, &ae) && ae.Code == amqp.NotAllowed:
		return fmt.Errorf("broker %s: vhost %q does not exist or is not allowed for user %q", where, vhost, user)
	case errors.Is(err, amqp.ErrVhost):
		return fmt.Errorf("broker %s: vhost %q does not exist or is not allowed for user %q", where, vhost, user)
	case errors.As(err, &oe) && oe.Op == "dial":
		return fmt.Errorf("broker %s unreachable: %v; is RabbitMQ running?", where, oe.Err)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("broker %s did not answer in time: %v", where, err)
	case errors.As(err, &rec):
		return fmt.Errorf("broker %s does not speak TLS on this port; use an amqp:// URL, or the broker's TLS port (5671 by default)", where)
	case errors.As(err, &ae) && ae.Code == amqp.FrameError && (strings.Contains(ae.Reason, "EOF") || strings.Contains(ae.Reason, "timeout")):
		// The connection opened, then closed or fell silent before the
		// handshake: something listens there that is not RabbitMQ.
		return fmt.Errorf("broker %s: what answers there does not speak AMQP (%s); is this the broker's AMQP port? (5672 by default, 5671 for amqps)", where, ae.Reason)
	case errors.As(err, &ae) && ae.Code == amqp.FrameError && strings.Contains(ae.Reason, "connection reset"):
		return fmt.Errorf("broker %s reset the connection before the handshake (%s): a node stopping or starting does; is this the broker's AMQP port? (5672 by default, 5671 for amqps)", where, sanitize.Text(ae.Reason))
	}
	return fmt.Errorf("broker %s: %w", where, err)
}
