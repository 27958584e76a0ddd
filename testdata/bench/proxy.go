package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// proxy stands between a management client and the broker and records,
// per request, the broker's time (from sending the request to the last
// byte of the answer) and the bytes it sent back (status line, headers
// and body as they came over the wire, gzip included). Measured this way,
// the proxy's own cost is in neither figure.
type proxy struct {
	URL string
	srv *http.Server
	rec *recorder
}

type exchange struct {
	path  string
	start time.Time
	took  time.Duration
	bytes int64
}

type recorder struct {
	mu   sync.Mutex
	seen []exchange
}

func (r *recorder) add(e exchange) {
	r.mu.Lock()
	r.seen = append(r.seen, e)
	r.mu.Unlock()
}

// take returns what was recorded since the last take.
func (r *recorder) take() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.seen
	r.seen = nil
	return out
}

// total sums the broker's time and bytes of a set of requests.
func total(es []exchange) (took time.Duration, bytes int64) {
	for _, e := range es {
		took += e.took
		bytes += e.bytes
	}
	return took, bytes
}

func newProxy(target string) (*proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rec := &recorder{}
	base := &http.Transport{
		Proxy:               nil,
		DisableCompression:  true, // pass the client's Accept-Encoding through untouched
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     time.Minute,
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &recording{base: base, rec: rec}
	p := &proxy{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: rp}, rec: rec}
	go func() {
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return p, nil
}

func (p *proxy) close() { _ = p.srv.Close() }

type recording struct {
	base http.RoundTripper
	rec  *recorder
}

func (t *recording) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	var head bytes.Buffer
	_ = resp.Header.Write(&head)
	resp.Body = &countingBody{rc: resp.Body, start: start, rec: t.rec,
		e: exchange{path: req.URL.Path, start: start, bytes: int64(len(resp.Proto) + len(resp.Status) + 4 + head.Len())}}
	return resp, nil
}

// countingBody records its exchange once the body is read to the end or
// closed.
type countingBody struct {
	rc    io.ReadCloser
	start time.Time
	rec   *recorder
	e     exchange
	once  sync.Once
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.e.bytes += int64(n)
	if err == io.EOF {
		b.done()
	}
	return n, err
}

func (b *countingBody) Close() error {
	b.done()
	return b.rc.Close()
}

func (b *countingBody) done() {
	b.once.Do(func() {
		b.e.took = time.Since(b.start)
		b.rec.add(b.e)
	})
}
