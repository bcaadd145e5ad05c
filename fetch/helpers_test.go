package fetch

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testUA = "trawl-test/0.1 (+https://example.test/bot)"

var loopback = netip.MustParsePrefix("127.0.0.0/8")

// testOptions returns Options that allow loopback, as every test server
// listens there.
func testOptions() Options {
	return Options{UserAgent: testUA, AllowNets: []netip.Prefix{loopback}}
}

func newFetcher(t testing.TB, o Options) *Fetcher {
	t.Helper()
	f, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// server is an httptest server on loopback that counts accepted
// connections, so a test can prove that nothing was dialled.
type server struct {
	*httptest.Server
	conns atomic.Int64
}

func newServer(t testing.TB, h http.Handler) *server {
	t.Helper()
	s := &server{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// rawServer accepts connections on loopback, reads one request head from
// each and hands the connection to handle, then closes it. It records the
// request heads exactly as received, unless forget is set (a fuzz run's
// millions of requests).
type rawServer struct {
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	heads  []string
	forget atomic.Bool
}

func newRawServer(t testing.TB, handle func(c net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				var head strings.Builder
				for {
					line, err := br.ReadString('\n')
					head.WriteString(line)
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				if !s.forget.Load() {
					s.mu.Lock()
					s.heads = append(s.heads, head.String())
					s.mu.Unlock()
				}
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) URL() string { return "http://" + s.ln.Addr().String() }

func (s *rawServer) requestHeads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.heads...)
}

// replyRaw returns a raw handler writing resp verbatim.
func replyRaw(resp string) func(net.Conn) {
	return func(c net.Conn) { c.Write([]byte(resp)) }
}

func mustURL(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func get(t testing.TB, f *Fetcher, raw string) (*Response, error) {
	t.Helper()
	return f.Fetch(context.Background(), &Request{URL: mustURL(t, raw)})
}

// fakeResolver answers from a map and counts lookups.
type fakeResolver struct {
	addrs map[string][]netip.Addr
	calls atomic.Int64
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	if a, ok := r.addrs[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// fakeClock is a manually advanced clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
