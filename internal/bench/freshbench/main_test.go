package freshbench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// flagDefaults are trawl bench freshness's defaults.
func flagDefaults() Options {
	return Options{Config: Config{Pages: 10_000, Days: 60, Warmup: 14, Seed: 1, Mix: "web"}}
}

// TestBenchFreshnessJSON runs a tiny simulation and checks the JSON object
// has every policy's row with plausible figures.
func TestBenchFreshnessJSON(t *testing.T) {
	var out, errb bytes.Buffer
	o := flagDefaults()
	o.Pages, o.Days, o.Warmup, o.LastModified, o.Lying, o.JSON = 300, 8, 3, 0.5, 0.2, true
	code := Main(o, &out, &errb)
	if code != 0 {
		t.Fatalf("Main = %d\nstderr:\n%s", code, errb.String())
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
	if got := strings.Join(names, ","); got != "uniform,nutch,trawl,trawl, true rates,trawl, Last-Modified,trawl, no pooling" || r.Pages != 300 || r.TrawlOverUniform <= 0 {
		t.Errorf("pages %d, rows %q, trawl/uniform %v", r.Pages, got, r.TrawlOverUniform)
	}
}

func TestBenchFreshnessTableAndErrors(t *testing.T) {
	var out, errb bytes.Buffer
	o := flagDefaults()
	o.Pages, o.Days, o.Warmup, o.Mix = 200, 5, 2, "churn"
	if code := Main(o, &out, &errb); code != 0 {
		t.Fatalf("Main = %d\nstderr:\n%s", code, errb.String())
	}
	for _, want := range []string{`200 pages, mix "churn"`, "uniform", "nutch", "trawl, true rates", "by class", "trawl / uniform freshness"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	for _, tt := range []struct {
		flags string
		set   func(*Options)
		want  string
	}{
		{"--pages 0", func(o *Options) { o.Pages = 0 }, "Pages = 0"},
		{"--mix nope --warmup 90", func(o *Options) { o.Mix, o.Warmup = "nope", 90 }, `Mix = "nope"`},
		{"--warmup 90", func(o *Options) { o.Warmup = 90 }, "Warmup = 90"},
	} {
		var out, errb bytes.Buffer
		o := flagDefaults()
		tt.set(&o)
		code := Main(o, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("bench freshness %s = %d, stderr %q, want 2 and %q", tt.flags, code, errb.String(), tt.want)
		}
	}
}
