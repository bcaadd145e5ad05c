package freshlive

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/job"
)

// TestBothSchedulesJudged runs a short live benchmark on a small web and
// checks what it reports: a row per schedule, each crawl polite by its
// web's log, every page of both copies judged, a budget spent and figures
// in range, and the table and JSON forms.
func TestBothSchedulesJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: twenty seconds of live crawls; the full suite runs it")
	}
	t.Parallel()
	c := Config{Duration: 20 * time.Second, Hosts: 6, ChangeMin: 2 * time.Second, ChangeMax: 40 * time.Second,
		Gap: 100 * time.Millisecond, RecrawlMin: time.Second, RecrawlMax: 8 * time.Second}
	var out, errb bytes.Buffer
	code := Main(Options{Config: c, JSON: true}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	var r Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 2 || r.Rows[0].Schedule != job.ScheduleFreshness || r.Rows[1].Schedule != job.ScheduleNutch {
		t.Fatalf("rows %+v: want freshness and nutch", r.Rows)
	}
	for _, x := range r.Rows {
		if x.Pages != r.Rows[0].Pages || x.Pages < 50 {
			t.Errorf("%s: %d pages judged (freshness %d): want the same web, all of it", x.Schedule, x.Pages, r.Rows[0].Pages)
		}
		if x.Fetches == 0 || x.Budget <= 0 || x.NotModified == 0 || x.BytesSaved <= 0 {
			t.Errorf("%s: %d fetches, budget %.0f/h, %d 304s saving %d bytes: want recrawls, some conditional", x.Schedule, x.Fetches, x.Budget, x.NotModified, x.BytesSaved)
		}
		if !(x.Uniform > 0 && x.Optimum > x.Uniform && x.Optimum <= 1 && x.Freshness > 0 && x.Freshness <= 1) {
			t.Errorf("%s: freshness %.3f, uniform %.3f, optimum %.3f: want 0 < uniform < optimum <= 1", x.Schedule, x.Freshness, x.Uniform, x.Optimum)
		}
		if x.PeakSecond < 1 || x.MeanSecond <= 0 {
			t.Errorf("%s: peak second %d, mean %.1f", x.Schedule, x.PeakSecond, x.MeanSecond)
		}
		fetches := 0
		for _, cl := range x.Classes {
			fetches += cl.Fetches
		}
		if fetches != x.Fetches {
			t.Errorf("%s: the classes hold %d fetches, the row %d", x.Schedule, fetches, x.Fetches)
		}
	}
	var table bytes.Buffer
	Print(&table, Result{Config: c.withDefaults(), Rows: r.Rows})
	for _, want := range []string{"gap share", "freshness", "nutch", "peak/mean"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
	t.Logf("\n%s", table.String())
}

func TestConfigValidate(t *testing.T) {
	err := Config{Duration: -time.Second, Never: 101, Budget: -1, Schedules: []string{"often"}, RecrawlMin: time.Hour, RecrawlMax: time.Minute}.Validate()
	for _, want := range []string{"--duration -1s", "--never 101", "--budget -1", "--schedules often", "--recrawl-min 1h0m0s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v: want it to name %q", err, want)
		}
	}
	// Against the defaults of the fields left out: a judged part longer
	// than the default 10 minutes, a shortest interval above the default
	// longest.
	err = Config{Judged: 15 * time.Minute, RecrawlMin: 5 * time.Minute, ChangeMin: time.Hour}.Validate()
	for _, want := range []string{"--judged 15m0s", "--recrawl-min 5m0s", "--change-min 1h0m0s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v: want it to name %q", err, want)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("the zero Config: %v", err)
	}
	var out, errb bytes.Buffer
	if code := Main(Options{Config: Config{Hosts: -1}}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--hosts -1") {
		t.Errorf("Main with --hosts -1: exit %d, %q; want 2 naming the flag", code, errb.String())
	}
}
