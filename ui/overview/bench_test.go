package overview

import (
	"github.com/warrenops/warren/ui/common"

	"fmt"
	"testing"

	"github.com/warrenops/warren/sources/mgmt"
)

// bigBroker is 10 000 queues over 20 vhosts, one in ten with a DLQ.
func bigBroker() *mgmt.Snapshot {
	qs := make([]mgmt.Queue, 0, 10000)
	for i := range 10000 {
		q := queue(fmt.Sprintf("tenant-%02d", i%20), fmt.Sprintf("service-%04d.events.queue", i), int64(i*7919%100000))
		if i%10 == 0 {
			q.DLQ, q.DLQMessages = &mgmt.QueueRef{Vhost: q.Vhost, Name: q.Name + ".dlq"}, int64(i%13)
		}
		qs = append(qs, q)
	}
	return snapshot(qs...)
}

func loadedBig(b *testing.B) (*Model, *mgmt.Snapshot) {
	snap := bigBroker()
	l := &lister{replies: []reply{{snap: snap}}}
	m := newModel(l)
	m.SetSize(120, 35)
	s, _ := m.Update(snapshotMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}, Snap: snap})
	return s.(*Model), snap
}

// BenchmarkOverviewView10k measures one frame of the overview at 10 000
// queues, scrolled to the middle.
func BenchmarkOverviewView10k(b *testing.B) {
	m, _ := loadedBig(b)
	m.tbl.SetCursor(5000)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkOverviewUpdate10k measures applying a snapshot of 10 000 queues
// (rows, trends, filter and sort), the work of every refresh.
func BenchmarkOverviewUpdate10k(b *testing.B) {
	m, snap := loadedBig(b)
	msg := snapshotMsg{Stamp: common.Stamp{ID: m.id, Tag: m.tag}, Snap: snap}
	b.ReportAllocs()
	for b.Loop() {
		m.Update(msg)
	}
}

// BenchmarkOverviewFilterKey10k measures one keystroke of the filter at
// 10 000 queues.
func BenchmarkOverviewFilterKey10k(b *testing.B) {
	m, _ := loadedBig(b)
	m.Update(press("/"))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2 == 1 {
			m.Update(press("backspace"))
			continue
		}
		m.Update(press("5"))
	}
}
