package dlq

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// The conventions of the frameworks that write error queues themselves
// (docs/ARCHITECTURE.md §4.12). Every header name is the framework's own,
// cited beside its row; a test reads each row against a message built the
// way that framework builds it.

// MassTransit moves a faulted message to <queue>_error and one no
// consumer took to <queue>_skipped. Header names: MassTransit,
// src/MassTransit.Abstractions/MessageHeaders.cs (MessageHeaders.Reason,
// FaultExceptionType, FaultMessage, FaultStackTrace, FaultInputAddress,
// FaultTimestamp, FaultRetryCount), written by SetExceptionHeaders in
// src/MassTransit.Abstractions/Contexts/SendContextExtensions.cs: the
// reason is "fault", the timestamp text in .NET's "O" format, the retry
// count an int32 present only when above 0; a skipped message carries
// MT-Reason "dead-letter" (RabbitMqDeadLetterTransport.cs). The suffixes
// are DefaultErrorQueueNameFormatter's and
// DefaultDeadLetterQueueNameFormatter's.
var massTransit = Convention{
	Name: domain.ConventionMassTransit,
	Paths: [fieldCount]string{
		fOriginQueue:  "MT-Fault-InputAddress",
		fErrorType:    "MT-Fault-ExceptionType",
		fErrorMessage: "MT-Fault-Message",
		fStackTrace:   "MT-Fault-StackTrace",
		fAttempts:     "MT-Fault-RetryCount",
		fFailedAt:     "MT-Fault-Timestamp",
	},
	Markers:  []string{"MT-Fault-ExceptionType", "MT-Fault-Message", "MT-Fault-InputAddress", "MT-Reason"},
	Required: []field{fOriginQueue, fErrorType, fErrorMessage},
	fix:      fixMassTransit,
}

// fixMassTransit turns the input address (rabbitmq://host/vhost/queue?…)
// into its queue, and reads a skipped message (MT-Reason "dead-letter",
// no exception) as such.
func fixMassTransit(f *domain.Failure, d amqp.Delivery) {
	f.OriginQueue = queueOfAddress(f.OriginQueue)
	if r, _ := domain.ValueText(d.Headers["MT-Reason"]); r == "dead-letter" && f.ErrorType == "" {
		f.Kind = domain.KindSkipped
		f.ErrorType = domain.KindSkipped
		f.ErrorMessage = "no consumer on the endpoint took the message"
		f.Missing = nil
	}
	// MT-Fault-RetryCount counts the retries after the first try, and
	// is left out when there were none.
	f.Attempts++
}

// queueOfAddress is the queue a MassTransit endpoint address names: the
// last segment of its path, without query.
func queueOfAddress(addr string) string {
	if addr == "" {
		return ""
	}
	u, err := url.Parse(addr)
	if err != nil || u.Path == "" {
		return ""
	}
	p := strings.TrimRight(u.Path, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if q, err := url.PathUnescape(p); err == nil {
		return q
	}
	return p
}

// Spring AMQP's RepublishMessageRecoverer, and Spring Cloud Stream's
// RabbitMQ binder with republishToDlq, which writes the same headers.
// Header names: spring-amqp, spring-rabbit/src/main/java/org/
// springframework/amqp/rabbit/retry/RepublishMessageRecoverer.java
// (X_EXCEPTION_STACKTRACE, X_EXCEPTION_MESSAGE, X_ORIGINAL_EXCHANGE,
// X_ORIGINAL_ROUTING_KEY); spring-amqp's MessageProperties.RETRY_COUNT
// ("retry-count", which the binder increments from 4.2); the binder's
// RabbitMessageChannelBinder.getErrorMessageHandler. Neither writes the
// exception's type: it is read from the stack trace.
var spring = Convention{
	Name: domain.ConventionSpring,
	Paths: [fieldCount]string{
		fOriginExchange:   "x-original-exchange",
		fOriginRoutingKey: "x-original-routingKey",
		fErrorMessage:     "x-exception-message",
		fStackTrace:       "x-exception-stacktrace",
		fAttempts:         "retry-count",
	},
	Markers:  []string{"x-exception-stacktrace", "x-exception-message", "x-original-routingKey"},
	Required: []field{fOriginRoutingKey, fErrorMessage},
	fix:      fixSpring,
}

// fixSpring takes the error type from the stack trace: the exception
// whose message x-exception-message holds is the first "Caused by:"
// (the first line is the listener's wrapper), else the first line's.
func fixSpring(f *domain.Failure, d amqp.Delivery) {
	trace, _ := domain.ValueText(d.Headers["x-exception-stacktrace"])
	line := FirstLine(trace)
	if i := strings.Index(trace, "Caused by: "); i >= 0 {
		line = FirstLine(trace[i+len("Caused by: "):])
	}
	if i := strings.IndexByte(line, ':'); i > 0 {
		line = line[:i]
	}
	if isTypeName(line) {
		f.ErrorType = line
	}
	if f.Attempts == 0 {
		f.Attempts = 1
	}
}

func isTypeName(s string) bool {
	if s == "" || len(s) > maxErrorType {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '.' || c == '_' || c == '$' || c == '`' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// NServiceBus moves a message that failed its retries to the shared
// error queue. Header names: NServiceBus,
// src/NServiceBus.Core/Recoverability/Faults/FaultsHeaderKeys.cs (FailedQ,
// ExceptionType, Message, StackTrace, TimeOfFailure), written by
// FaultMetadataExtractor.cs; the time in DateTimeOffsetHelper.cs's
// "yyyy-MM-dd HH:mm:ss:ffffff Z". MoveToError.cs removes the retry
// counters (NServiceBus.Retries, NServiceBus.FLRetries), so an error
// queue's message does not say how often it was tried.
var nServiceBus = Convention{
	Name: domain.ConventionNServiceBus,
	Paths: [fieldCount]string{
		fOriginQueue:  "NServiceBus.FailedQ",
		fErrorType:    "NServiceBus.ExceptionInfo.ExceptionType",
		fErrorMessage: "NServiceBus.ExceptionInfo.Message",
		fStackTrace:   "NServiceBus.ExceptionInfo.StackTrace",
	},
	Markers:  []string{"NServiceBus.FailedQ", "NServiceBus.ExceptionInfo.ExceptionType", "NServiceBus.ExceptionInfo.Message"},
	Required: []field{fOriginQueue, fErrorType, fErrorMessage},
	fix:      fixNServiceBus,
}

// fixNServiceBus drops the machine from a FailedQ of queue@machine (the
// MSMQ form) and reads the time of failure, whose colon before the
// microseconds no Go layout can say.
func fixNServiceBus(f *domain.Failure, d amqp.Delivery) {
	if q, _, ok := strings.Cut(f.OriginQueue, "@"); ok {
		f.OriginQueue = q
	}
	s, _ := domain.ValueText(d.Headers["NServiceBus.TimeOfFailure"])
	if len(s) > 19 && s[19] == ':' {
		s = s[:19] + "." + s[20:]
	}
	if t, err := time.Parse("2006-01-02 15:04:05.999999 Z", s); err == nil {
		f.FailedAt = t.UTC()
	} else if s != "" {
		f.Missing = append(f.Missing, "failed_at (NServiceBus.TimeOfFailure is not a time)")
	}
}

// rascal (Node) forwards or republishes a failed message with one header,
// "rascal", a nested table. Names: rascal, lib/amqp/SubscriberError.js
// (the forward and republish strategies set error.message, error.code,
// recovery.<queue>.forwarded / republished), lib/amqp/Subscription.js
// (originalQueue, redeliveries) and lib/amqp/Publication.js
// (originalExchange, originalRoutingKey). Every consumed message carries
// originalQueue, so only error or recovery mark a failure.
var rascal = Convention{
	Name: domain.ConventionRascal,
	Paths: [fieldCount]string{
		fOriginQueue:      "rascal.originalQueue",
		fOriginExchange:   "rascal.originalExchange",
		fOriginRoutingKey: "rascal.originalRoutingKey",
		fErrorType:        "rascal.error.code",
		fErrorMessage:     "rascal.error.message",
	},
	Markers:  []string{"rascal.error", "rascal.recovery"},
	Required: []field{fOriginQueue, fErrorMessage},
	fix:      fixRascal,
	additive: true,
}

// fixRascal counts the tries rascal recovered from: every forward and
// republish follows a failed try, so their sum counts every try of a
// forwarded message. A message the broker dead-lettered after rascal's
// republishes has the last try in x-death, which Decode adds
// (Convention.additive).
func fixRascal(f *domain.Failure, d amqp.Delivery) {
	rec, ok := lookup(d.Headers, "rascal.recovery")
	if !ok {
		return
	}
	t, ok := domain.ValueTable(rec)
	if !ok {
		return
	}
	var n int64
	for _, v := range t {
		counts, ok := domain.ValueTable(v)
		if !ok {
			continue
		}
		for _, key := range []string{"forwarded", "republished"} {
			if k, ok := domain.ValueInt(counts[key]); ok && k > 0 {
				n = addSat(n, k)
			}
		}
	}
	f.Attempts = clampInt(n)
}

// Watermill's poison-queue middleware republishes a message whose handler
// failed with its metadata, which watermill-amqp's default marshaler
// (pkg/amqp/marshaler.go) writes as string headers. Names: watermill,
// message/router/middleware/poison.go (ReasonForPoisonedKey
// "reason_poisoned", PoisonedTopicKey "topic_poisoned"). The error is a
// Go error's text, with no type. The topic is the queue of
// watermill-amqp's durable queue config (NewDurableQueueConfig: the
// default exchange, routing key and queue the topic); under a pub/sub
// config it is a fanout exchange, which pairing does not confirm as a
// queue.
var watermill = Convention{
	Name: domain.ConventionWatermill,
	Paths: [fieldCount]string{
		fOriginQueue:  "topic_poisoned",
		fErrorMessage: "reason_poisoned",
	},
	Markers:  []string{"reason_poisoned"},
	Required: []field{fOriginQueue, fErrorMessage},
}

// EasyNetQ publishes an error envelope to EasyNetQ_Default_Error_Queue
// (Source/EasyNetQ/Conventions.cs): no headers, the type property
// "EasyNetQ.SystemMessages.Error, EasyNetQ", and a JSON body of
// Source/EasyNetQ/SystemMessages/Error.cs's fields (RoutingKey, Exchange,
// Queue, Exception as ToString(), Message as the original body's UTF-8
// text, DateTime, BasicProperties), written by
// Source/EasyNetQ/Consumer/DefaultConsumeErrorStrategy.cs. From v8 a
// header in BasicProperties is {"Type": code, "Value": …}
// (Serialization/JsonHeaderExtensions.cs), bytes in base64; before, a
// plain value. Hosepipe, EasyNetQ's own replay tool, publishes the
// original body and properties to the queue named in Queue.
var easyNetQ = Convention{
	Name:     domain.ConventionEasyNetQ,
	Required: []field{fOriginRoutingKey, fErrorMessage},
	fix:      fixEasyNetQ,
	claim:    claimsEnvelope,
}

// easyNetQType is the type property EasyNetQ's error strategy sets on the
// envelope (its type name serializer's name of SystemMessages.Error).
const easyNetQType = "EasyNetQ.SystemMessages.Error"

// claimsEnvelope says whether a body is EasyNetQ's error envelope, by its
// type property or, failing that, its leading fields.
func claimsEnvelope(d amqp.Delivery) bool {
	if strings.HasPrefix(d.Type, easyNetQType) {
		return true
	}
	head := d.Body
	if len(head) > 4096 {
		head = head[:4096]
	}
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) > 0 && head[0] == '{' && bytes.Contains(head, []byte(`"BasicProperties"`)) &&
		bytes.Contains(head, []byte(`"Exception"`))
}

type envelope struct {
	RoutingKey      string         `json:"RoutingKey"`
	Exchange        string         `json:"Exchange"`
	Queue           string         `json:"Queue"`
	Exception       string         `json:"Exception"`
	Message         *string        `json:"Message"`
	DateTime        string         `json:"DateTime"`
	BasicProperties *envelopeProps `json:"BasicProperties"`
}

type envelopeProps struct {
	ContentType     string         `json:"ContentType"`
	ContentEncoding string         `json:"ContentEncoding"`
	Headers         map[string]any `json:"Headers"`
	DeliveryMode    uint8          `json:"DeliveryMode"`
	Priority        uint8          `json:"Priority"`
	CorrelationID   string         `json:"CorrelationId"`
	ReplyTo         string         `json:"ReplyTo"`
	Expiration      string         `json:"Expiration"`
	MessageID       string         `json:"MessageId"`
	Timestamp       int64          `json:"Timestamp"`
	Type            string         `json:"Type"`
	UserID          string         `json:"UserId"`
	AppID           string         `json:"AppId"`
}

// fixEasyNetQ unwraps the envelope: origin, exception and the original
// message. A body that is not a whole envelope is said to be so, and
// gives no origin to replay to.
func fixEasyNetQ(f *domain.Failure, d amqp.Delivery) {
	var e envelope
	if err := json.Unmarshal(d.Body, &e); err != nil || e.Message == nil {
		f.Missing = append(f.Missing, "envelope (the body is not a whole EasyNetQ error envelope)")
		return
	}
	f.OriginExchange = e.Exchange
	f.OriginRoutingKey = e.RoutingKey
	f.OriginQueue = e.Queue
	// The error strategy moves a message here on its first failed try;
	// warren's replays of it add theirs (applyFailure).
	f.Attempts = 1
	f.ErrorType, f.ErrorMessage = splitDotNetException(e.Exception)
	f.StackTrace = cut(e.Exception, maxStackTrace)
	if t, ok := anyTime(e.DateTime); ok {
		f.FailedAt = t
	}
	inner := &domain.Enveloped{Body: []byte(*e.Message)}
	if p := e.BasicProperties; p != nil {
		inner.Properties = domain.Properties{ContentType: p.ContentType, ContentEncoding: p.ContentEncoding,
			DeliveryMode: p.DeliveryMode, Priority: p.Priority, CorrelationID: p.CorrelationID, ReplyTo: p.ReplyTo,
			Expiration: timeSpanMillis(p.Expiration), MessageID: p.MessageID, Type: p.Type, UserID: p.UserID, AppID: p.AppID}
		if p.Timestamp > 0 {
			inner.Properties.Timestamp = time.Unix(p.Timestamp, 0).UTC()
		}
		if len(p.Headers) > 0 {
			inner.Headers = envelopeHeaders(p.Headers)
		}
	}
	f.Envelope = inner
}

// envelopeHeaders turns the envelope's headers back into AMQP values:
// from v8 each is {"Type": code, "Value": …} with the codes of EasyNetQ's
// JsonHeaderType.cs, before a plain JSON value. A .NET client reads a
// string header as bytes, which v8 writes as base64 (code 14): it is
// read back as the string it was on the wire when it is UTF-8 text.
func envelopeHeaders(in map[string]any) amqp.Table {
	out := make(amqp.Table, len(in))
	for k, v := range in {
		if x, ok := envelopeValue(v, 0); ok {
			out[k] = x
		}
	}
	return out
}

func envelopeValue(v any, depth int) (any, bool) {
	if depth > domain.MaxValueDepth {
		return nil, false
	}
	if m, ok := v.(map[string]any); ok {
		code, typed := m["Type"].(float64)
		if val, has := m["Value"]; typed && has && len(m) == 2 {
			return typedValue(int(code), val, depth)
		}
		t := amqp.Table{}
		for k, e := range m {
			if x, ok := envelopeValue(e, depth+1); ok {
				t[k] = x
			}
		}
		return t, true
	}
	switch x := v.(type) {
	case string, bool, nil:
		return x, true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
		return x, true
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if y, ok := envelopeValue(e, depth+1); ok {
				out = append(out, y)
			}
		}
		return out, true
	}
	return nil, false
}

// typedValue reads one v8 header value by its JsonHeaderType code.
func typedValue(code int, v any, depth int) (any, bool) {
	n, isNum := v.(float64)
	s, isStr := v.(string)
	switch {
	case code == 1:
		return nil, true
	case code == 2:
		b, ok := v.(bool)
		return b, ok
	case code >= 3 && code <= 8 && isNum:
		switch code {
		case 3:
			return uint8(n), true
		case 4:
			return int8(n), true
		case 5:
			return int16(n), true
		case 6:
			return int32(n), true
		case 7:
			return uint32(n), true
		}
		return int64(n), true
	case (code == 9 || code == 10) && isNum:
		return n, true
	case code == 12 && isNum:
		return time.Unix(int64(n), 0).UTC(), true
	case code == 13 && isStr:
		return s, true
	case (code == 14 || code == 17) && isStr:
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return s, true
		}
		if code == 14 && utf8.Valid(b) && isText(b) {
			return string(b), true
		}
		return b, true
	}
	return envelopeValue(v, depth+1)
}

// timeSpanMillis turns a .NET TimeSpan ("00:00:30", "1.02:03:04.5") into
// the milliseconds an expiration property holds; other text is kept.
func timeSpanMillis(s string) string {
	if !strings.Contains(s, ":") {
		return s
	}
	days, rest := "0", s
	if i := strings.IndexByte(s, '.'); i >= 0 && i < strings.IndexByte(s, ':') {
		days, rest = s[:i], s[i+1:]
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return s
	}
	d, err1 := strconv.Atoi(days)
	h, err2 := strconv.Atoi(parts[0])
	m, err3 := strconv.Atoi(parts[1])
	sec, err4 := strconv.ParseFloat(parts[2], 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return s
	}
	ms := (float64(((d*24+h)*60+m)*60) + sec) * 1000
	return strconv.FormatInt(int64(ms), 10)
}

func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// splitDotNetException reads an exception's ToString(): its first line is
// "Namespace.Type: message".
func splitDotNetException(s string) (typ, msg string) {
	first := FirstLine(s)
	if i := strings.Index(first, ": "); i > 0 && isTypeName(first[:i]) {
		return first[:i], cut(first[i+2:], maxErrorMessage)
	}
	if isTypeName(first) {
		return first, ""
	}
	return "", cut(first, maxErrorMessage)
}

// Builtin are the conventions warren reads out of the box, in the order
// they are tried after the broker's own.
func Builtin() []Convention { return append([]Convention(nil), builtin...) }

var (
	builtin    = []Convention{massTransit, spring, nServiceBus, rascal, watermill, easyNetQ}
	builtinSet = newConventionSet(builtin)
)
