package freshbench

import (
	"encoding/json"
	"fmt"
	"io"
)

// Help is `trawl bench freshness --help`.
const Help = `usage: trawl bench freshness [flags]

Simulates a web whose pages change as Poisson processes at mixed rates and
recrawls it at a fixed fetch budget with uniform recrawl, Nutch's adaptive
schedule and trawl's recrawl policy (rates learned from its own fetches,
and with the true rates as a reference): average freshness and age, by
policy and by class of page. Deterministic for a seed (docs/design/freshness.md).

Examples:
  trawl bench freshness
  trawl bench freshness --mix churn --last-modified 0.5 --lying 0.2
  trawl bench freshness --changefreq 0.5 --changefreq-wrong 0.2
  trawl bench freshness --pages 2000 --days 30 --budget 50 --json`

// Options are `trawl bench freshness`'s flags.
type Options struct {
	Config
	JSON bool // one JSON Result instead of a table
}

// Main runs the simulation, writes its Result to stdout as a table or
// one JSON object, and returns the exit code: 2 for a bad Config, 1 for
// a failure.
func Main(o Options, stdout, stderr io.Writer) int {
	if err := o.Config.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl bench freshness: %v\n", err)
		return 2
	}
	r, err := Run(o.Config)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench freshness: %v\n", err)
		return 1
	}
	if o.JSON {
		json.NewEncoder(stdout).Encode(r)
		return 0
	}
	Print(stdout, r)
	return 0
}
