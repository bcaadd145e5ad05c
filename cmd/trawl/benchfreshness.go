package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/bench/freshbench"
)

// benchFreshnessArgs are `trawl bench freshness`'s flags.
type benchFreshnessArgs struct {
	c      freshbench.Config
	asJSON bool
}

func (a *benchFreshnessArgs) register(fset *flag.FlagSet) {
	c := &a.c
	fset.IntVar(&c.Pages, "pages", 10_000, "pages on the simulated web")
	fset.Float64Var(&c.Days, "days", 60, "simulated days")
	fset.Float64Var(&c.Warmup, "warmup", 14, "days at the start not sampled")
	fset.Float64Var(&c.Budget, "budget", 0, "fetches per hour for every policy (0: pages/72, each page every 3 days)")
	fset.Uint64Var(&c.Seed, "seed", 1, "seed of the web and its changes")
	fset.StringVar(&c.Mix, "mix", "web", "mix of change rates: web (shaped after Cho and Garcia-Molina 2000) or churn (half the pages change within hours)")
	fset.Float64Var(&c.LastModified, "last-modified", 0, "share of pages sending a true Last-Modified (adds a row)")
	fset.Float64Var(&c.Lying, "lying", 0, "share of pages sending the request time as Last-Modified")
	fset.DurationVar(&c.Sample, "sample", 0, "time between freshness samples (0: 1h)")
	fset.BoolVar(&a.asJSON, "json", false, "print one JSON object instead of a table")
}

const benchFreshnessHelp = `usage: trawl bench freshness [flags]

Simulates a web whose pages change as Poisson processes at mixed rates and
recrawls it at a fixed fetch budget with uniform recrawl, Nutch's adaptive
schedule and trawl's recrawl policy (rates learned from its own fetches,
and with the true rates as a reference): average freshness and age, by
policy and by class of page. Deterministic for a seed (docs/design/freshness.md).

Examples:
  trawl bench freshness
  trawl bench freshness --mix churn --last-modified 0.5 --lying 0.2
  trawl bench freshness --pages 2000 --days 30 --budget 50 --json`

// benchFreshness runs "trawl bench freshness": freshbench.Run, printed as
// a table or, with --json, as one freshbench.Result.
func benchFreshness(args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("bench freshness", benchFreshnessHelp, nil, stderr)
	var a benchFreshnessArgs
	a.register(fset)
	if _, code, ok := parseFlags(fset, args, nil, stderr); !ok {
		return code
	}
	if err := a.c.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl bench freshness: %v\n", err)
		return 2
	}
	r, err := freshbench.Run(a.c)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench freshness: %v\n", err)
		return 1
	}
	if a.asJSON {
		json.NewEncoder(stdout).Encode(r)
		return 0
	}
	freshbench.Print(stdout, r)
	return 0
}
