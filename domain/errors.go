package domain

import "errors"

// Kinds of failure the UI tells apart with errors.Is: a disconnected
// broker is shown as such and retried, bad credentials are not retried.
var (
	ErrUnreachable  = errors.New("management API unreachable")
	ErrUnauthorized = errors.New("management API refused the credentials")
	ErrForbidden    = errors.New("management API forbids this read")
	ErrNotFound     = errors.New("not found")
)

// Error is a management API failure with a message an operator can act
// on. It never contains the password.
type Error struct {
	Kind   error // one of the Err* values, or nil
	Where  string
	Status int    // HTTP status, 0 when the request never got an answer
	Reason string // the API's own reason, when it gave one
	Msg    string
	Err    error // the transport's error, when there was no answer
}

func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrUnreachable) and the like work.
func (e *Error) Is(target error) bool { return e.Kind != nil && e.Kind == target }

// Unwrap exposes the transport's error (context.DeadlineExceeded, ...).
func (e *Error) Unwrap() error { return e.Err }

// IsDisconnected reports whether err means the broker could not be
// reached at all, as opposed to a refusal or a bad answer.
func IsDisconnected(err error) bool { return errors.Is(err, ErrUnreachable) }
