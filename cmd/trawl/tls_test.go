package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// TestCrawlTLSHosts crawls the synthetic web's TLS hosts with its CA
// trusted by --ca-file (node.Options.CACerts): the HTTPS and
// HTTP/2-only hosts' pages are fetched, each bad-certificate host ends in
// the certificate class.
func TestCrawlTLSHosts(t *testing.T) {
	web := testweb.Generate(testweb.Options{Seed: 4, Hosts: 2, BigHosts: -1, Latency: -1,
		MinPageBytes: 1000, MaxPageBytes: 2000, TLSKinds: testweb.AllTLSKinds()})
	srv, err := testweb.Serve(web, testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	var hosts strings.Builder
	var seeds []string
	bad := 0
	for _, h := range web.Hosts() {
		fmt.Fprintf(&hosts, "%s %s\n", h.IP, h.Name)
		if h.TLS != "" {
			seeds = append(seeds, fmt.Sprintf("https://%s:%d/", h.Name, srv.Port()))
			if strings.HasPrefix(h.TLS, "cert-") {
				bad++
			}
		}
	}
	hostsFile, caFile := filepath.Join(dir, "hosts"), filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(hostsFile, []byte(hosts.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, web.CACertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	var out, errb bytes.Buffer
	args := append([]string{"crawl", "--data", data, "--hosts", hostsFile, "--ca-file", caFile,
		"--allow-net", "127.0.0.0/8", "--min-delay", "10ms", "--robots-give-up", "2s", "--progress", "1h"}, seeds...)
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("trawl %q = %d\nstderr:\n%s", args, code, errb.String())
	}
	var sum struct {
		Pages  int64            `json:"pages"`
		Errors map[string]int64 `json:"errors"`
	}
	b, err := os.ReadFile(filepath.Join(data, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Pages != 6 { // three pages on each of the two good hosts
		t.Errorf("pages = %d, want 6 (https and h2-only: /, /p1.html, /p2.html)\n%s", sum.Pages, b)
	}
	if sum.Errors["certificate"] < int64(bad) {
		t.Errorf("errors = %v, want at least %d certificate failures (one per bad host)", sum.Errors, bad)
	}
	for class, n := range sum.Errors {
		// A bad host's robots.txt fails first; its pages are then
		// dropped as robots-unavailable when --robots-give-up passes.
		if class != "certificate" && class != "robots-unavailable" {
			t.Errorf("%d errors of class %q, want only certificate failures and their robots-unavailable", n, class)
		}
	}
	got := map[string]bool{}
	for _, r := range srv.Log() {
		if r.Status == 200 && r.Path != "/robots.txt" {
			got[r.Host+r.Path] = true
		}
	}
	for _, k := range []string{"https", "h2-only"} {
		for _, p := range []string{"/", "/p1.html", "/p2.html"} {
			if !got["tls-"+k+".trawl.test"+p] {
				t.Errorf("the web's log has no 200 for tls-%s.trawl.test%s", k, p)
			}
		}
	}
}
