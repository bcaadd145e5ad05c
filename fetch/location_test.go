package fetch

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"
)

// TestUnparsableLocation: a 3xx whose Location net/url cannot parse is
// returned like any other response, its body read and its Location as
// sent, for the caller to judge. (An http.Client failed the fetch with a
// protocol error before any CheckRedirect, losing the response.)
func TestUnparsableLocation(t *testing.T) {
	for _, tc := range []struct {
		status int
		loc    string
	}{
		{http.StatusFound, "http://[::1"},
		{http.StatusMovedPermanently, "http://a b/%zz"},
		{http.StatusTemporaryRedirect, "/%zz"},
		{http.StatusSeeOther, "http://%zz/"},
	} {
		if _, err := url.Parse(tc.loc); err == nil {
			t.Fatalf("%q parses: not a test of an unparsable Location", tc.loc)
		}
		body := []byte("<html><body>moved</body></html>")
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Location", tc.loc)
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(tc.status)
			w.Write(body)
		}))
		f := newFetcher(t, testOptions())
		resp, err := get(t, f, srv.URL+"/from")
		if err != nil {
			t.Errorf("Location %q: Fetch: %v; want the %d returned", tc.loc, err, tc.status)
			continue
		}
		if resp.Status != tc.status || resp.Location != tc.loc || !bytes.Equal(resp.Decoded, body) ||
			!bytes.Contains(resp.RawResponseHeader, []byte("\r\nLocation: "+tc.loc+"\r\n")) {
			t.Errorf("Location %q: status %d, Location %q, body %q, head %q; want %d, the value as sent and the body",
				tc.loc, resp.Status, resp.Location, resp.Decoded, resp.RawResponseHeader, tc.status)
		}
		resp.Release()
		// The connection is reused: the body was read to its end.
		if resp, err := get(t, f, srv.URL+"/again"); err != nil || resp.Status != tc.status {
			t.Errorf("Location %q: second fetch: %v", tc.loc, err)
		}
		if n := srv.conns.Load(); n != 1 {
			t.Errorf("Location %q: %d connections for two fetches, want 1", tc.loc, n)
		}
	}
}
