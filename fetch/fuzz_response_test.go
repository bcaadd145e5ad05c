package fetch

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// fuzzMaxBody is FuzzResponse's body cap: small, so that a run spends its
// time on framing, not on copying.
const fuzzMaxBody = 64 << 10

// FuzzResponse serves the fuzzer's bytes, verbatim, as the whole answer
// of a real loopback server to the real fetcher (the server reads the
// request head, writes the bytes and closes the connection): whatever a
// server sends, a fetch ends with a response within its caps or an error
// of a named class, and never panics or hangs.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nx",
		"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
		"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.0 200\r\n\r\n<html><a href=/x>",
		"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\xff\r\n\r\n",
		"garbage\r\n\r\n",
		"",
	} {
		f.Add([]byte(s))
	}
	var answer atomic.Pointer[[]byte]
	srv := newRawServer(f, func(c net.Conn) {
		if a := answer.Load(); a != nil {
			c.Write(*a)
		}
	})
	srv.forget.Store(true)
	fetcher, err := New(Options{UserAgent: testUA, AllowNets: []netip.Prefix{loopback},
		FirstByteTimeout: 2 * time.Second, TotalTimeout: 3 * time.Second, MaxBodyBytes: fuzzMaxBody})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(fetcher.Close)
	u := mustURL(f, srv.URL()+"/page")
	f.Fuzz(func(t *testing.T, raw []byte) {
		answer.Store(&raw)
		start := time.Now()
		resp, err := fetcher.Fetch(context.Background(), &Request{URL: u})
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("fetch took %v, past its 3 s total time-out", d)
		}
		if err != nil {
			if ClassOf(err) == "" {
				t.Fatalf("error of no class: %v", err)
			}
			return
		}
		defer resp.Release()
		if int64(len(resp.Body)) > fuzzMaxBody {
			t.Fatalf("body of %d bytes past the %d cap", len(resp.Body), fuzzMaxBody)
		}
		if resp.Status < 100 || resp.Status > 599 {
			t.Fatalf("status %d", resp.Status)
		}
	})
}
