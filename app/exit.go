package app

import "errors"

// Exit codes of docs/ARCHITECTURE.md, "Exit codes".
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	ExitRefused = 3
	// ExitHalted: a staged replay stopped itself (its canary or a stage
	// failed); the operation is open for `dlq resume`.
	ExitHalted = 4
)

// ExitError carries the process exit code with the error to print.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Usage marks err as bad usage or config (exit 2).
func Usage(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// Refused marks err as refused by a guardrail (exit 3).
func Refused(err error) error { return &ExitError{Code: ExitRefused, Err: err} }

// errQuiet is an exit code with nothing more to say: the command said
// it (a check's findings).
var errQuiet = errors.New("exit code only")

// Quiet exits with code and prints nothing more.
func Quiet(code int) error { return &ExitError{Code: code, Err: errQuiet} }

// IsQuiet reports an error that carries only an exit code.
func IsQuiet(err error) bool { return errors.Is(err, errQuiet) }

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}
