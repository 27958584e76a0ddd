package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// maxFilterLen bounds a filter's source; a filter is a line typed by an
// operator, not a program.
const maxFilterLen = 4096

// Filter selects dead letters with a boolean expression (docs/ARCHITECTURE.md §5),
// evaluated by expr-lang/expr over the fields of filterEnv.
type Filter struct {
	src  string
	prog *vm.Program
}

// compileEnv types the fields for the compiler. At run time applied is
// nil when the inbox status is unknown, and age_seconds nil when the
// message carries no dead-lettering time, so a comparison with either
// fails loudly instead of matching by accident.
var compileEnv = map[string]any{
	"logical_id": "", "message_id": "", "reason": "", "origin_queue": "",
	"origin_exchange": "", "attempts": 0, "age_seconds": 0.0, "size": 0,
	"applied": nil, "quarantined": false,
	"group": "", "convention": "", "error_type": "", "error_message": "", "origin_routing_key": "",
	"header": func(string) any { return nil },
}

// CompileFilter compiles src; the error names the problem and where.
func CompileFilter(src string) (*Filter, error) {
	src = strings.TrimSpace(src)
	if src == "" {
		return nil, fmt.Errorf("filter is empty; example: reason == \"rejected\" && attempts >= 3 && applied == false")
	}
	if len(src) > maxFilterLen {
		return nil, fmt.Errorf("filter is %d characters long; at most %d are allowed", len(src), maxFilterLen)
	}
	prog, err := expr.Compile(src, expr.Env(compileEnv), expr.AsBool(), expr.Patch(division{}), divide)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %v\nfields: logical_id, message_id, reason, origin_queue, origin_exchange, origin_routing_key, attempts, age_seconds, size, applied (true, false or nil), quarantined, group, convention, error_type, error_message, header(\"name\")", src, err)
	}
	return &Filter{src: src, prog: prog}, nil
}

// division makes every a / b a call of divide: expr divides by zero
// into +Inf (or NaN), which compares true with what an operator's typo
// meant as a bound (attempts / 0 > 1 selects every message), where a
// remainder by zero is an error.
type division struct{}

func (division) Visit(node *ast.Node) {
	if b, ok := (*node).(*ast.BinaryNode); ok && b.Operator == "/" {
		ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: "divide"}, Arguments: []ast.Node{b.Left, b.Right}})
	}
}

// divide is a / b, or an error when b is zero: the message is then one
// the filter cannot judge, which stays where it is.
var divide = expr.Function("divide", func(params ...any) (any, error) {
	a, aok := number(params[0])
	b, bok := number(params[1])
	switch {
	case !aok || !bok:
		return nil, fmt.Errorf("cannot divide %v by %v", params[0], params[1])
	case b == 0:
		return nil, fmt.Errorf("division by zero")
	}
	return a / b, nil
}, new(func(any, any) float64))

// number is v as a float64 when v is one of Go's numbers (or a counter
// sent as text, as ValueInt reads it).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	n, ok := ValueInt(v)
	return float64(n), ok
}

// String returns the filter's source.
func (f *Filter) String() string { return f.src }

// Match evaluates the filter for one dead letter; applied is the inbox
// status, nil when unknown.
func (f *Filter) Match(d DeadLetter, applied *bool, now time.Time) (bool, error) {
	env := map[string]any{
		"logical_id":         d.LogicalID,
		"message_id":         d.MessageID,
		"reason":             d.Reason,
		"origin_queue":       d.OriginQueue,
		"origin_exchange":    d.OriginExchange,
		"attempts":           d.Attempts,
		"age_seconds":        nil,
		"size":               d.Size,
		"applied":            nil,
		"quarantined":        d.Quarantined,
		"group":              d.Group,
		"convention":         d.Failure.Convention,
		"error_type":         d.Failure.ErrorType,
		"error_message":      d.Failure.ErrorMessage,
		"origin_routing_key": d.Failure.OriginRoutingKey,
		"header": func(name string) any {
			v, ok := d.Headers[name]
			if !ok {
				return nil
			}
			return Plain(v)
		},
	}
	if !d.DeadLetteredAt.IsZero() {
		env["age_seconds"] = now.Sub(d.DeadLetteredAt).Seconds()
	}
	if applied != nil {
		env["applied"] = *applied
	}
	out, err := expr.Run(f.prog, env)
	if err != nil {
		return false, fmt.Errorf("filter %q on message %s: %v", f.src, d.LogicalID, err)
	}
	ok, _ := out.(bool)
	return ok, nil
}
