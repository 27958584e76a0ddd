package cli

import (
	"encoding/json"
	"testing"

	"github.com/warrenops/warren/ops"
)

// A plan that does not run prints, with --json, what a run would count
// and where the messages would go, marked as a dry run when it is one.
func TestAPlanInJSONSaysWhereTheMessagesWouldGo(t *testing.T) {
	p := &ops.Plan{Action: ops.Import, Publish: 23, Operation: "imp-1",
		Destinations: []ops.Destination{{Name: "queue orders (default exchange)", Count: 33}}}
	b, err := json.Marshal(planJSON(p, true))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Operation    string `json:"operation"`
		Selected     int    `json:"selected"`
		DryRun       bool   `json:"dry_run"`
		Destinations []struct {
			Name  string `json:"name"`
			Count int    `json:"count"`
		} `json:"destinations"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Operation != "imp-1" || got.Selected != 23 || !got.DryRun || len(got.Destinations) != 1 ||
		got.Destinations[0].Name != "queue orders (default exchange)" || got.Destinations[0].Count != 33 {
		t.Fatalf("%s: want the operation it finishes, 23 to publish, a dry run, and the destination", b)
	}
	if b, _ := json.Marshal(planJSON(&ops.Plan{Action: ops.Replay}, false)); string(b) == "" || json.Unmarshal(b, &got) != nil || got.DryRun || got.Destinations == nil {
		t.Fatalf("%s: a plan with nothing to move is no dry run, and lists no destination as []", b)
	}
}
