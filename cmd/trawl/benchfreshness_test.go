package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchFreshnessJSON runs a tiny simulation and checks the JSON object
// has every policy's row with plausible figures.
func TestBenchFreshnessJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"bench", "freshness", "--pages", "300", "--days", "8", "--warmup", "3", "--last-modified", "0.5", "--lying", "0.2", "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("trawl bench freshness = %d\nstderr:\n%s", code, errb.String())
	}
	var r struct {
		Pages int `json:"pages"`
		Rows  []struct {
			Policy    string  `json:"policy"`
			Freshness float64 `json:"freshness"`
			Fetches   int     `json:"fetches"`
		} `json:"rows"`
		TrawlOverUniform float64 `json:"trawl_over_uniform"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out.String())
	}
	var names []string
	for _, x := range r.Rows {
		names = append(names, x.Policy)
		if x.Freshness <= 0 || x.Freshness > 1 || x.Fetches <= 0 {
			t.Errorf("row %+v", x)
		}
	}
	if got := strings.Join(names, ","); got != "uniform,nutch,trawl,trawl, true rates,trawl, Last-Modified" || r.Pages != 300 || r.TrawlOverUniform <= 0 {
		t.Errorf("pages %d, rows %q, trawl/uniform %v", r.Pages, got, r.TrawlOverUniform)
	}
}

func TestBenchFreshnessTableAndErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "freshness", "--pages", "200", "--days", "5", "--warmup", "2", "--mix", "churn"}, &out, &errb); code != 0 {
		t.Fatalf("trawl bench freshness = %d\nstderr:\n%s", code, errb.String())
	}
	for _, want := range []string{`200 pages, mix "churn"`, "uniform", "nutch", "trawl, true rates", "by class", "trawl / uniform freshness"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--pages", "0"}, "Pages = 0"},
		{[]string{"--mix", "nope", "--warmup", "90"}, `Mix = "nope"`},
		{[]string{"--warmup", "90"}, "Warmup = 90"},
		{[]string{"--nope"}, "-nope"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"bench", "freshness"}, tt.args...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("bench freshness %q = %d, stderr %q, want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}
