package dlq

import "testing"

// The window the budget allows follows the sizes seen: one while none
// was seen, at least one whatever their size, never more than a channel
// can hold.
func TestTheBudgetWindowFollowsTheSizesSeen(t *testing.T) {
	tests := []struct {
		seen   int
		bytes  int64
		budget int64
		want   int
	}{
		{0, 0, 64 << 20, 1},
		{6, 96 << 20, 64 << 20, 3},
		{1, 200 << 20, 64 << 20, 1},
		{1000, 200_000, 64 << 20, MaxHeld},
		{10, 1000, 500, 4},
	}
	for _, tt := range tests {
		s := &Session{o: Options{ByteBudget: tt.budget}, seen: tt.seen, bytes: tt.bytes}
		if got := s.budgetWindow(); got != tt.want {
			t.Errorf("%d seen, %d bytes, budget %d: window %d, want %d", tt.seen, tt.bytes, tt.budget, got, tt.want)
		}
	}
}
