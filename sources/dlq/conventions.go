package dlq

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// Bounds on what a failure keeps of hostile or huge headers.
const (
	maxErrorMessage = 1024      // the first line, cut
	maxErrorType    = 256       // a type name
	maxStackTrace   = 64 * 1024 // the inspector's copy
	maxOriginName   = 255       // AMQP's shortstr: a longer name is no queue
)

// field is one fact a convention keeps in a header.
type field int

const (
	fOriginQueue field = iota
	fOriginExchange
	fOriginRoutingKey
	fErrorType
	fErrorMessage
	fStackTrace
	fAttempts
	fFailedAt
	fieldCount
)

var fieldNames = [fieldCount]string{
	"origin_queue", "origin_exchange", "origin_routing_key",
	"error_type", "error_message", "stack_trace", "attempts", "failed_at",
}

// Convention reads one framework's error headers: which header paths hold
// each field (a path walks nested tables with dots, as rascal's
// "rascal.error.message"), and which of them mark a message as written
// by it.
type Convention struct {
	Name string
	// Paths holds the header path of each field, "" where the
	// convention keeps none.
	Paths [fieldCount]string
	// Markers are header paths of which any one present says the
	// convention wrote the message.
	Markers []string
	// Required are the fields a message of the convention should carry;
	// those it lacks are listed in Failure.Missing.
	Required []field
	// fix adjusts what the paths read, for conventions whose values need
	// more than a lookup (a URI, a queue@machine, an envelope body).
	fix func(f *domain.Failure, d amqp.Delivery)
	// claim recognises a convention without marker headers (an
	// envelope in the body).
	claim func(d amqp.Delivery) bool
	// additive says the convention's count of tries leaves out the one
	// the broker dead-lettered (rascal's republishes before a nack), so
	// beside x-death the two add up.
	additive bool
}

// FieldNames are the fields a convention of one's own can map, in the
// order config check lists them.
func FieldNames() []string { return append([]string(nil), fieldNames[:]...) }

// NewConvention is a team's own convention: each field named in paths
// (see FieldNames) read from a header path, nested tables walked by dots.
// The message is the convention's when its error message, error type or
// stack trace header is present (any of its paths when it maps none of
// those).
func NewConvention(name string, paths map[string]string) (Convention, error) {
	c := Convention{Name: name}
	if name == "" {
		return c, errors.New("a convention needs a name")
	}
	for k, p := range paths {
		i := slices.Index(fieldNames[:], k)
		if i < 0 {
			return c, fmt.Errorf("unknown field %q (fields: %s)", k, strings.Join(fieldNames[:], ", "))
		}
		if strings.TrimSpace(p) == "" {
			return c, fmt.Errorf("field %s: an empty header path", k)
		}
		c.Paths[i] = p
	}
	for _, f := range []field{fErrorMessage, fErrorType, fStackTrace} {
		if c.Paths[f] != "" {
			c.Markers = append(c.Markers, c.Paths[f])
		}
	}
	if len(c.Markers) == 0 {
		for _, p := range c.Paths {
			if p != "" {
				c.Markers = append(c.Markers, p)
			}
		}
	}
	if len(c.Markers) == 0 {
		return c, errors.New("a convention needs at least one field")
	}
	sort.Strings(c.Markers)
	return c, nil
}

// Recognize reads d by the first convention that claims it: the broker's
// own dead-lettering when x-death (or x-first/last-death) is present,
// else the conventions in order. deaths is d's parsed x-death.
func Recognize(d amqp.Delivery, deaths []domain.Death, conventions []Convention) domain.Failure {
	return recognize(d, deaths, findOrigin(deaths, d.Headers), newConventionSet(conventions), true)
}

// conventionSet is conventions in the order they are tried, with the
// header names any of their markers can start with: a message carrying
// none of those is claimed by no marker, which a scan learns from one
// look at each of its few headers instead of a lookup per marker.
type conventionSet struct {
	list  []Convention
	heads map[string]struct{}
}

func newConventionSet(list []Convention) *conventionSet {
	s := &conventionSet{list: list, heads: map[string]struct{}{}}
	for _, c := range list {
		for _, m := range c.Markers {
			for i := 0; i < len(m); i++ {
				if m[i] == '.' {
					s.heads[m[:i]] = struct{}{}
				}
			}
			s.heads[m] = struct{}{}
		}
	}
	return s
}

// marked reports whether some header could be a marker.
func (s *conventionSet) marked(h amqp.Table) bool {
	for k := range h {
		if _, ok := s.heads[k]; ok {
			return true
		}
	}
	return false
}

func recognize(d amqp.Delivery, deaths []domain.Death, org origin, set *conventionSet, full bool) domain.Failure {
	conventions := set.list
	marked := set.marked(d.Headers)
	var f domain.Failure
	if org.Queue != "" || org.Reason != "" {
		f = domain.Failure{Convention: domain.ConventionBroker, Kind: org.Reason, OriginQueue: org.Queue, OriginExchange: org.Exchange}
		if len(org.RoutingKeys) > 0 {
			f.OriginRoutingKey = org.RoutingKeys[0]
		}
		f.FailedAt = latestDeath(deaths)
	}
	for i := range conventions {
		c := &conventions[i]
		if c.claim != nil && f.Convention != "" {
			// A body is read for an envelope only when no header
			// said whose the message is.
			continue
		}
		if c.claim == nil && !marked {
			continue
		}
		if !c.claims(d) {
			continue
		}
		if f.Convention != "" {
			f.Also = append(f.Also, c.Name)
			if f.Convention == domain.ConventionBroker && f.ErrorMessage == "" {
				// The broker's reason says where and how, not what
				// broke: the framework's exception, if any, says that.
				g := c.read(d, full)
				f.ErrorType, f.ErrorMessage, f.StackTrace = g.ErrorType, g.ErrorMessage, g.StackTrace
				if c.additive {
					f.Attempts = g.Attempts
				}
			}
			continue
		}
		f = c.read(d, full)
	}
	return f
}

func (c *Convention) claims(d amqp.Delivery) bool {
	for _, m := range c.Markers {
		if _, ok := lookup(d.Headers, m); ok {
			return true
		}
	}
	return c.claim != nil && c.claim(d)
}

// read fills a failure from c's paths. Without full only what a scan
// counts is kept: no stack trace.
func (c *Convention) read(d amqp.Delivery, full bool) domain.Failure {
	f := domain.Failure{Convention: c.Name, Kind: domain.KindException}
	var wrong []string
	str := func(fl field, limit int, firstLine bool) string {
		p := c.Paths[fl]
		if p == "" {
			return ""
		}
		v, ok := lookup(d.Headers, p)
		if !ok {
			return ""
		}
		s, ok := domain.ValueText(v)
		if n, isInt := domain.ValueInt(v); !ok && isInt && fl == fErrorType {
			// rascal's error.code may be a number.
			s, ok = strconv.FormatInt(n, 10), true
		}
		if !ok {
			wrong = append(wrong, fieldNames[fl]+" ("+p+" is not text)")
			return ""
		}
		if firstLine {
			s = FirstLine(s)
		}
		return cut(s, limit)
	}
	// An origin is cut only far past any name AMQP allows, so that the
	// check below sees it is none (an address holds more than its name).
	f.OriginQueue = str(fOriginQueue, 16*maxOriginName, false)
	f.OriginExchange = str(fOriginExchange, 16*maxOriginName, false)
	f.OriginRoutingKey = str(fOriginRoutingKey, 16*maxOriginName, false)
	f.ErrorType = str(fErrorType, maxErrorType, true)
	f.ErrorMessage = str(fErrorMessage, maxErrorMessage, true)
	if full {
		f.StackTrace = str(fStackTrace, maxStackTrace, false)
	}
	if p := c.Paths[fAttempts]; p != "" {
		if v, ok := lookup(d.Headers, p); ok {
			if n, ok := domain.ValueInt(v); ok && n >= 0 {
				f.Attempts = clampInt(n)
			} else {
				wrong = append(wrong, fieldNames[fAttempts]+" ("+p+" is not a whole number)")
			}
		}
	}
	if p := c.Paths[fFailedAt]; p != "" {
		if v, ok := lookup(d.Headers, p); ok {
			if t, ok := anyTime(v); ok {
				f.FailedAt = t
			} else {
				wrong = append(wrong, fieldNames[fFailedAt]+" ("+p+" is not a time)")
			}
		}
	}
	if c.fix != nil {
		c.fix(&f, d)
	}
	for _, r := range c.Required {
		if missingField(f, r) {
			f.Missing = append(f.Missing, fieldNames[r])
		}
	}
	f.Missing = append(f.Missing, wrong...)
	for _, n := range []*string{&f.OriginQueue, &f.OriginExchange, &f.OriginRoutingKey} {
		if len(*n) > maxOriginName || !utf8.ValidString(*n) {
			// No queue or exchange has such a name: it is not an origin.
			f.Missing = append(f.Missing, "origin (the name is not one AMQP allows)")
			*n = ""
		}
	}
	return f
}

func missingField(f domain.Failure, r field) bool {
	switch r {
	case fOriginQueue:
		return f.OriginQueue == ""
	case fOriginExchange:
		return f.OriginExchange == "" && f.OriginQueue == ""
	case fOriginRoutingKey:
		return f.OriginRoutingKey == "" && f.OriginQueue == ""
	case fErrorType:
		return f.ErrorType == ""
	case fErrorMessage:
		return f.ErrorMessage == ""
	case fStackTrace:
		return f.StackTrace == ""
	case fFailedAt:
		return f.FailedAt.IsZero()
	}
	return false
}

// lookup finds a header by path: the whole path as a name first (many
// frameworks put dots in header names), else its first dot-separated
// parts as a name whose value is a table holding the rest.
func lookup(h amqp.Table, path string) (any, bool) {
	if v, ok := h[path]; ok {
		return v, true
	}
	for i := 0; i < len(path); i++ {
		if path[i] != '.' {
			continue
		}
		if t, ok := domain.ValueTable(h[path[:i]]); ok {
			if v, ok := lookup(t, path[i+1:]); ok {
				return v, true
			}
		}
	}
	return nil, false
}

// FirstLine is s up to its first line break, without surrounding space.
func FirstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// cut bounds s to limit bytes on a rune boundary, marking the cut.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// anyTime reads a time a framework wrote: an AMQP timestamp, Unix
// seconds or milliseconds, or text in RFC 3339 or one of the layouts
// .NET frameworks write.
func anyTime(v any) (time.Time, bool) {
	if t, ok := domain.ValueTime(v); ok {
		return t, true
	}
	if n, ok := domain.ValueInt(v); ok && n > 0 {
		if n > 1e11 { // milliseconds
			return time.UnixMilli(n).UTC(), true
		}
		return time.Unix(n, 0).UTC(), true
	}
	s, ok := domain.ValueText(v)
	if !ok {
		return time.Time{}, false
	}
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.9999999",             // .NET round trip without a zone
	"2006-01-02 15:04:05:999999 Z",            // NServiceBus DateTimeOffsetHelper
	"2006-01-02 15:04:05.9999999Z07:00",       // .NET "u"-like
	"1/2/2006 3:04:05 PM",                     // .NET invariant culture
	"2006-01-02 15:04:05.999999999 -0700 MST", // Go's time.String
}
