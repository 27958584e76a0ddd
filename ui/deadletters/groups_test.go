package deadletters

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui/common"
)

func groupsDriver(t *testing.T, letters []domain.DeadLetter, acts *fakeActions, sc *fakeScanner) *driver {
	t.Helper()
	deps := Deps{
		Browser: &fakeBrowser{sessions: []*fakeSession{newSession(ops.Page{Letters: letters}), newSession()}},
		Inbox:   fakeInbox{},
	}
	if acts != nil {
		deps.Actions = acts
	}
	if sc != nil {
		deps.Scanner = sc
	}
	d := newDriver(t, deps, Options{})
	d.browsing(len(letters))
	return d
}

func heldIDs(m *Model) []string {
	var ids []string
	for _, i := range m.held.visible {
		ids = append(ids, m.held.letters[i].LogicalID)
	}
	return ids
}

func letterIDs(ls []domain.DeadLetter) string {
	var ids []string
	for _, l := range ls {
		ids = append(ids, l.LogicalID)
	}
	return strings.Join(ids, ",")
}

func TestEnterListsTheGroupAndTheActionsTakeIt(t *testing.T) {
	acts := &fakeActions{}
	d := groupsDriver(t, groupLetters(), acts, nil)
	notFound := groupLetters()[0].Group
	// A selection outside the group must not ride along with its replay.
	d.keys("down", "space", "g")
	if !d.m.groups.open || !d.m.HandlesEsc() {
		t.Fatalf("g did not open the groups view:\n%s", d.m.View())
	}
	d.keys("enter")
	if d.m.groups.open {
		t.Fatalf("enter left the groups view open:\n%s", d.m.View())
	}
	want := fmt.Sprintf("group == %q", notFound)
	if d.m.held.filterSrc != want {
		t.Fatalf("filter = %q, want %q", d.m.held.filterSrc, want)
	}
	if got := strings.Join(heldIDs(d.m), ","); got != "ev-1,ev-3" {
		t.Errorf("the list shows %q, want the two orders not found", got)
	}
	if got := strings.Join(selectedIDs(d.m), ","); got != "ev-1,ev-3" {
		t.Errorf("selected %q, want the group's messages only", got)
	}
	info := d.infoText()
	if !strings.HasPrefix(info, "group "+notFound+": 2 messages selected") || !strings.Contains(info, "1 selected outside the group let go") {
		t.Errorf("info = %q", info)
	}
	if v := d.m.View(); !strings.Contains(v, want) || strings.Contains(v, "ev-2") || strings.Contains(v, "ev-4") {
		t.Errorf("the list does not show the group alone:\n%s", v)
	}

	d.keys("r")
	d.until("the replay's plan", func() bool { reqs, _ := acts.plans(); return len(reqs) == 1 })
	d.until("the prompt", func() bool { return d.m.mode() == prompting })
	d.keys("esc")
	d.send(ctrl(tea.KeyCtrlR))
	d.until("the whole queue's plan", func() bool { reqs, _ := acts.plans(); return len(reqs) == 2 })
	reqs, _ := acts.plans()
	if got := letterIDs(reqs[0].Letters); got != "ev-1,ev-3" {
		t.Errorf("r replays %q, want the group's held messages", got)
	}
	if reqs[1].Held != nil || reqs[1].FilterText != want {
		t.Errorf("ctrl+r plans %+v, want the whole queue filtered by %q", reqs[1], want)
	}
}

func TestEscAndGGoBackToTheList(t *testing.T) {
	for _, k := range []string{"esc", "g"} {
		t.Run(k, func(t *testing.T) {
			d := groupsDriver(t, groupLetters(), nil, nil)
			d.keys("g")
			if !strings.Contains(d.m.View(), "Failure groups") {
				t.Fatalf("no groups view:\n%s", d.m.View())
			}
			d.keys(k)
			if d.m.groups.open || d.m.HandlesEsc() || strings.Contains(d.m.View(), "Failure groups") {
				t.Fatalf("%s did not go back to the list:\n%s", k, d.m.View())
			}
			if d.m.held.filter != nil {
				t.Errorf("leaving the groups set the filter %q", d.m.held.filterSrc)
			}
		})
	}
}

func TestGroupsWithNoLettersSaySo(t *testing.T) {
	d := groupsDriver(t, nil, nil, nil)
	d.keys("g")
	if info := d.infoText(); !strings.Contains(info, "no failure groups to show: no messages of orders.dlq are held") {
		t.Errorf("info = %q", info)
	}
	if d.m.groups.open || strings.Contains(d.m.View(), "Failure groups") {
		t.Errorf("an empty groups view is drawn:\n%s", d.m.View())
	}
}

func TestHostileErrorsAreShownSanitised(t *testing.T) {
	evil := frameworkLetter(0, "ev-1", massTransit("Evil\x1b[31mType", "boom \x1b]52;c;ZXZpbA==\x07 \x1b[2J", "orders\x9b"), 1, 1)
	d := groupsDriver(t, []domain.DeadLetter{evil}, nil, nil)
	d.keys("g")
	v := d.m.View()
	for _, raw := range []string{"\x1b", "\x07", "\x9b"} {
		if strings.Contains(v, raw) {
			t.Fatalf("raw %q in the view: %q", raw, v)
		}
	}
	for _, want := range []string{`Evil\x1b[31mType`, `boom \x1b]<n>;c;ZXZpbA==\x07 \x1b[<n>J`, `orders\x9b`} {
		if !strings.Contains(v, want) {
			t.Errorf("the view lacks %q:\n%s", want, v)
		}
	}
}

func TestGroupsAfterAScanCountTheWholeQueue(t *testing.T) {
	st := wholeStats()
	st.Groups = domain.NewGroups(false)
	held := groupLetters()
	for i := 0; i < 40; i++ {
		f := held[0].Failure
		f.ErrorMessage = fmt.Sprintf("Order %d not found", 2000+i)
		st.Groups.Add(f, 7, "", "")
	}
	st.Groups.Add(massTransit("Db.DeadlockException", "deadlock on orders", "orders"), 1, "", "")
	sc := newScanner(st, nil)
	close(sc.release)
	d := groupsDriver(t, held, nil, sc)
	d.keys("S")
	d.until("the whole queue's figures", func() bool { return d.m.scan.show })
	d.keys("g")
	v := d.m.View()
	if !strings.Contains(v, "of all 1000 messages (scan at 03:00:00) · 4 groups") {
		t.Errorf("the heading does not say the groups count the whole queue:\n%s", v)
	}
	first, _ := d.m.groups.current()
	if first.ID != held[0].Group || first.Count != 42 || first.MinAttempts != 3 || first.MaxAttempts != 7 {
		t.Errorf("first group = %+v, want the 40 scanned and 2 held orders not found", first)
	}
	d.keys("enter")
	if info := d.infoText(); !strings.Contains(info, "42 messages in the queue, 2 held and selected; ctrl+r or ctrl+q acts on all 42") {
		t.Errorf("info = %q", info)
	}
	d.keys("g", "S")
	if v := d.m.View(); !strings.Contains(v, "of the 4 held messages · 3 groups") {
		t.Errorf("S does not turn the groups back to the held messages:\n%s", v)
	}
}

func TestTheGroupsFitTheScreen(t *testing.T) {
	many := make([]domain.DeadLetter, 60)
	for i := range many {
		f := massTransit(fmt.Sprintf("Orders.Handlers.Failure%02dException", i%30), fmt.Sprintf("failure %c happened while handling the order", 'a'+i%30), fmt.Sprintf("origin-queue-%d", i%9))
		many[i] = frameworkLetter(i, fmt.Sprintf("ev-%d", i), f, 1+i%5, i)
	}
	for _, size := range [][2]int{{120, 40}, {100, 30}, {80, 24}, {60, 20}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			d := groupsDriver(t, many, nil, nil)
			d.m.SetSize(size[0], size[1])
			d.keys("g", "end")
			v := d.m.View()
			lines := strings.Split(v, "\n")
			if len(lines) > size[1] {
				t.Errorf("%d lines for a height of %d:\n%s", len(lines), size[1], v)
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > size[0] {
					t.Errorf("line of width %d > %d: %q", w, size[0], l)
				}
			}
			if last := d.m.groups.list[len(d.m.groups.list)-1]; !strings.Contains(v, "> "+last.ID) {
				t.Errorf("the cursor is not on the last group %s:\n%s", last.ID, v)
			}
		})
	}
}

func TestGroupsAreCountedAgainWhenTheHeldMessagesChange(t *testing.T) {
	ls := groupLetters()
	s := newSession(ops.Page{Letters: ls})
	d := newDriver(t, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{s}}, Inbox: fakeInbox{}}, Options{})
	d.browsing(4)
	d.keys("g", "down")
	// The message screen above settled the expired message (an edit).
	s.release(ls[3:])
	d.send(common.HeldChangedMsg{Queue: ref})
	d.until("the held messages read again", func() bool { return len(d.m.held.letters) == 3 })
	if v := d.m.View(); !strings.Contains(v, "of the 3 held messages · 2 groups") {
		t.Errorf("the groups were not counted again:\n%s", v)
	}
	if g, _ := d.m.groups.current(); g.ID != ls[0].Group {
		t.Errorf("the cursor is on %s, want the orders not found it was on before", g.ID)
	}
}

// esc from the messages a group's enter listed goes back to the groups,
// on that group, with its filter and selection undone: not out of the
// DLQ screen, which would let the whole browse go.
func TestEscFromAGroupsMessagesGoesBackToTheGroups(t *testing.T) {
	d := groupsDriver(t, groupLetters(), nil, nil)
	d.keys("g", "down")
	second, _ := d.m.groups.current()
	d.keys("enter")
	if d.m.groups.open || !d.m.HandlesEsc() || len(selectedIDs(d.m)) == 0 {
		t.Fatalf("enter on a group: open %v, esc handled %v, selected %v", d.m.groups.open, d.m.HandlesEsc(), selectedIDs(d.m))
	}
	d.keys("esc")
	if g, _ := d.m.groups.current(); !d.m.groups.open || g.ID != second.ID {
		t.Fatalf("esc did not go back to the groups on the group listed (%s):\n%s", second.ID, d.m.View())
	}
	if d.m.held.filter != nil || len(selectedIDs(d.m)) != 0 {
		t.Errorf("back at the groups, the filter %q and selection %v stay", d.m.held.filterSrc, selectedIDs(d.m))
	}
	d.keys("esc")
	if d.m.groups.open || d.m.HandlesEsc() {
		t.Fatalf("the second esc did not close the groups, or esc would not leave the screen next")
	}

	// Once the operator filters otherwise, esc clears that filter, as
	// on the overview, rather than go back to the groups; then esc is
	// the screen's again.
	d.keys("g", "enter", "/")
	d.send(tea.KeyMsg{Type: tea.KeyCtrlU})
	d.keys(`reason == "rejected"`, "enter")
	if d.m.listingGroup() || !d.m.HandlesEsc() || !strings.Contains(helpOf(d.m), "esc clear the filter") {
		t.Fatalf("with a filter of the operator's own (%q): listing the group %v, esc handled %v, help %q",
			d.m.held.filterSrc, d.m.listingGroup(), d.m.HandlesEsc(), helpOf(d.m))
	}
	d.keys("esc")
	if d.m.groups.open || d.m.held.filterSrc != "" || d.m.HandlesEsc() {
		t.Fatalf("esc on a filter of the operator's own: groups open %v, filter %q, esc still handled %v", d.m.groups.open, d.m.held.filterSrc, d.m.HandlesEsc())
	}
}

// The row cuts a group's type and message; the selected group's are
// said whole under the table.
func TestTheSelectedGroupIsSaidWhole(t *testing.T) {
	d := groupsDriver(t, groupLetters(), nil, nil)
	d.m.SetSize(80, 30)
	d.keys("g")
	for range 3 {
		if g, _ := d.m.groups.current(); strings.Contains(g.Type, "Timeout") {
			break
		}
		d.keys("down")
	}
	v := strings.Join(strings.Fields(ansi.Strip(d.m.View())), " ")
	if !strings.Contains(v, "System.TimeoutException: The operation timed out after <n> ms") {
		t.Fatalf("the selected group is not said whole:\n%s", d.m.View())
	}
}

// The legend under the groups says what the columns on screen mean: an
// 80-column terminal drops the ages, and the legend says nothing of them.
func TestTheGroupsLegendNamesOnlyTheColumnsShown(t *testing.T) {
	for _, tc := range []struct {
		width int
		ages  bool
	}{{80, false}, {160, true}} {
		d := groupsDriver(t, groupLetters(), nil, nil)
		d.m.SetSize(tc.width, 40)
		d.keys("g")
		v := d.m.View()
		if got := strings.Contains(v, "FIRST and LAST: ages"); got != tc.ages {
			t.Errorf("at %d columns the legend names the ages: %v, want %v\n%s", tc.width, got, tc.ages, v)
		}
		if head := strings.Contains(v, "FIRST "); head != tc.ages {
			t.Errorf("at %d columns the table shows FIRST: %v, want %v", tc.width, head, tc.ages)
		}
	}
}
