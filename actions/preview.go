package actions

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sort"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// Source is where a walk reads its messages, in queue
// order, at most a limit of them; *dlq.Feed is one. The caller closes it,
// which returns whatever was neither acked nor moved.
type Source interface {
	// Next hands out up to n more letters, with bodies; end is set once
	// nothing more will come.
	Next(ctx context.Context, n int) (letters []domain.DeadLetter, end bool, err error)
	// Keep says n handed-out deliveries stay held until Close.
	Keep(n int)
	// Ack removes one delivery whose copy was confirmed.
	Ack(tag uint64) error
	// AckAll removes deliveries whose copies were confirmed, with one
	// multiple ack where they continue the run of acked tags.
	AckAll(tags []uint64) error
	// Sync proves the acks sent before it.
	Sync() error
}

// Lookup asks the inbox which of ids were applied; an error means the
// inbox cannot say, so nothing is skipped.
type Lookup func(ctx context.Context, ids []string) (map[string]bool, error)

// pageSize is how many letters a walk decides at once: one
// inbox query and one write-ahead record per page.
const pageSize = 512

// Preview is what a walk would do, read from the queue
// itself and touching nothing: every message is decided as the operation
// will decide it, then all are returned. No body is kept.
type Preview struct {
	Request Request
	// Read is how many messages were read: the queue's depth, at most.
	Read   int
	Moving int
	Groups []Group // by count, largest first
	Bytes  int64
	// Why the others stay.
	SkippedApplied     int
	SkippedQuarantined int
	NoDestination      int
	Unconfirmed        int
	Filtered           int
	FilterErrors       int
	FilterError        error
	// ReplayLoops counts moving messages that came back after an earlier
	// replay: replaying them again without a fix only loops.
	ReplayLoops  int
	InboxUnknown bool
	// LogicalIDs is how many distinct logical IDs the moving messages
	// carry, counted up to maxCountedIDs of them; 0 past that, so the
	// prompt leaves the figure out rather than guess.
	LogicalIDs int
}

// maxCountedIDs bounds the logical IDs a preview remembers (8 bytes of
// hash each, a few MiB at most), whatever the queue's size.
const maxCountedIDs = 500_000

// NewPreview reads src to its end and decides every message with req.
func NewPreview(ctx context.Context, src Source, req Request, lookup Lookup) (*Preview, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	p := &Preview{Request: req}
	groups := map[Destination]*Group{}
	ids := newIDSet()
	for {
		letters, end, err := src.Next(ctx, pageSize)
		if err != nil {
			return nil, err
		}
		src.Keep(len(letters))
		applied, known := lookupPage(ctx, lookup, letters)
		p.InboxUnknown = p.InboxUnknown || !known
		for _, d := range letters {
			p.Read++
			dest, skip, err := req.Decide(d, appliedIn(applied, known, d))
			if !p.count(skip, err) {
				continue
			}
			p.Moving++
			p.Bytes += int64(d.Size)
			ids.add(d.LogicalID)
			if d.ReplayCount > 0 {
				p.ReplayLoops++
			}
			g := groups[dest]
			if g == nil {
				g = &Group{Dest: dest}
				groups[dest] = g
			}
			g.Count++
			g.Bytes += int64(d.Size)
		}
		if end {
			break
		}
	}
	p.LogicalIDs = ids.count()
	for _, g := range groups {
		p.Groups = append(p.Groups, *g)
	}
	sortGroups(p.Groups)
	return p, nil
}

// idSet counts distinct logical IDs by a 64-bit hash of each, up to
// maxCountedIDs: two IDs that share a hash are one chance in 2^64 per
// pair, far below anything a prompt's figure could show.
type idSet struct {
	seed maphash.Seed
	seen map[uint64]struct{}
	over bool
}

func newIDSet() *idSet { return &idSet{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}} }

func (s *idSet) add(id string) {
	if s.over {
		return
	}
	h := maphash.String(s.seed, id)
	if _, ok := s.seen[h]; ok {
		return
	}
	if len(s.seen) == maxCountedIDs {
		s.over, s.seen = true, nil
		return
	}
	s.seen[h] = struct{}{}
}

// count is how many distinct IDs were added; 0 once there were too many
// to count.
func (s *idSet) count() int {
	if s.over {
		return 0
	}
	return len(s.seen)
}

// count tallies a skipped letter and reports whether the letter moves.
func (p *Preview) count(skip Skip, err error) bool {
	switch skip {
	case SkipFilterError:
		p.FilterErrors++
		if p.FilterError == nil {
			p.FilterError = err
		}
	case SkipFiltered:
		p.Filtered++
	case SkipQuarantined:
		p.SkippedQuarantined++
	case SkipApplied:
		p.SkippedApplied++
	case SkipNoDestination:
		p.NoDestination++
	case SkipUnconfirmed:
		p.Unconfirmed++
	default:
		return true
	}
	return false
}

func sortGroups(gs []Group) {
	sort.Slice(gs, func(i, j int) bool {
		a, b := gs[i], gs[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Dest.Target() < b.Dest.Target()
	})
}

// lookupPage asks the inbox about a page's business IDs in one query.
// known is false when there is no inbox or it failed.
func lookupPage(ctx context.Context, lookup Lookup, letters []domain.DeadLetter) (map[string]bool, bool) {
	if lookup == nil {
		return nil, false
	}
	ids := make([]string, 0, len(letters))
	for _, id := range domain.BusinessIDs(letters) {
		if id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, true
	}
	applied, err := lookup(ctx, ids)
	if err != nil {
		return nil, false
	}
	return applied, true
}

// appliedIn is the inbox's word on d from a page's lookup: nil when
// unknown, which includes a content-hash ID no inbox holds.
func appliedIn(applied map[string]bool, known bool, d domain.DeadLetter) *bool {
	if !known || d.BusinessID() == "" {
		return nil
	}
	v := applied[d.BusinessID()]
	return &v
}

// CheckDestinations refuses an operation whose destination is knowably
// missing, before anything is held: a queue the default exchange would
// route to that does not exist, or an exchange that does not exist. A
// quarantine's parking queue is declared by the operation itself.
func CheckDestinations(conn *amqp.Connection, req Request, groups []Group) error {
	missing, err := missingDestinations(conn, req, groups, false)
	if err != nil || missing == nil {
		return err
	}
	return fmt.Errorf("%w: %w", ErrNoDestination, missing)
}

// missingDestinations is each destination of groups that does not
// exist, joined, for the caller to say what that means; nil when every
// one does. streamed says the groups count the messages read so far (a
// walk without a preview), not all.
func missingDestinations(conn *amqp.Connection, req Request, groups []Group, streamed bool) (missing, err error) {
	if req.Action == ActionQuarantine {
		return nil, nil
	}
	vhost := req.Vhost
	var each []error
	for _, g := range groups {
		d := g.Dest
		err := passive(conn, func(ch *amqp.Channel) error {
			if d.Exchange == "" {
				_, err := ch.QueueDeclarePassive(d.RoutingKey, false, false, false, false, nil)
				return err
			}
			return ch.ExchangeDeclarePassive(d.Exchange, amqp.ExchangeDirect, false, false, false, false, nil)
		})
		var ae *amqp.Error
		switch {
		case errors.As(err, &ae) && ae.Code == amqp.NotFound:
			going := plural(g.Count, "message")
			if streamed {
				going = fmt.Sprintf("%d of the messages read so far", g.Count)
			}
			each = append(each, fmt.Errorf("%s does not exist in vhost %s (%s would go there)", d, vhost, going))
		case err != nil:
			return nil, fmt.Errorf("check destination %s: %w", d, err)
		}
	}
	return errors.Join(each...), nil
}

// ErrNoDestination means a destination of the operation does not exist:
// nothing was held or moved.
var ErrNoDestination = errors.New("destination missing, nothing was changed")
