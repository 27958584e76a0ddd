package inbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// explain turns a driver error into one an operator can act on, naming
// the database by host and port. Driver messages may quote connection
// settings, so only their safe parts are kept, and the DSN and password
// are scrubbed from whatever remains.
func (c *Client) explain(what string, err error) error {
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	var opErr *net.OpError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "57014":
		return fmt.Errorf("%s at %s: the query ran past the %s statement timeout", what, c.where, c.stmt)
	case errors.As(err, &pgErr):
		return fmt.Errorf("%s at %s: %s (SQLSTATE %s)", what, c.where, c.scrub(pgErr.Message), pgErr.Code)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s at %s: no answer within %s", what, c.where, c.timeout)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s at %s: %w", what, c.where, context.Canceled)
	case errors.As(err, &opErr):
		return fmt.Errorf("%s: cannot reach PostgreSQL at %s: %s", what, c.where, c.scrub(opErr.Err.Error()))
	case errors.As(err, &connErr):
		return fmt.Errorf("%s: cannot connect to PostgreSQL at %s", what, c.where)
	}
	return fmt.Errorf("%s at %s: %s", what, c.where, c.scrub(err.Error()))
}

func (c *Client) scrub(s string) string {
	for _, secret := range c.secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "xxxxx")
		}
	}
	return s
}
