package node

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/job"
)

// Summary is what a job did in this run of the node; `trawl crawl` writes
// it to DataDir/summary.json.
type Summary struct {
	job.Progress
	Name       string    `json:"name,omitempty"`
	State      job.State `json:"state"`
	StopReason string    `json:"stop_reason"` // exhausted, max-pages, signal, cancelled, error
	Error      string    `json:"error,omitempty"`
	Finished   time.Time `json:"finished"`
	WARCFiles  []string  `json:"warc_files"`
	UserAgent  string    `json:"user_agent"`
	Seeds      []string  `json:"seeds"`
}

// Summary returns job id's summary, or nil for an unknown job.
func (n *Node) Summary(id job.ID) *Summary {
	j := n.Job(id)
	if j == nil {
		return nil
	}
	p, _ := n.Progress(id)
	st, reason := j.State()
	s := &Summary{
		Progress:   p,
		Name:       j.Spec.Name,
		State:      st,
		StopReason: reason,
		Finished:   n.opts.Now().UTC(),
		WARCFiles:  n.WARCFiles(),
		UserAgent:  n.opts.UserAgent,
		Seeds:      j.Spec.Seeds,
	}
	if err := j.Err(); err != nil {
		s.Error = err.Error()
	}
	return s
}

// WriteSummary writes s as DataDir/summary.json (through a temporary file
// and a rename, so a reader never sees half of it).
func (n *Node) WriteSummary(s *Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("node: encode summary: %w", err)
	}
	path := filepath.Join(n.opts.DataDir, "summary.json")
	tmp := path + ".tmp"
	f, err := n.opts.FS.Create(tmp, vfs.WriteCategoryUnspecified)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = n.opts.FS.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	return nil
}
