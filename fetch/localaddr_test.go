package fetch

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLocalAddr: with LocalAddr set, the server sees every connection come
// from that address (a fleet member on its own loopback address); without
// it, from the system's pick (127.0.0.1 on loopback).
func TestLocalAddr(t *testing.T) {
	var from atomic.Value
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		from.Store(host)
		io.WriteString(w, "<html>hi</html>")
	}))
	for _, src := range []string{"127.0.0.13", ""} {
		o := testOptions()
		if src != "" {
			o.LocalAddr = netip.MustParseAddr(src)
		}
		f := newFetcher(t, o)
		if _, err := get(t, f, srv.URL+"/"); err != nil {
			t.Fatalf("LocalAddr %q: Fetch: %v", src, err)
		}
		want := src
		if want == "" {
			want = "127.0.0.1"
		}
		if got := from.Load(); got != want {
			t.Errorf("LocalAddr %q: the server saw the request from %v, want %s", src, got, want)
		}
	}
	for _, bad := range []string{"0.0.0.0", "224.0.0.1"} {
		o := testOptions()
		o.LocalAddr = netip.MustParseAddr(bad)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "LocalAddr") {
			t.Errorf("LocalAddr %s: Validate = %v, want an error naming LocalAddr", bad, err)
		}
	}
}
