package mgmt

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"

	"github.com/warrenops/warren/domain"
)

// ChannelRoom is how many more channels the client's user may open under
// its max-channels limit (a RabbitMQ user limit): the limit less the
// channels the user's connections hold, by the statistics (up to an
// interval old). limited is false when the user has no such limit, or
// none the API shows (a user of another auth backend is not found).
// A channel opened past the limit makes the broker close its whole
// connection, so a reader that opens more channels as it goes asks first.
func (c *Client) ChannelRoom(ctx context.Context) (room int, limited bool, err error) {
	var limits present[struct {
		Value map[string]json.Number `json:"value"`
	}]
	err = c.get(ctx, "user-limits/"+url.PathEscape(c.username), nil, &limits)
	if errors.Is(err, domain.ErrNotFound) || errors.Is(err, domain.ErrForbidden) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	most := int64(-1)
	for _, l := range limits {
		if v, ok := l.Value["max-channels"]; ok {
			if n, err := v.Int64(); err == nil {
				most = n
			}
		}
	}
	if most < 0 {
		return 0, false, nil
	}
	var conns present[struct {
		User     string `json:"user"`
		Channels int64  `json:"channels"`
	}]
	if err := c.get(ctx, "connections", url.Values{"columns": {"user,channels"}}, &conns); err != nil {
		return 0, true, err
	}
	open := int64(0)
	for _, cn := range conns {
		if cn.User == c.username {
			open += cn.Channels
		}
	}
	return int(max(most-open, 0)), true, nil
}
