// Package config loads warren's TOML configuration: named contexts (like
// kubeconfig), per-queue knowledge, and secrets that come from the
// environment or a file, never from the config itself.
package config

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// File is the whole configuration file.
type File struct {
	Path           string              `toml:"-"`
	CurrentContext string              `toml:"current_context"`
	Contexts       map[string]*Context `toml:"contexts"`
}

// Context is one broker (and its databases) an operator works against.
type Context struct {
	Name          string `toml:"-"`
	AMQPURL       string `toml:"amqp_url"`
	ManagementURL string `toml:"management_url"`
	// FallbackAMQPURLs and FallbackManagementURLs are the cluster's
	// other nodes, tried in order when the node amqp_url (or
	// management_url) names does not answer (docs/ARCHITECTURE.md §6).
	FallbackAMQPURLs       []string `toml:"fallback_amqp_urls"`
	FallbackManagementURLs []string `toml:"fallback_management_urls"`
	// MetricsURL is the broker's Prometheus endpoint (rabbitmq_prometheus),
	// read for a fast first screen; "" means the management host on port
	// 15692 (15691 with https), "off" none.
	MetricsURL   string `toml:"metrics_url"`
	Username     string `toml:"username"`
	PasswordEnv  string `toml:"password_env"`
	PasswordFile string `toml:"password_file"`
	Environment  string `toml:"environment"`
	ReadOnly     bool   `toml:"read_only"`
	// ReadOnlyFlag says --read-only made the context read-only, which
	// its read_only did not.
	ReadOnlyFlag bool     `toml:"-"`
	Refresh      Duration `toml:"refresh"`
	// ConsumerTimeout is the broker's consumer_timeout when its
	// rabbitmq.conf changes it (the management API does not tell it);
	// 0 takes RabbitMQ's default, 30 minutes. A browse session returns
	// what it holds before it (docs/ARCHITECTURE.md §4.3).
	ConsumerTimeout Duration `toml:"consumer_timeout"`
	Operator        string   `toml:"operator"`
	Vhost           string   `toml:"vhost"`
	Audit           string   `toml:"audit"`
	AuditDSNEnv     string   `toml:"audit_dsn_env"`
	// AuditSigningKey names an OpenSSH ed25519 private key file: every
	// operation then ends with a checkpoint record signed with it
	// (docs/ARCHITECTURE.md §4.6). The key is read when it signs.
	AuditSigningKey string `toml:"audit_signing_key"`
	// ConfirmThreshold is the selection size above which an action needs
	// the queue name and count typed, not just "y".
	ConfirmThreshold int     `toml:"confirm_threshold"`
	TLS              TLS     `toml:"tls"`
	Queues           []Queue `toml:"queues"`
	// Conventions are the team's own error-header conventions
	// (docs/ARCHITECTURE.md §4.12), tried after the broker's x-death and
	// before the frameworks' built in.
	Conventions []Convention `toml:"conventions"`

	noConfig bool // stands in for a missing config file (Local)
	// vhostFromURL says Vhost was taken from the AMQP URL, not set, so a
	// one-off --amqp-url takes it from its own URL.
	vhostFromURL bool
}

// TLS configures amqps:// and https:// connections.
type TLS struct {
	CAFile             string `toml:"ca_file"`
	CertFile           string `toml:"cert_file"`
	KeyFile            string `toml:"key_file"`
	InsecureSkipVerify bool   `toml:"insecure_skip_verify"`
}

// Queue is optional per-queue knowledge.
type Queue struct {
	Name           string `toml:"name"`
	Vhost          string `toml:"vhost"`
	LogicalID      string `toml:"logical_id"`
	AttemptsHeader string `toml:"attempts_header"`
	DLQ            string `toml:"dlq"`
	Quarantine     string `toml:"quarantine"`
	Inbox          *Inbox `toml:"inbox"`
}

// Convention maps a team's own error headers to what warren reads of a
// failure. Each field names a header; dots walk nested tables (as
// "rascal.error.message"), a name that contains dots itself is matched
// whole first.
type Convention struct {
	Name string `toml:"name"`
	// Queues are the queues (names or path.Match patterns such as
	// "*_failed") whose messages the convention reads; none is every
	// queue of the context.
	Queues           []string `toml:"queues"`
	OriginQueue      string   `toml:"origin_queue"`
	OriginExchange   string   `toml:"origin_exchange"`
	OriginRoutingKey string   `toml:"origin_routing_key"`
	ErrorType        string   `toml:"error_type"`
	ErrorMessage     string   `toml:"error_message"`
	StackTrace       string   `toml:"stack_trace"`
	Attempts         string   `toml:"attempts"`
	FailedAt         string   `toml:"failed_at"`
}

// Fields are the convention's header paths by field name, those set only.
func (c Convention) Fields() map[string]string {
	out := map[string]string{}
	for k, v := range map[string]string{
		"origin_queue": c.OriginQueue, "origin_exchange": c.OriginExchange, "origin_routing_key": c.OriginRoutingKey,
		"error_type": c.ErrorType, "error_message": c.ErrorMessage, "stack_trace": c.StackTrace,
		"attempts": c.Attempts, "failed_at": c.FailedAt,
	} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// AppliesTo reports whether the convention reads the messages of queue.
func (c Convention) AppliesTo(queue string) bool {
	if len(c.Queues) == 0 {
		return true
	}
	for _, p := range c.Queues {
		if ok, _ := path.Match(p, queue); ok || p == queue {
			return true
		}
	}
	return false
}

// ConventionsFor are the context's conventions that read queue's
// messages, in the order the config lists them.
func (c *Context) ConventionsFor(queue string) []Convention {
	var out []Convention
	for _, cv := range c.Conventions {
		if cv.AppliesTo(queue) {
			out = append(out, cv)
		}
	}
	return out
}

// Inbox points at a consumer's idempotency table.
type Inbox struct {
	DSNEnv     string `toml:"dsn_env"`
	DSNFile    string `toml:"dsn_file"`
	Table      string `toml:"table"`
	IDColumn   string `toml:"id_column"`
	TimeColumn string `toml:"time_column"`
}

// Duration is a time.Duration written as "2s" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("must be a duration such as \"2s\" or \"500ms\", found %q", string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Defaults applied to a context when a key is absent.
const (
	DefaultRefresh = 2 * time.Second
	// DefaultConsumerTimeout is RabbitMQ's consumer_timeout by default.
	DefaultConsumerTimeout  = 30 * time.Minute
	DefaultConfirmThreshold = 100
	DefaultAMQPURL          = "amqp://127.0.0.1:5672/"
	DefaultManagementURL    = "http://127.0.0.1:15672"
)

// ErrNotFound means no config file exists at any of the looked-up places.
var ErrNotFound = errors.New("no config file found")

// Candidates lists where a config is looked for, in order, when no
// --config flag is given: the working directory's (read only once
// trusted, Locate), then the user's own. A relative XDG_CONFIG_HOME is
// ignored, as the XDG specification asks.
func Candidates() []string {
	out := []string{"warren.toml"}
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		out = append(out, filepath.Join(dir, "warren", "config.toml"))
	} else if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".config", "warren", "config.toml"))
	}
	return out
}

// Load reads and validates a config file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse decodes and validates config text; path is used in messages.
// The text is first read without a schema, so a syntax error is told
// apart from a value of the wrong type, and the wrong value can be
// quoted back.
func Parse(path string, data []byte) (*File, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return nil, syntaxError(path, data, err)
	}
	var f File
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, valueError(path, data, raw, err)
	}
	if err := shapeError(path, data, raw); err != nil {
		return nil, err
	}
	f.Path = path
	if und := md.Undecoded(); len(und) > 0 {
		return nil, unknownKey(path, data, und[0])
	}
	if err := f.validate(data); err != nil {
		return nil, err
	}
	return &f, nil
}

// Context returns the named context, or the current one when name is empty.
func (f *File) Context(name string) (*Context, error) {
	if name == "" {
		name = f.CurrentContext
	}
	if name == "" {
		if len(f.Contexts) == 1 {
			for n := range f.Contexts {
				name = n
			}
		} else {
			return nil, fmt.Errorf("%s: no current_context set and no --context given; choose one of: %s",
				f.Path, strings.Join(f.ContextNames(), ", "))
		}
	}
	c, ok := f.Contexts[name]
	if !ok {
		return nil, fmt.Errorf("%s: no context %q; known contexts: %s", f.Path, name, strings.Join(f.ContextNames(), ", "))
	}
	return c, nil
}

// ContextNames returns the context names, sorted.
func (f *File) ContextNames() []string {
	names := make([]string, 0, len(f.Contexts))
	for n := range f.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// QueueConfig returns the per-queue knowledge for vhost/name, matching a
// DLQ override too, or nil when the config says nothing about it.
func (c *Context) QueueConfig(vhost, name string) *Queue {
	for i := range c.Queues {
		q := &c.Queues[i]
		if q.Name == name && (q.Vhost == "" || q.Vhost == vhost) {
			return q
		}
	}
	return nil
}

// QueueForDLQ returns the queue whose configured or paired DLQ is name.
func (c *Context) QueueForDLQ(vhost, dlq string) *Queue {
	for i := range c.Queues {
		q := &c.Queues[i]
		if q.DLQ == dlq && (q.Vhost == "" || q.Vhost == vhost) {
			return q
		}
	}
	return nil
}

// IsProd reports whether the context is a production one.
func (c *Context) IsProd() bool { return c.Environment == "prod" }

// Knowledge is what the config says about a DLQ or parking queue: the
// entry of the queue its messages belong to, where quarantined messages
// go, and whether the queue is itself a parking queue (acting on it is a
// release).
type Knowledge struct {
	Queue   *Queue // nil when the config says nothing
	Parking string
	Release bool
}

// Knowledge finds the config entry behind vhost/name: the queue that pins
// name as its DLQ or parking queue, else the first of sources (the queues
// the broker dead-letters into name) that has an entry, else name's own
// entry. A parking queue is one configured as such or named
// "<dlq>.quarantine"; the entry behind the latter is the one behind its
// DLQ (pass the DLQ's sources: domain.Snapshot.Sources).
func (c *Context) Knowledge(vhost, name string, sources []string) Knowledge {
	for i := range c.Queues {
		q := &c.Queues[i]
		if q.Quarantine == name && (q.Vhost == "" || q.Vhost == vhost) {
			return Knowledge{Queue: q, Parking: name, Release: true}
		}
	}
	if base, ok := strings.CutSuffix(name, ".quarantine"); ok && c.QueueForDLQ(vhost, name) == nil {
		// A DLQ's default parking queue: its messages are the DLQ's, with
		// the same logical ID and inbox.
		k := c.Knowledge(vhost, base, sources)
		return Knowledge{Queue: k.Queue, Parking: name, Release: true}
	}
	k := Knowledge{Queue: c.QueueForDLQ(vhost, name), Parking: name + ".quarantine"}
	for _, src := range sources {
		if k.Queue != nil {
			break
		}
		k.Queue = c.QueueConfig(vhost, src)
	}
	if k.Queue == nil {
		k.Queue = c.QueueConfig(vhost, name)
	}
	if k.Queue != nil && k.Queue.Quarantine != "" {
		k.Parking = k.Queue.Quarantine
	}
	return k
}
