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

Examples:
  trawl bench freshness-live
  trawl bench freshness-live --duration 3m --hosts 10 --json`

// Options are `trawl bench freshness-live`'s flags.
type Options struct {
	Config
	JSON bool // one JSON Result instead of a table
}

// Main runs the benchmark, writes its Result to stdout as a table or one
// JSON object, and returns the exit code: 2 for a bad Config, 1 for a
// failure or a crawl whose web's log shows a politeness problem.
func Main(o Options, stdout, stderr io.Writer) int {
	if err := o.Config.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl bench freshness-live: %v\n", err)
		return 2
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
