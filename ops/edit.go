package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
)

// Why an edit publishes nothing. Each error's text is one line that says
// the message stays.
var (
	ErrEditUnchanged = errors.New("the edit changed nothing")
	ErrEditorFailed  = errors.New("the editor failed")
	ErrNotHeld       = errors.New("the message is no longer held")
	ErrNotEditable   = errors.New("the message cannot be edited and resubmitted")
	ErrReadOnly      = errors.New("read-only context")
)

// EditDraft is one dead letter opened for editing: the file the editor
// changes, and the session that holds the letter meanwhile.
type EditDraft struct {
	Queue  domain.QueueRef
	Letter domain.DeadLetter
	// Path is the edit document (mode 0600), removed once the edit is
	// planned.
	Path string
	held *Browse
}

// StartEdit writes the edit document of d, held by held (the
// dashboard's Session or the command line's *Browse), to a file of its
// own that only the operator can read. Plan with Action Edit and the
// draft reads it back once the editor exits.
func (o *Ops) StartEdit(ctx context.Context, queue domain.QueueRef, held Holder, d domain.DeadLetter) (*EditDraft, error) {
	if err := o.writable("edit"); err != nil {
		return nil, err
	}
	// An edit that could not be audited must not cost the operator the
	// editing.
	if err := o.CheckAudit(ctx); err != nil {
		return nil, err
	}
	h := held.holder()
	if h.ReadOnly() {
		return nil, fmt.Errorf("%w: %s is a stream, and nothing can be removed from a stream", ErrNotEditable, queue.Name)
	}
	doc, err := actions.EditDocument(d)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", draftPattern()) // mode 0600; see "Drafts"
	if err != nil {
		return nil, fmt.Errorf("edit file: %w", err)
	}
	_, werr := f.Write(doc)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("edit file %s: %w", f.Name(), err)
	}
	return &EditDraft{Queue: queue, Letter: d, Path: f.Name(), held: h}, nil
}

// Command is the operator's editor on the draft: $EDITOR, run by the
// shell so it may carry arguments ("code --wait"), else vi.
func (d *EditDraft) Command() *exec.Cmd {
	editor := strings.TrimSpace(os.Getenv("EDITOR"))
	if editor == "" {
		return exec.Command("vi", d.Path)
	}
	return exec.Command("sh", "-c", editor+` "$1"`, "sh", d.Path)
}

// Discard removes the draft's file.
func (d *EditDraft) Discard() { _ = os.Remove(d.Path) }

// stays is the end of every line that says an edit published nothing.
func (d *EditDraft) stays() string {
	return "nothing was published; the message stays in " + d.Queue.Name
}

// planEdit reads the draft once the editor has exited (s.EditorErr is
// how it exited) and plans the resubmission: the diff, the destination
// a replay would use, and the prompt's sentence. The file is removed.
// Nothing is published, and the message stays, when the editor failed,
// the file cannot be read, or the edit changed nothing.
func (o *Ops) planEdit(ctx context.Context, s Scope) (*Plan, error) {
	d := s.Draft
	if d == nil {
		return nil, errors.New("no edit draft to plan (StartEdit writes one)")
	}
	defer d.Discard()
	if s.EditorErr != nil {
		return nil, fmt.Errorf("%w (%v): %s", ErrEditorFailed, s.EditorErr, d.stays())
	}
	text, err := os.ReadFile(d.Path)
	if err != nil {
		return nil, fmt.Errorf("reading the edited file: %v: %s", err, d.stays())
	}
	edited, err := actions.ParseEdit(d.Letter, text)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, d.stays())
	}
	if !edited.Changed(d.Letter) {
		return nil, fmt.Errorf("%w: %s", ErrEditUnchanged, d.stays())
	}
	ap, err := actions.NewEditPlan(d.Queue.Vhost, d.Queue.Name, d.Letter, edited)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, d.stays())
	}
	dest := ap.Groups[0].Dest
	return &Plan{
		Warnings: o.editWarnings(ctx, d, ap),
		Decided:  true,
		Summary:  fmt.Sprintf("Resubmit the edited message %s from %s to %s?", d.Letter.LogicalID, d.Queue.Name, dest),
		Selected: 1, Publish: 1, Bytes: ap.Bytes,
		Destinations: []Destination{{Name: dest.String(), Count: 1}},
		Lines: []string{
			fmt.Sprintf("%s: %d bytes, header %s=%s", dest, len(edited.Body), actions.HeaderEditedFrom, actions.Sha256Hex(d.Letter.Body)),
			fmt.Sprintf("the original leaves %s only once the broker confirms the copy", d.Queue.Name),
		},
		Diff: edited.Diff(d.Letter),
		run: func(ctx context.Context, _ func(Progress)) (Result, error) {
			return o.resubmit(ctx, ap, d.held)
		},
	}, nil
}

// editWarnings are what a replay of the original would warn of: the
// inbox reporting it applied (a replay skips it; an edit is asked for
// one message, and says so instead), an inbox that cannot answer, and
// what the destination's bindings and limits say.
func (o *Ops) editWarnings(ctx context.Context, d *EditDraft, ap *actions.Plan) []string {
	var out []string
	applied, known, note := o.Applied(ctx, d.Queue, []domain.DeadLetter{d.Letter})
	if note != "" {
		out = append(out, note)
	}
	if id := d.Letter.BusinessID(); known && id != "" && applied[id] {
		out = append(out, fmt.Sprintf("the inbox reports %s applied: its effect is committed, and the edited copy would apply it again unless its consumer ignores what it has applied", id))
	}
	return append(out, o.destinationWarnings(ctx, d.Queue.Vhost, ap.Groups)...)
}

// resubmit publishes a confirmed edit plan with the replay protocol: an
// audit record first, the copy under the same logical ID with confirms
// and mandatory, the original acked only after the confirm. A message
// the session no longer holds is refused before anything is written.
func (o *Ops) resubmit(ctx context.Context, ap *actions.Plan, h *Browse) (Result, error) {
	d := ap.Items[0].Letter
	same := func(l domain.DeadLetter) bool { return l.DeliveryTag == d.DeliveryTag }
	held := slices.ContainsFunc(h.Letters(), same) ||
		slices.ContainsFunc(h.Refused(), func(r dlq.Refusal) bool { return same(r.Letter) })
	// A round trip proves the session's channel is alive: had it died,
	// the broker would have the original back already.
	if !held || h.Sync() != nil {
		return Result{}, fmt.Errorf("%w in %s (its browse session ended, or it was acted on): nothing was published", ErrNotHeld, ap.Queue)
	}
	return o.execute(ctx, ap, h, nil)
}
