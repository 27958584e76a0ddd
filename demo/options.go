package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultVhost keeps the demo apart from the operator's own queues.
const DefaultVhost = "warren-demo"

// Options says where the scene goes. Empty fields take local defaults:
// amqp://127.0.0.1:5672, http://127.0.0.1:15672, guest/guest, vhost
// warren-demo, no inbox, no log.
type Options struct {
	AMQPURL       string
	ManagementURL string
	Username      string
	Password      string
	Vhost         string
	InboxDSN      string // empty = skip the inbox table
	Log           io.Writer
}

func (o Options) withDefaults() (Options, error) {
	if o.AMQPURL == "" {
		o.AMQPURL = "amqp://127.0.0.1:5672/"
	}
	if o.ManagementURL == "" {
		o.ManagementURL = "http://127.0.0.1:15672"
	}
	o.ManagementURL = strings.TrimRight(o.ManagementURL, "/")
	if o.Vhost == "" {
		o.Vhost = DefaultVhost
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	uri, err := amqp.ParseURI(o.AMQPURL)
	if err != nil {
		return o, fmt.Errorf("demo: AMQP URL: %w", err)
	}
	// ParseURI fills in guest/guest when the URL names no user.
	if o.Username == "" {
		o.Username = uri.Username
	}
	if o.Password == "" {
		o.Password = uri.Password
	}
	return o, nil
}

func (o Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, "demo: "+format+"\n", args...)
}

// dial opens a named connection to the scene's vhost. A vhost created a
// moment ago may refuse access for an instant, so NOT_ALLOWED is retried
// briefly; a refused login fails at once.
func (o Options) dial(ctx context.Context, name string) (*amqp.Connection, error) {
	uri, err := amqp.ParseURI(o.AMQPURL)
	if err != nil {
		return nil, fmt.Errorf("demo: AMQP URL: %w", err)
	}
	uri.Username, uri.Password, uri.Vhost = o.Username, o.Password, o.Vhost
	cfg := amqp.Config{
		Heartbeat:  10 * time.Second,
		Locale:     "en_US",
		Properties: amqp.Table{"connection_name": name, "product": "warren demo"},
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := amqp.DialConfig(uri.String(), cfg)
		if err == nil {
			return conn, nil
		}
		var amqpErr *amqp.Error
		if !errors.As(err, &amqpErr) || amqpErr.Code != amqp.NotAllowed || time.Now().After(deadline) {
			return nil, fmt.Errorf("demo: connect %s to %s:%d vhost %q: %w", name, uri.Host, uri.Port, o.Vhost, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
