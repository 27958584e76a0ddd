package demo

import (
	"fmt"
	mrand "math/rand/v2"
	"time"
)

// Rates of the live scene: tens of messages a second in all.
const (
	gatewayEvery   = 250 * time.Millisecond  // order gateway, confirm mode: 4/s
	gatewayWindow  = 8                       // confirms it lets run ahead
	poisonOneIn    = 40                      // about one order in 40 is poison
	shippingPeers  = 3                       // slow consumers on shipping
	shippingPrefch = 20                      // each holds up to this many
	shippingAckGap = 1200 * time.Millisecond // per consumer: about 0.8/s
	shippingReady  = 100                     // ready messages the feeder keeps
	emailPublish   = 150 * time.Millisecond  // about 6.7/s in
	emailAck       = 250 * time.Millisecond  // 4/s out: grows about 2.7/s
	reindexPublish = 333 * time.Millisecond  // about 3/s in
	reindexAck     = 66 * time.Millisecond   // about 15/s out: drains about 12/s
	reindexRefill  = 20                      // below this, a new batch arrives
	reindexBatchN  = 900
)

func shipment(at time.Time) outgoing {
	return liveMessage(qShipping, "fulfilment", "shipment.requested", fmt.Sprintf("SHP-%06d", mrand.IntN(1000000)), at)
}

func email(at time.Time) outgoing {
	return liveMessage(qEmail, "notifications-api", "email.send", fmt.Sprintf("TPL-order-confirmation-%04d", mrand.IntN(10000)), at)
}

func reindexBatch(at time.Time) []outgoing {
	out := make([]outgoing, 0, reindexBatchN)
	for i := range reindexBatchN {
		out = append(out, liveMessage(qReindex, "catalog", "product.reindex", fmt.Sprintf("SKU-%05d", i), at))
	}
	return out
}

// liveOrder is what the gateway publishes while Run goes on: mostly good
// orders, a third from the flaky warehouse, now and then a poison one.
func liveOrder(now time.Time) outgoing {
	poison := ""
	if mrand.IntN(poisonOneIn) == 0 {
		poison = []string{"currency", "items", "amount"}[mrand.IntN(3)]
	}
	r := mrand.New(mrand.NewPCG(mrand.Uint64(), mrand.Uint64()))
	o := newOrder(r, randomID(), 500000+mrand.IntN(400000), now, poison)
	return outgoing{exchange: xOrders, key: rkPlaced, pub: orderMessage(o, randomID(), now), eventID: o.EventID}
}
