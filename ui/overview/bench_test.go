package overview

import (
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/common"

	"cmp"
	"fmt"
	"slices"
	"testing"
)

// bigBroker is n queues over 20 vhosts, one in ten with a DLQ, in the
// API's order (vhost, then name), as a snapshot comes.
func bigBroker(n int) *domain.Snapshot {
	qs := make([]domain.Queue, 0, n)
	for i := range n {
		q := queue(fmt.Sprintf("tenant-%02d", i%20), fmt.Sprintf("service-%06d.events.queue", i), int64(i*7919%100000))
		if i%10 == 0 {
			q.DLQ, q.DLQMessages = &domain.QueueRef{Vhost: q.Vhost, Name: q.Name + ".dlq"}, int64(i%13)
		}
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b domain.Queue) int { return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Name, b.Name)) })
	return snapshot(qs...)
}

func loadedBig(b *testing.B, n int) (*Model, *domain.Snapshot) {
	snap := bigBroker(n)
	l := &lister{replies: []reply{{snap: snap}}}
	m := newModel(l)
	m.SetSize(120, 35)
	s, _ := m.Update(snapshotMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}, Snap: snap})
	return s.(*Model), snap
}

// BenchmarkOverviewView10k measures one frame of the overview at 10 000
// queues, scrolled to the middle.
func BenchmarkOverviewView10k(b *testing.B)  { benchView(b, 10000) }
func BenchmarkOverviewView100k(b *testing.B) { benchView(b, 100000) }

func benchView(b *testing.B, n int) {
	m, _ := loadedBig(b, n)
	m.tbl.SetCursor(n / 2)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkOverviewScroll100k measures a page-down and its frame at
// 100 000 queues.
func BenchmarkOverviewScroll100k(b *testing.B) {
	m, _ := loadedBig(b, 100000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2000 == 0 {
			m.tbl.SetCursor(0)
		}
		m.Update(press("pgdown"))
		_ = m.View()
	}
}

// BenchmarkOverviewUpdate10k measures applying a snapshot of 10 000 queues
// (rows, trends, filter and sort), the work of every refresh.
func BenchmarkOverviewUpdate10k(b *testing.B)  { benchUpdate(b, 10000) }
func BenchmarkOverviewUpdate100k(b *testing.B) { benchUpdate(b, 100000) }

func benchUpdate(b *testing.B, n int) {
	m, snap := loadedBig(b, n)
	msg := snapshotMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}, Snap: snap}
	b.ReportAllocs()
	for b.Loop() {
		m.Update(msg)
	}
}

// BenchmarkOverviewFilterKey10k measures one keystroke of the filter at
// 10 000 queues, and its frame.
func BenchmarkOverviewFilterKey10k(b *testing.B)  { benchFilterKey(b, 10000) }
func BenchmarkOverviewFilterKey100k(b *testing.B) { benchFilterKey(b, 100000) }

func benchFilterKey(b *testing.B, n int) {
	m, _ := loadedBig(b, n)
	m.Update(press("/"))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2 == 1 {
			m.Update(press("backspace"))
		} else {
			m.Update(press("5"))
		}
		_ = m.View()
	}
}
