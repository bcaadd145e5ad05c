package api

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/wacz"
)

func init() {
	// The OpenAPI file's binary answer, checked as a file.
	openapi3filter.RegisterBodyDecoder(wacz.MediaType, openapi3filter.FileBodyDecoder)
}

// getRaw sends GET path and returns the answer, checked against the
// OpenAPI file whatever its type.
func (c *apiClient) getRaw(path, token string) (*http.Response, []byte) {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.t.Fatalf("GET %s: not a route of the OpenAPI file: %v", path, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(got)), Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}); err != nil {
		c.t.Errorf("GET %s -> %d: the answer does not match the OpenAPI file: %v", path, resp.StatusCode, err)
	}
	return resp, got
}

// TestExportWACZ crawls a small web to its end and downloads the crawl as
// a WACZ: only its records are indexed, WARC files are stored; the route
// needs the token, and a crawl without captures or a server without a
// data directory answers 404.
func TestExportWACZ(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl to export; package wacz checks the format in -short")
	}
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 5, Hosts: 4}.SmallPages()), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	data := t.TempDir()
	n, err := node.Open(node.Options{DataDir: data, MinDelay: 2 * time.Millisecond, MaxAdaptiveDelay: 20 * time.Millisecond,
		Concurrency: 8, AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver(),
		WARCMaxSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	n.Start()
	domain := web.Web().Options().Domain
	j, err := n.Submit(job.Spec{Name: "small", Seeds: web.Seeds(), Domains: []string{domain}, MaxDepth: 3, RobotsGiveUp: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-j.Ended():
	case <-time.After(2 * time.Minute):
		t.Fatal("the crawl did not end in 2 minutes")
	}
	// A crawl whose only seed's host does not resolve: nothing archived.
	none, err := n.Submit(job.Spec{Name: "none", Seeds: []string{"http://nosuch." + domain + "/"}, Domains: []string{domain}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Options{Node: func() Node { return n }, Token: testToken, DataDir: data}))
	t.Cleanup(srv.Close)
	bare := httptest.NewServer(New(Options{Node: func() Node { return n }, Token: testToken}))
	t.Cleanup(bare.Close)
	c, cb := newAPIClient(t, srv.URL), newAPIClient(t, bare.URL)
	path := fmt.Sprintf("/v1/crawls/%d/wacz", j.ID)

	for _, tc := range []struct {
		name   string
		c      *apiClient
		path   string
		token  string
		status int
		says   string
	}{
		{"no token", c, path, "", http.StatusUnauthorized, "exporting a crawl's archive: it needs Authorization"},
		{"unknown crawl", c, "/v1/crawls/999/wacz", testToken, http.StatusNotFound, "no crawl 999"},
		{"no captures", c, fmt.Sprintf("/v1/crawls/%d/wacz", none.ID), testToken, http.StatusNotFound, "has no archived capture"},
		{"no data directory", cb, path, testToken, http.StatusNotFound, "given no data directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := tc.c.getRaw(tc.path, tc.token)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.says) {
				t.Errorf("GET %s = %d %s, want %d saying %q", tc.path, resp.StatusCode, body, tc.status, tc.says)
			}
		})
	}

	resp, body := c.getRaw(path, testToken)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != wacz.MediaType {
		t.Fatalf("GET %s = %d %s: %.200s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("the answer is no ZIP: %v", err)
	}
	records := map[string]bool{}
	err = crawllog.Scan(filepath.Join(data, "logs"), crawllog.Filter{Job: uint32(j.ID)}, func(e crawllog.Entry) error {
		records[e.WARC+"@"+strconv.FormatInt(e.Offset, 10)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	warcs, lines := 0, 0
	for _, f := range zr.File {
		switch {
		case strings.HasPrefix(f.Name, wacz.ArchiveDir):
			warcs++
			if f.Method != zip.Store {
				t.Errorf("%s: method %d, want Store", f.Name, f.Method)
			}
		case f.Name == wacz.IndexPath:
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			ls, err := cdxj.Read(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				if !records[l.Filename+"@"+strconv.FormatInt(l.Offset, 10)] {
					t.Errorf("index line of %s at %s@%d: no record of crawl %d", l.URL, l.Filename, l.Offset, j.ID)
				}
			}
			lines = len(ls)
		}
	}
	if warcs == 0 || lines == 0 {
		t.Errorf("the WACZ has %d WARC files and %d index lines, want some", warcs, lines)
	}
}
