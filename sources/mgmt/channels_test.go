package mgmt

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
)

// fakeAPI answers GET paths with canned JSON and records the queries.
func fakeAPI(t *testing.T, answers map[string]string) (*Client, *[]string) {
	t.Helper()
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.EscapedPath()+"?"+r.URL.RawQuery)
		body, ok := answers[r.URL.EscapedPath()]
		if !ok {
			http.Error(w, `{"error":"Object Not Found","reason":"Not Found"}`, http.StatusNotFound)
			return
		}
		if strings.HasPrefix(body, "400 ") {
			w.WriteHeader(http.StatusBadRequest)
			body = body[4:]
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{URL: srv.URL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	return c, &asked
}

const channelsJSON = `[
 {"name":"10.0.0.5:40001 -> 10.0.0.1:5672 (1)","number":1,"user":"svc-consumer","vhost":"shop",
  "confirm":false,"messages_unconfirmed":0,"messages_unacknowledged":20,"prefetch_count":20,
  "global_prefetch_count":0,"consumer_count":1,"connection_details":{"name":"10.0.0.5:40001 -> 10.0.0.1:5672"},
  "message_stats":{"ack":500,"ack_details":{"rate":4.2},"confirm":0,"confirm_details":{"rate":0.0}}},
 {"name":"10.0.0.7:40100 -> 10.0.0.1:5672 (1)","number":1,"user":"svc-gateway","vhost":"shop",
  "confirm":true,"messages_unconfirmed":37,"messages_unacknowledged":0,"prefetch_count":0,
  "global_prefetch_count":0,"consumer_count":0,"connection_details":{"name":"10.0.0.7:40100 -> 10.0.0.1:5672"},
  "message_stats":{"publish":900,"publish_details":{"rate":12.5},"confirm":863,"confirm_details":{"rate":11.0}}},
 {"name":"10.0.0.8:40200 -> 10.0.0.1:5672 (3)","number":3,"user":"svc-import","vhost":"shop",
  "confirm":true,"connection_details":[]},
 {"name":"10.0.0.9:40300 -> 10.0.0.1:5672 (2)","number":2,"user":"svc-batch","vhost":"shop",
  "confirm":true,"messages_unconfirmed":4,"connection_details":{"name":"batch"},
  "message_stats":{"publish":10}}
]`

func TestChannelsKeepWhatTheBrokerLeftOutUnknown(t *testing.T) {
	c, asked := fakeAPI(t, map[string]string{
		"/api/vhosts/shop/channels": channelsJSON,
		"/api/vhosts/shop/connections": `[{"name":"10.0.0.7:40100 -> 10.0.0.1:5672","user_provided_name":"order-gateway","state":"blocked"},
			{"name":"10.0.0.5:40001 -> 10.0.0.1:5672","state":"running"}]`,
	})
	l, err := c.Channels(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range *asked {
		if !strings.Contains(a, "columns=") {
			t.Errorf("asked %s, want only the shown columns", a)
		}
	}
	var names []string
	for _, ch := range l.Channels {
		names = append(names, ch.Connection)
	}
	// The largest backlog first (its order of magnitude), then by
	// channel name; the channel whose count is unknown last. A connection
	// is named as its client named it, else by its addresses.
	if got := strings.Join(names, ","); got != "order-gateway,10.0.0.5:40001 -> 10.0.0.1:5672,batch," {
		t.Fatalf("order %q, want order-gateway (37), the worker's addresses (0) and batch (4) by channel name, then the unknown one", got)
	}
	gw := l.Channels[0]
	if gw.Confirm == nil || !*gw.Confirm || *gw.Unconfirmed != 37 || *gw.PublishRate != 12.5 || *gw.ConfirmRate != 11 || gw.AckRate != nil {
		t.Errorf("gateway decoded as %+v", gw)
	}
	if gw.User != "svc-gateway" || gw.Vhost != "shop" || *gw.Prefetch != 0 || *gw.Consumers != 0 {
		t.Errorf("gateway identity or prefetch: %+v", gw)
	}
	// The connection's state comes from the connections' list: a
	// resource alarm blocks the gateway's.
	if !gw.Blocked() || gw.HeldBack() == "" {
		t.Errorf("the gateway's connection is blocked: %+v", gw)
	}
	batch := l.Channels[2]
	if batch.PublishRate != nil || batch.ConfirmRate != nil || batch.Unacked != nil || batch.Prefetch != nil {
		t.Errorf("a rate or figure the broker left out must be nil, not 0: %+v", batch)
	}
	unknown := l.Channels[3]
	if unknown.Unconfirmed != nil || unknown.Pending() != 0 || unknown.Connection != "" || unknown.Unacked != nil {
		t.Errorf("closing channel: %+v", unknown)
	}
	worker := l.Channels[1]
	if *worker.AckRate != 4.2 || *worker.Unacked != 20 || *worker.Prefetch != 20 || worker.Pending() != 0 {
		t.Errorf("consumer channel: %+v", worker)
	}
	if worker.ConnectionState != "running" || worker.HeldBack() != "" {
		t.Errorf("a running connection is held back: %+v", worker)
	}
	if worker.ConfirmRate != nil {
		t.Errorf("a channel not in confirm mode has a confirm rate of %v, want none (the broker's 0 is no figure)", *worker.ConfirmRate)
	}
	if n, chs := l.Confirms(); n != 41 || chs != 2 {
		t.Errorf("Confirms() = %d on %d channels, want 41 on 2", n, chs)
	}
}

func TestChannelsWithoutStatisticsGiveANote(t *testing.T) {
	c, _ := fakeAPI(t, map[string]string{
		"/api/channels":    `400 {"error":"bad_request","reason":"Stats in management UI are disabled on this node"}`,
		"/api/connections": `[]`,
	})
	l, err := c.Channels(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Channels) != 0 || !strings.Contains(l.Note, "collects no channel statistics") || !strings.Contains(l.Note, "disabled on this node") {
		t.Errorf("list %+v", l)
	}
	if n, chs := l.Confirms(); n != 0 || chs != 0 {
		t.Errorf("Confirms() = %d, %d", n, chs)
	}
}

func TestPublishersNeedDetailedRates(t *testing.T) {
	c, asked := fakeAPI(t, nil)
	pubs, note, err := c.publishersOf(context.Background(), domain.QueueRef{Vhost: "shop", Name: "orders"}, "basic")
	if err != nil || pubs != nil || len(*asked) != 0 {
		t.Fatalf("basic rates: %v %v, asked %v; want nothing read", pubs, err, *asked)
	}
	if note != domain.NoPublisherLinks {
		t.Errorf("note %q", note)
	}
}

func TestPublishersAreReadFromTheQueuesExchanges(t *testing.T) {
	c, _ := fakeAPI(t, map[string]string{
		"/api/queues/shop/orders/bindings": `[{"source":"","vhost":"shop","destination":"orders","destination_type":"queue","routing_key":"orders"},
			{"source":"orders-x","vhost":"shop","destination":"orders","destination_type":"queue","routing_key":"order.*"},
			{"source":"orders-x","vhost":"shop","destination":"orders","destination_type":"queue","routing_key":"order.created"}]`,
		"/api/exchanges/shop/amq.default": `{"name":"","incoming":[]}`,
		"/api/exchanges/shop/orders-x": `{"name":"orders-x","incoming":[
			{"stats":{"publish":40,"publish_details":{"rate":2.0}},"channel_details":{"name":"a (1)","connection_name":"order-gateway","user":"svc-gateway"}},
			{"stats":{"publish":400,"publish_details":{"rate":9.5}},"channel_details":{"name":"b (2)","connection_name":"importer","user":"svc-import"}},
			{"stats":{"publish":1},"channel_details":[]}]}`,
	})
	pubs, note, err := c.publishersOf(context.Background(), domain.QueueRef{Vhost: "shop", Name: "orders"}, "detailed")
	if err != nil || note != "" {
		t.Fatal(err, note)
	}
	if len(pubs) != 2 || pubs[0].Connection != "importer" || pubs[1].Channel != "a (1)" || pubs[0].Exchange != "orders-x" || *pubs[0].PublishRate != 9.5 {
		t.Fatalf("publishers %+v, want importer then order-gateway on orders-x, the closed channel left out", pubs)
	}
}
