package fetch_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"

	"github.com/trawl-crawler/trawl/fetch"
)

func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<title>hello</title>")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	f, err := fetch.New(fetch.Options{
		UserAgent: "trawl/0.1 (+https://example.org/bot)",
		Hosts:     map[string][]netip.Addr{"site.test": {netip.MustParseAddr("127.0.0.1")}},
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, // loopback is refused by default
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	u, _ := url.Parse(fmt.Sprintf("http://site.test:%d/", port))
	resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
	if err != nil {
		fmt.Println(fetch.ClassOf(err), err)
		return
	}
	fmt.Println(resp.Status, resp.MediaType, resp.IP, string(resp.Decoded))
	// Output: 200 text/html 127.0.0.1 <title>hello</title>
}
