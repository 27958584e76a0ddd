package dlqfile

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/warrenops/warren/domain"
)

// Format and Version name the file; a reader refuses any other.
const (
	Format  = "warren-dlq-export"
	Version = 1
)

// Header is the file's first line.
type Header struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	Broker     string    `json:"broker"` // "RabbitMQ 4.3.6"
	Cluster    string    `json:"cluster,omitempty"`
	Vhost      string    `json:"vhost"`
	Queue      string    `json:"queue"`
	ExportedAt time.Time `json:"exported_at"`
	Count      int       `json:"count"`
	Filter     string    `json:"filter,omitempty"`
	Warren     string    `json:"warren"`
}

// ID is the export's identity, whatever file holds it: the sha256 of its
// header, as a reader reads it, in hex. A copy compressed or
// decompressed, whose bytes (and file sha256) differ, has the same ID;
// another export of the same queue has another time, so another ID.
func (h Header) ID() string {
	h.Format, h.Version = Format, Version // as written, whoever asks
	b, _ := json.Marshal(h)               // a struct of strings, numbers and a time
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Properties are a message's AMQP properties; Timestamp is nil when the
// message has none.
type Properties struct {
	ContentType     string     `json:"content_type,omitempty"`
	ContentEncoding string     `json:"content_encoding,omitempty"`
	DeliveryMode    uint8      `json:"delivery_mode,omitempty"`
	Priority        uint8      `json:"priority,omitempty"`
	CorrelationID   string     `json:"correlation_id,omitempty"`
	ReplyTo         string     `json:"reply_to,omitempty"`
	Expiration      string     `json:"expiration,omitempty"`
	MessageID       string     `json:"message_id,omitempty"`
	Timestamp       *time.Time `json:"timestamp,omitempty"`
	Type            string     `json:"type,omitempty"`
	UserID          string     `json:"user_id,omitempty"`
	AppID           string     `json:"app_id,omitempty"`
}

// Digest is a body's sha256, in hex.
func Digest(body []byte) string {
	s := sha256.Sum256(body)
	return hex.EncodeToString(s[:])
}

// Encoder writes the lines of one file.
type Encoder struct {
	w   io.Writer
	enc *json.Encoder
	buf []byte
}

// NewEncoder writes lines to w; escaping HTML is off, so a body's JSON
// in a header stays readable.
func NewEncoder(w io.Writer) *Encoder {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return &Encoder{w: w, enc: e}
}

// Header writes the header line.
func (e *Encoder) Header(h Header) error {
	h.Format, h.Version = Format, Version
	return e.enc.Encode(h)
}

// Gzipped reports a file name that asks for gzip.
func Gzipped(name string) bool { return strings.HasSuffix(name, ".gz") }

// Reader reads a file line by line, gzip or not.
type Reader struct {
	sc     *bufio.Scanner
	lines  lineReader
	line   int
	Header Header
}

// maxLine bounds one line: a message of RabbitMQ's largest size (512
// MiB by default in 4.x) in base64, with its headers.
const maxLine = 700 << 20

// NewReader reads the header of r and returns a reader of its messages;
// a file that is not an export is an error naming what it found.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		br = bufio.NewReader(gz)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 1<<20), maxLine)
	rd := &Reader{sc: sc}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("line 1: %w", err)
		}
		return nil, errors.New("line 1: the file is empty: not a warren export")
	}
	rd.line = 1
	if err := json.Unmarshal(sc.Bytes(), &rd.Header); err != nil || rd.Header.Format != Format {
		return nil, fmt.Errorf("line 1: not a warren export (its first line must be the header with \"format\": %q)", Format)
	}
	if rd.Header.Version != Version {
		return nil, fmt.Errorf("line 1: export format version %d; this warren reads version %d", rd.Header.Version, Version)
	}
	return rd, nil
}

// Next reads the next message, its body checked against its sha256;
// io.EOF after the last. An error names the line.
func (r *Reader) Next() (Entry, error) {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			return Entry{}, fmt.Errorf("line %d: %w", r.line+1, err)
		}
		return Entry{}, io.EOF
	}
	r.line++
	e, err := r.lines.entry(r.sc.Bytes())
	if err != nil {
		return Entry{}, fmt.Errorf("line %d: %w", r.line, err)
	}
	return e, nil
}

// Line is the number of the line read last.
func (r *Reader) Line() int { return r.line }

// Letter is e as the operation engine takes it: the message as it was
// delivered, with the logical ID and original route the export read.
func (e *Entry) Letter() domain.DeadLetter {
	var d domain.DeadLetter
	e.letterInto(&d)
	return d
}

// letterInto writes e's letter into d, which is zero: a page's letters
// are written where they are kept, not copied there (a letter is most of
// a kilobyte, and an import makes each twice).
func (e *Entry) letterInto(d *domain.DeadLetter) {
	p := &e.Publishing
	d.MessageID, d.LogicalID, d.Reason, d.OriginQueue, d.OriginExchange = p.MessageId, e.LogicalID, e.Reason, e.OriginQueue, e.Exchange
	d.Group, d.Headers, d.Body, d.Size = e.Group, map[string]any(p.Headers), p.Body, e.Size
	d.DeliveryCount, d.AcquiredCount, d.Headroom = -1, -1, -1
	d.Properties = domain.Properties{ContentType: p.ContentType, ContentEncoding: p.ContentEncoding, DeliveryMode: p.DeliveryMode,
		Priority: p.Priority, CorrelationID: p.CorrelationId, ReplyTo: p.ReplyTo, Expiration: p.Expiration, MessageID: p.MessageId,
		Timestamp: p.Timestamp, Type: p.Type, UserID: p.UserId, AppID: p.AppId}
	if e.RoutingKey != "" {
		d.RoutingKeys = []string{e.RoutingKey}
	}
	if e.BodySHA256 != "" && e.Publishing.Body != nil {
		d.BodyDigest = "sha256:" + e.BodySHA256
	}
}
