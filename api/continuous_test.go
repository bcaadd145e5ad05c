package api

import (
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/job"
)

// TestContinuousCrawl creates a continuous crawl over a real node: bad
// recrawl settings get a 400 naming the field; the crawl shows its
// settings, waits for recrawls once every page is fetched (in its stats
// and in GET /v1/stats), carries the schedule's freshness figures once
// they exist, and stops waiting when cancelled. Every answer matches the
// OpenAPI file.
func TestContinuousCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("a continuous crawl through the API: the full suite runs it")
	}
	web, n, c := newNodeAPI(t)
	seed := web.Seeds()[0]
	for _, b := range []struct {
		name  string
		body  string
		field string
	}{
		{"recrawl without continuous", `{"seeds": ["` + seed + `"], "recrawl": {"min_s": 60}}`, "recrawl.min_s"},
		{"budget without continuous", `{"seeds": ["` + seed + `"], "continuous": false, "recrawl": {"budget_per_hour": 5}}`, "recrawl.budget_per_hour"},
		{"negative min", `{"seeds": ["` + seed + `"], "continuous": true, "recrawl": {"min_s": -1}}`, "recrawl.min_s"},
		{"max over a year", `{"seeds": ["` + seed + `"], "continuous": true, "recrawl": {"max_s": 4e7}}`, "recrawl.max_s"},
		{"negative budget", `{"seeds": ["` + seed + `"], "continuous": true, "recrawl": {"budget_per_hour": -3}}`, "recrawl.budget_per_hour"},
		{"min above max", `{"seeds": ["` + seed + `"], "continuous": true, "recrawl": {"min_s": 7200, "max_s": 3600}}`, "recrawl.min_s"},
		{"continuous not a boolean", `{"seeds": ["` + seed + `"], "continuous": "yes"}`, "continuous"},
		{"unknown schedule", `{"seeds": ["` + seed + `"], "continuous": true, "recrawl": {"schedule": "often"}}`, "recrawl.schedule"},
		{"nutch with a budget", `{"seeds": ["` + seed + `"], "continuous": true, "recrawl": {"schedule": "nutch", "budget_per_hour": 9}}`, "recrawl.budget_per_hour"},
		{"unknown recrawl field", `{"seeds": ["` + seed + `"], "continuous": true, "recrawl": {"every_s": 5}}`, "recrawl.every_s"},
	} {
		code, body := c.do("POST", "/v1/crawls", testToken, b.body, false)
		if field, msg := errField(body); code != 400 || field != b.field || msg == "" {
			t.Errorf("%s: POST /v1/crawls = %d, field %q, message %q; want 400 naming %q", b.name, code, field, msg, b.field)
		}
	}
	if jobs := n.Jobs(); len(jobs) != 0 {
		t.Fatalf("after bad requests the node has %d crawls, want 0", len(jobs))
	}

	req := map[string]any{"name": "fresh", "seeds": web.Seeds(), "scope": map[string]any{"domains": []string{web.Web().Options().Domain}},
		"continuous": true, "recrawl": map[string]any{"min_s": 7200, "max_s": 86400, "budget_per_hour": 120, "schedule": "freshness"}}
	code, body := c.do("POST", "/v1/crawls", testToken, req, true)
	id, _ := body["crawl_id"].(float64)
	if code != 202 || id < 1 {
		t.Fatalf("POST /v1/crawls (continuous) = %d %v", code, body)
	}
	path := "/v1/crawls/" + jsonNumber(id)
	_, body = c.do("GET", path, "", nil, true)
	rc, _ := body["recrawl"].(map[string]any)
	if body["continuous"] != true || rc["min_s"] != 7200.0 || rc["max_s"] != 86400.0 || rc["budget_per_hour"] != 120.0 || rc["schedule"] != "freshness" {
		t.Errorf("GET %s = %v, want continuous with its recrawl settings", path, body)
	}
	j := n.Job(job.ID(id))
	if s := j.Spec; !s.Continuous || s.RecrawlMin != 2*time.Hour || s.RecrawlMax != 24*time.Hour || s.RecrawlBudget != 120 || s.RecrawlSchedule != job.ScheduleFreshness {
		t.Errorf("the node's spec: continuous %v, %v, %v, %v", s.Continuous, s.RecrawlMin, s.RecrawlMax, s.RecrawlBudget)
	}

	deadline := time.Now().Add(time.Minute)
	for {
		_, body = c.do("GET", path+"/stats", "", nil, true)
		if body["waiting_for_recrawls"] == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the continuous crawl never waits for recrawls: %v", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if body["state"] != "running" || body["continuous"] != true || body["fetched"].(float64) == 0 || body["recrawls"] != 0.0 || body["freshness"] != nil {
		t.Errorf("stats of the waiting crawl = %v, want running, continuous, pages, 0 recrawls, no freshness yet", body)
	}

	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	j.Stats.SetFreshness(job.Freshness{At: at, Scheduled: 30, Due: 4, Overdue: 1, Freshness: 0.875, MeanAge: 90 * time.Second})
	j.Stats.Recrawls.Add(9)
	j.Stats.NotModified.Add(6)
	j.Stats.Changed.Add(2)
	_, body = c.do("GET", path+"/stats", "", nil, true)
	f, _ := body["freshness"].(map[string]any)
	if body["recrawls"] != 9.0 || body["not_modified"] != 6.0 || body["changed"] != 2.0 ||
		f["due"] != 4.0 || f["overdue"] != 1.0 || f["scheduled"] != 30.0 || f["freshness"] != 0.875 || f["mean_age_s"] != 90.0 || f["at"] != "2026-12-01T10:00:00Z" {
		t.Errorf("stats with recrawls and freshness = %v", body)
	}
	_, node := c.do("GET", "/v1/stats", "", nil, true)
	crawls, _ := node["crawls"].([]any)
	totals, _ := node["totals"].(map[string]any)
	if len(crawls) != 1 || totals["recrawls"] != 9.0 || totals["not_modified"] != 6.0 || totals["changed"] != 2.0 {
		t.Fatalf("GET /v1/stats = %v, want one crawl and the recrawl totals", node)
	}
	cr := crawls[0].(map[string]any)
	if cf, _ := cr["freshness"].(map[string]any); cr["continuous"] != true || cr["waiting_for_recrawls"] != true || cr["changed"] != 2.0 || cf["due"] != 4.0 {
		t.Errorf("GET /v1/stats's crawl = %v, want continuous, waiting, its recrawl counts and freshness", cr)
	}

	if code, _ := c.do("POST", path+"/cancel", testToken, nil, true); code != 200 {
		t.Fatalf("cancel = %d", code)
	}
	_, body = c.do("GET", path+"/stats", "", nil, true)
	if body["state"] != "cancelled" || body["waiting_for_recrawls"] != nil {
		t.Errorf("stats of the cancelled crawl = %v, want cancelled, not waiting", body)
	}
}
