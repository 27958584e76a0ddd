package dlq

import (
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The client closes a connection with a frame error both when a frame
// does not parse and when the network simply ends it: only the first
// is a message warren cannot read past.
func TestALostConnectionIsNotTakenForABadMessage(t *testing.T) {
	for _, c := range []struct {
		name string
		err  *amqp.Error
		want string
		not  string
	}{
		{"a header table too deep", &amqp.Error{Code: amqp.FrameError, Reason: amqp.ErrSyntax.Error()}, "cannot decode", "dropped"},
		{"a frame that does not parse", &amqp.Error{Code: amqp.FrameError, Reason: amqp.ErrFrame.Error()}, "cannot decode", "dropped"},
		{"the connection ended", &amqp.Error{Code: amqp.FrameError, Reason: "EOF"}, "the connection to the broker dropped (EOF)", "cannot decode"},
		{"the connection was reset", &amqp.Error{Code: amqp.FrameError, Reason: "read tcp 127.0.0.1:5672: connection reset by peer"}, "dropped (read tcp", "cannot decode"},
		{"the broker closed it", &amqp.Error{Code: amqp.ConnectionForced, Reason: "CONNECTION_FORCED - broker forced connection closure"}, "lost (CONNECTION_FORCED", "cannot decode"},
	} {
		got := lossError("browse session", "orders.dlq", c.err).Error()
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%s: %q, want %q and not %q", c.name, got, c.want, c.not)
		}
	}
}
