package fetch

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConditional fetches from loopback servers with stored validators and
// checks the conditional headers as they arrived and how the answer is
// reported.
func TestConditional(t *testing.T) {
	clock := newFakeClock() // 2025-01-02 03:04:05 UTC
	past := "Wed, 01 Jan 2025 00:00:00 GMT"
	future := "Fri, 03 Jan 2025 00:00:00 GMT" // after the clock
	const body = "<p>the page</p>"

	// honest answers 304 when If-None-Match matches etag (weak comparison,
	// as RFC 9110 asks for If-None-Match) or, without If-None-Match, when
	// If-Modified-Since is not before lastModified.
	honest := func(etag, lastModified string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if etag != "" {
				w.Header().Set("ETag", etag)
			}
			if lastModified != "" {
				w.Header().Set("Last-Modified", lastModified)
			}
			if inm := r.Header.Get("If-None-Match"); inm != "" {
				if strings.TrimPrefix(inm, "W/") == strings.TrimPrefix(etag, "W/") {
					w.WriteHeader(http.StatusNotModified)
					return
				}
			} else if ims := r.Header.Get("If-Modified-Since"); ims != "" {
				t1, err1 := http.ParseTime(ims)
				t2, err2 := http.ParseTime(lastModified)
				if err1 == nil && err2 == nil && !t2.After(t1) {
					w.WriteHeader(http.StatusNotModified)
					return
				}
			}
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(body))
		}
	}
	ignoring := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(body))
	}
	always304 := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotModified) }

	for _, tc := range []struct {
		name       string
		handler    http.HandlerFunc
		v          Validators
		wantINM    string // If-None-Match as received; "" for none
		wantIMS    string // If-Modified-Since as received; "" for none
		wantStatus int
		wantNotMod bool
		wantCond   bool
	}{
		{"strong ETag", honest(`"abc"`, ""), Validators{ETag: `"abc"`}, `"abc"`, "", 304, true, true},
		{"weak ETag sent verbatim", honest(`W/"abc"`, ""), Validators{ETag: `W/"abc"`}, `W/"abc"`, "", 304, true, true},
		{"Last-Modified only", honest("", past), Validators{LastModified: past}, "", past, 304, true, true},
		{"both", honest(`"abc"`, past), Validators{ETag: `"abc"`, LastModified: past}, `"abc"`, past, 304, true, true},
		{"changed ETag", honest(`"def"`, past), Validators{ETag: `"abc"`, LastModified: past}, `"abc"`, past, 200, false, true},
		{"server ignores validators", ignoring, Validators{ETag: `"v1"`, LastModified: past}, `"v1"`, past, 200, false, true},
		{"Last-Modified in the future not sent", honest("", future), Validators{LastModified: future}, "", "", 200, false, false},
		{"Last-Modified not a date not sent", honest("", past), Validators{LastModified: "yesterday"}, "", "", 200, false, false},
		{"ETag kept, bad Last-Modified dropped", honest(`"abc"`, past), Validators{ETag: `"abc"`, LastModified: "0"}, `"abc"`, "", 304, true, true},
		{"no validators", honest(`"abc"`, past), Validators{}, "", "", 200, false, false},
		{"304 to an unconditional request", always304, Validators{}, "", "", 304, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got http.Header
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = r.Header.Clone()
				mu.Unlock()
				tc.handler(w, r)
			}))
			o := testOptions()
			o.Now = clock.Now
			f := newFetcher(t, o)
			resp, err := f.Fetch(context.Background(), &Request{URL: mustURL(t, srv.URL+"/p"), Validators: tc.v})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if g := got.Get("If-None-Match"); g != tc.wantINM {
				t.Errorf("If-None-Match %q, want %q", g, tc.wantINM)
			}
			if g := got.Get("If-Modified-Since"); g != tc.wantIMS {
				t.Errorf("If-Modified-Since %q, want %q", g, tc.wantIMS)
			}
			if resp.Status != tc.wantStatus || resp.NotModified != tc.wantNotMod || resp.Conditional != tc.wantCond {
				t.Errorf("Status %d NotModified %v Conditional %v, want %d %v %v",
					resp.Status, resp.NotModified, resp.Conditional, tc.wantStatus, tc.wantNotMod, tc.wantCond)
			}
			wantBody := body
			if tc.wantStatus == 304 {
				wantBody = ""
			}
			if string(resp.Body) != wantBody {
				t.Errorf("Body %q, want %q", resp.Body, wantBody)
			}
			if tc.wantCond != strings.Contains(string(resp.RawRequest), "If-") {
				t.Errorf("RawRequest %q: conditional headers missing or extra", resp.RawRequest)
			}
			resp.Release()
		})
	}
}

// TestNotModifiedWithBody: a server that sends a body after a 304 gets
// none of it read; the response is bodiless and NotModified.
func TestNotModifiedWithBody(t *testing.T) {
	srv := newRawServer(t, replyRaw("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 11\r\nConnection: close\r\n\r\nhello world"))
	f := newFetcher(t, testOptions())
	resp, err := f.Fetch(context.Background(), &Request{URL: mustURL(t, srv.URL()+"/"), Validators: Validators{ETag: `"x"`}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Release()
	if !resp.NotModified || len(resp.Body) != 0 || resp.Truncated != "" {
		t.Errorf("NotModified %v, Body %q, Truncated %q; want true, empty, \"\"", resp.NotModified, resp.Body, resp.Truncated)
	}
	if heads := srv.requestHeads(); len(heads) != 1 || !strings.Contains(heads[0], "If-None-Match: \"x\"\r\n") {
		t.Errorf("request heads %q, want one with If-None-Match", heads)
	}
}

// TestValidatorsAndHeader: validators given twice are a request error;
// nothing is sent.
func TestValidatorsAndHeader(t *testing.T) {
	srv := newRawServer(t, func(net.Conn) {})
	f := newFetcher(t, testOptions())
	_, err := f.Fetch(context.Background(), &Request{
		URL:        mustURL(t, srv.URL()+"/"),
		Header:     http.Header{"if-modified-since": {"Wed, 01 Jan 2025 00:00:00 GMT"}},
		Validators: Validators{ETag: `"x"`},
	})
	if ClassOf(err) != ClassRequest {
		t.Errorf("error %v, want class %s", err, ClassRequest)
	}
	if n := len(srv.requestHeads()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

func TestValidatorsOf(t *testing.T) {
	h := http.Header{"Etag": {` W/"a" `}, "Last-Modified": {"Wed, 01 Jan 2025 00:00:00 GMT"}}
	if got, want := ValidatorsOf(h), (Validators{ETag: `W/"a"`, LastModified: "Wed, 01 Jan 2025 00:00:00 GMT"}); got != want {
		t.Errorf("ValidatorsOf = %+v, want %+v", got, want)
	}
	if v := ValidatorsOf(http.Header{}); !v.IsZero() || v.Conditional(time.Now()) != nil {
		t.Errorf("ValidatorsOf(empty) = %+v, want zero and no headers", v)
	}
}
