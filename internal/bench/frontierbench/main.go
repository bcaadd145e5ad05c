package frontierbench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// Help is `trawl bench frontier --help`.
const Help = `usage: trawl bench frontier [flags]

Opens a node's durable state (store, URL-seen gate, frontier) in --data as
the node does, fills it with synthetic URLs and measures seen-checks,
enqueue, RSS, start-up and lease+complete, phase by phase, against their
ceilings: a table, or with --json one object.

Examples:
  trawl bench frontier
  trawl bench frontier --urls 1000000 --hosts 100000 --json
  trawl bench frontier --profile-phase lease --cpuprofile lease.pprof
  trawl bench frontier --profile-phase lease --mutexprofile mu.pprof --blockprofile block.pprof`

// Options are `trawl bench frontier`'s flags.
type Options struct {
	Config
	Data                                    string // the store's directory; "": a temporary one
	CPUProfile, MemProfile, LeaseMemProfile string // files to write, if set
	MutexProfile, BlockProfile              string // files to write, if set (of ProfilePhase)
	Keep                                    bool   // keep Data at the end
	JSON                                    bool   // one JSON Result instead of a table
}

// Main runs the phases of Run on a store in o.Data (default: a temporary
// directory, removed at the end unless o.Keep), writes the Result to
// stdout as a table or one JSON object and its progress and messages to
// stderr, and returns the exit code: 2 for bad options, 1 for a failure.
func Main(o Options, stdout, stderr io.Writer) int {
	c := o.Config
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Known == 0 {
		c.Known = max(1, c.URLs/10)
	}
	if c.Leases == 0 {
		c.Leases = max(1, c.URLs/10)
	}
	// Validate before touching the file system; with no --data, Dir is
	// set again once the temporary directory exists.
	c.Dir = filepath.Join(o.Data, "state")
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
		return 2
	}
	if o.Data == "" {
		dir, err := os.MkdirTemp("", "trawl-bench-frontier-")
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		o.Data = dir
	} else if err := emptyOrMissing(o.Data); err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: --data: %v\n", err)
		return 2
	}
	if !o.Keep {
		defer os.RemoveAll(o.Data)
	}
	c.Dir = filepath.Join(o.Data, "state")

	// Profiles: the whole process unless a phase is named, then Run's.
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer f.Close()
		if c.ProfilePhase != "" {
			c.CPUProfile = f
		} else if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		} else {
			defer pprof.StopCPUProfile()
		}
	}
	for _, p := range []struct {
		path string
		into *io.Writer
	}{{o.MutexProfile, &c.MutexProfile}, {o.BlockProfile, &c.BlockProfile}} {
		if p.path == "" {
			continue
		}
		if c.ProfilePhase == "" {
			fmt.Fprintf(stderr, "trawl bench frontier: a mutex or block profile needs --profile-phase\n")
			return 2
		}
		f, err := os.Create(p.path)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer f.Close()
		*p.into = f
	}
	if o.MemProfile != "" {
		f, err := os.Create(o.MemProfile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer f.Close()
		c.HeapProfile = f
	}
	if o.LeaseMemProfile != "" {
		f, err := os.Create(o.LeaseMemProfile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer f.Close()
		c.LeaseHeapProfile = f
	}

	r, err := Run(c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
		return 1
	}
	if o.JSON {
		json.NewEncoder(stdout).Encode(r)
		return 0
	}
	Print(stdout, r)
	return 0
}

// emptyOrMissing fails if dir holds anything: the bench needs a fresh store
// and removes the directory at the end.
func emptyOrMissing(dir string) error {
	names, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(names) > 0:
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}
