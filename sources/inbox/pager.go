package inbox

import (
	"context"
	"errors"
	"time"

	"github.com/warrenops/warren/domain"
)

// Lookuper finds which IDs an inbox applied; *Client implements it.
type Lookuper interface {
	Lookup(ctx context.Context, ids []string) (map[string]time.Time, error)
}

// Pager looks up one browse page at a time for a screen or a command.
// Once the database has failed it is not asked again: every later status
// is Unknown with the same reason, so a long listing is not slowed by one
// timeout per page.
type Pager struct {
	client Lookuper
	reason string
}

// NewPager wraps client; with a nil client every status is Unknown for
// reason (no inbox configured, or it could not be opened).
func NewPager(client Lookuper, reason string) *Pager {
	if client == nil && reason == "" {
		reason = "no inbox configured"
	}
	return &Pager{client: client, reason: reason}
}

// Reason says why statuses are Unknown; empty while the inbox answers.
func (p *Pager) Reason() string { return p.reason }

// Statuses looks up a page's IDs in one query. An empty ID (one that is
// no business ID, such as a content hash) is never looked up and its
// status is Unknown. found holds the effect times of applied IDs.
func (p *Pager) Statuses(ctx context.Context, ids []string) (statuses []domain.InboxStatus, found map[string]time.Time) {
	var err error
	if p.client != nil && p.reason == "" {
		ask := make([]string, 0, len(ids))
		for _, id := range ids {
			if id != "" {
				ask = append(ask, id)
			}
		}
		if found, err = p.client.Lookup(ctx, ask); err != nil {
			p.reason = err.Error()
		}
	}
	if p.reason != "" {
		found, err = nil, errors.New(p.reason)
	}
	statuses = make([]domain.InboxStatus, len(ids))
	for i, id := range ids {
		statuses[i] = domain.InboxUnknown
		if id != "" {
			statuses[i] = domain.InboxStatusOf(found, err, id)
		}
	}
	return statuses, found
}
