package apiclient

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// TestContinuousCrawl creates a continuous crawl through the client: its
// recrawl settings go through, the crawl and its stats decode strictly
// (freshness included), it waits for recrawls once every page is fetched,
// and the API's refusals of bad settings name the field.
func TestContinuousCrawl(t *testing.T) {
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 5, Hosts: 4, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 30 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start()
	srv := httptest.NewServer(api.New(api.Options{Node: func() api.Node { return n }, Token: testToken}))
	defer srv.Close()
	ctx := context.Background()
	c, err := New(Options{Server: srv.URL, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		req   CrawlRequest
		field string
	}{
		{"recrawl without continuous", CrawlRequest{Seeds: web.Seeds(), Recrawl: Recrawl{MinS: 60}}, "recrawl.min_s"},
		{"min above max", CrawlRequest{Seeds: web.Seeds(), Continuous: true, Recrawl: Recrawl{MinS: 600, MaxS: 60}}, "recrawl.min_s"},
		{"negative budget", CrawlRequest{Seeds: web.Seeds(), Continuous: true, Recrawl: Recrawl{BudgetPerHour: -1}}, "recrawl.budget_per_hour"},
	} {
		_, err := c.CreateCrawl(ctx, tc.req)
		if e := (*Error)(nil); !errors.As(err, &e) || e.Status != 400 || e.Field != tc.field {
			t.Errorf("%s: CreateCrawl err = %v, want a 400 naming %q", tc.name, err, tc.field)
		}
	}

	created, err := c.CreateCrawl(ctx, CrawlRequest{Seeds: web.Seeds(), Scope: Scope{Domains: []string{web.Web().Options().Domain}},
		Continuous: true, Recrawl: Recrawl{MinS: 1800, BudgetPerHour: 60}})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := c.Crawl(ctx, created.CrawlID)
	if err != nil || !cr.Continuous || cr.Recrawl == nil || *cr.Recrawl != (Recrawl{MinS: 1800, BudgetPerHour: 60}) {
		t.Fatalf("Crawl = %+v (recrawl %+v), %v; want continuous with the settings sent", cr, cr.Recrawl, err)
	}
	strict[Crawl](t, "Crawl (continuous)", cr.Raw)

	var st Stats
	for deadline := time.Now().Add(time.Minute); !st.WaitingForRecrawls; time.Sleep(20 * time.Millisecond) {
		if st, err = c.Stats(ctx, created.CrawlID); err != nil || time.Now().After(deadline) {
			t.Fatalf("Stats = %+v, %v; want the crawl waiting for recrawls", st, err)
		}
	}
	if st.State != "running" || !st.Continuous || st.Fetched == 0 || st.Freshness != nil {
		t.Errorf("Stats of the waiting crawl = %+v, want running, continuous, pages, no freshness yet", st)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	j := n.Job(job.ID(created.CrawlID))
	j.Stats.SetFreshness(job.Freshness{At: at, Scheduled: 20, Due: 3, Overdue: 1, Freshness: 0.75, MeanAge: time.Hour})
	j.Stats.Recrawls.Add(5)
	j.Stats.NotModified.Add(3)
	j.Stats.Changed.Add(1)
	st, err = c.Stats(ctx, created.CrawlID)
	want := Freshness{At: at, Scheduled: 20, Due: 3, Overdue: 1, Freshness: 0.75, MeanAgeS: 3600}
	if err != nil || st.Recrawls != 5 || st.NotModified != 3 || st.Changed != 1 || st.Freshness == nil || *st.Freshness != want {
		t.Errorf("Stats = %+v (freshness %+v), %v; want 5/3/1 and %+v", st, st.Freshness, err, want)
	}
	strict[Stats](t, "Stats (continuous, with freshness)", st.Raw)
}
