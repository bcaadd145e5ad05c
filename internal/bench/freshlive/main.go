package freshlive

import (
	"encoding/json"
	"fmt"
	"io"
)

// Help is `trawl bench freshness-live --help`'s text before the flags.
const Help = `usage: trawl bench freshness-live [flags]

Crawls a changing synthetic web on loopback with each recrawl schedule
(trawl's freshness schedule and Nutch's adaptive one), side by side, each
on its own copy of the same web, and judges each by the web's own page
versions over the end of the run: freshness, mean age, fetches, 304s and
bytes they saved, against uniform recrawl and the optimum for the web's
true rates at the budget each spent (the gap share), and the peak second
of fetches against the mean. Takes --duration (10 minutes by default).

With --simulate N, the crawls are simulated instead, for N seeds from
--seed, in seconds: the schedules' own decisions over a web of the same
shape, without HTTP, the node's levelled feed or lying validators (a
model for trying a change before crawling; the live run is the measure).

Examples:
  trawl bench freshness-live
  trawl bench freshness-live --duration 3m --hosts 10 --json
  trawl bench freshness-live --simulate 20`

// Options are `trawl bench freshness-live`'s flags.
type Options struct {
	Config
	JSON bool // one JSON Result instead of a table
	// Simulate, if positive, simulates the crawls for this many seeds
	// (Simulate) instead of running them.
	Simulate int
}

// Main runs the benchmark, writes its Result to stdout as a table or one
// JSON object, and returns the exit code: 2 for a bad Config, 1 for a
// failure or a crawl whose web's log shows a politeness problem.
func Main(o Options, stdout, stderr io.Writer) int {
	if err := o.Config.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl bench freshness-live: %v\n", err)
		return 2
	}
	if o.Simulate < 0 {
		fmt.Fprintf(stderr, "trawl bench freshness-live: --simulate %d: want a number of seeds (0: crawl live)\n", o.Simulate)
		return 2
	}
	if o.Simulate > 0 {
		return simulateMain(o, stdout, stderr)
	}
	if o.Progress == nil {
		o.Progress = stderr
	}
	r, err := Run(o.Config)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench freshness-live: %v\n", err)
		return 1
	}
	if o.JSON {
		json.NewEncoder(stdout).Encode(r)
	} else {
		Print(stdout, r)
	}
	for _, x := range r.Rows {
		if len(x.Problems) > 0 {
			fmt.Fprintf(stderr, "trawl bench freshness-live: the %s crawl's web log shows %d problems\n", x.Schedule, len(x.Problems))
			return 1
		}
	}
	return 0
}

// simulateMain is Main with --simulate: every seed's table (or a JSON
// array of Results), then each schedule's mean gap share.
func simulateMain(o Options, stdout, stderr io.Writer) int {
	rs, err := Simulate(o.Config, o.Simulate)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench freshness-live: %v\n", err)
		return 2
	}
	if o.JSON {
		json.NewEncoder(stdout).Encode(rs)
		return 0
	}
	share := map[string]float64{}
	for _, r := range rs {
		Print(stdout, r)
		fmt.Fprintln(stdout)
		for _, x := range r.Rows {
			share[x.Schedule] += x.GapShare
		}
	}
	fmt.Fprintf(stdout, "mean gap share over %d simulated seeds:", len(rs))
	for _, s := range rs[0].Config.Schedules {
		fmt.Fprintf(stdout, " %s %.2f", s, share[s]/float64(len(rs)))
	}
	fmt.Fprintln(stdout)
	return 0
}
