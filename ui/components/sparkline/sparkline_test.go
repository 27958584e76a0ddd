package sparkline

import (
	"slices"
	"testing"
)

func TestRenderScalesFromZeroToPeak(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
		width  int
		want   string
	}{
		{name: "empty pads", values: nil, width: 3, want: "   "},
		{name: "zeros stay at the bottom", values: []int64{0, 0}, width: 2, want: "▁▁"},
		{name: "peak reaches the top", values: []int64{0, 50, 100}, width: 3, want: "▁▄█"},
		{name: "small non-zero never looks empty", values: []int64{1, 1000}, width: 2, want: "▂█"},
		{name: "short series is right-aligned", values: []int64{7}, width: 3, want: "  █"},
		{name: "long series keeps the newest", values: []int64{100, 0, 0, 100}, width: 2, want: "▁█"},
		{name: "zero width draws nothing", values: []int64{1}, width: 0, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.values, tt.width); got != tt.want {
				t.Fatalf("Render(%v, %d) = %q, want %q", tt.values, tt.width, got, tt.want)
			}
		})
	}
}

func TestHistoryKeepsTheNewestSamplesInOrder(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		pushes []int64
		want   []int64
	}{
		{name: "empty", size: 3, pushes: nil, want: []int64{}},
		{name: "partly filled", size: 3, pushes: []int64{1, 2}, want: []int64{1, 2}},
		{name: "wrapped drops the oldest", size: 3, pushes: []int64{1, 2, 3, 4, 5}, want: []int64{3, 4, 5}},
		{name: "flat", size: 3, pushes: []int64{7, 7, 7, 7}, want: []int64{7, 7, 7}},
		{name: "flat then a change", size: 4, pushes: []int64{7, 7, 9}, want: []int64{7, 7, 9}},
		{name: "flat and full then a change", size: 3, pushes: []int64{7, 7, 7, 7, 9, 0}, want: []int64{7, 9, 0}},
		{name: "flat zero", size: 2, pushes: []int64{0, 0, 0}, want: []int64{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistory[int64](tt.size)
			for _, v := range tt.pushes {
				h.Push(v)
			}
			if got := h.Values(); !slices.Equal(got, tt.want) {
				t.Fatalf("Values() = %v, want %v", got, tt.want)
			}
			for i := range tt.want {
				got, ok := h.Last(i)
				if !ok || got != tt.want[len(tt.want)-1-i] {
					t.Fatalf("Last(%d) = %v, %v", i, got, ok)
				}
			}
			if _, ok := h.Last(len(tt.want)); ok {
				t.Fatalf("Last(%d) should be out of range", len(tt.want))
			}
		})
	}
}
