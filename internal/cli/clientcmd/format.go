package clientcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/progress"
)

// PrintJSON writes an answer's body as the server sent it, indented.
func PrintJSON(w io.Writer, raw []byte) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		b.Reset()
		b.Write(raw)
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), "\n"))
}

// Limit shows a limit whose zero means none.
func Limit(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

// FirstOf is a list's first item and how many more, for a table cell.
func FirstOf(list []string) string {
	switch len(list) {
	case 0:
		return "-"
	case 1:
		return list[0]
	}
	return fmt.Sprintf("%s (+%d)", list[0], len(list)-1)
}

// PrintCrawl writes a crawl as `trawl crawls show` shows it.
func PrintCrawl(w io.Writer, cr apiclient.Crawl) {
	state := cr.State
	if cr.StopReason != "" {
		state += " (" + cr.StopReason + ")"
	}
	domains := strings.Join(cr.Domains, " ")
	if domains == "" {
		domains = "the seeds' hosts"
	}
	fmt.Fprintf(w, "crawl      %d %s\n", cr.ID, cr.Name)
	fmt.Fprintf(w, "state      %s\n", state)
	fmt.Fprintf(w, "seeds      %s\n", strings.Join(cr.Seeds, " "))
	fmt.Fprintf(w, "domains    %s\n", domains)
	fmt.Fprintf(w, "max depth  %s\n", Limit(cr.MaxDepth))
	fmt.Fprintf(w, "max pages  %s\n", Limit(cr.MaxPages))
	fmt.Fprintf(w, "priority   %d\n", cr.Priority)
	if r := cr.Recrawl; cr.Continuous && r != nil {
		fmt.Fprintf(w, "recrawl    continuous: every %s to %s, %s\n", orDefault(r.MinS, "1h"), orDefault(r.MaxS, "720h"), budget(r.BudgetPerHour))
	}
}

// orDefault is s seconds as a duration, or def (the server's default)
// for 0.
func orDefault(s float64, def string) string {
	if s == 0 {
		return def + " (default)"
	}
	return time.Duration(s * float64(time.Second)).String()
}

// budget is a recrawl budget, 0 meaning none.
func budget(perHour float64) string {
	if perHour == 0 {
		return "no budget"
	}
	return fmt.Sprintf("at most %g fetches/hour", perHour)
}

// PrintRecrawls is the recrawl lines of a crawl's stats: its counts, if it
// is continuous or recrawled a page, and the schedule's figures if any.
func PrintRecrawls(w io.Writer, st apiclient.Stats) {
	if st.Continuous || st.Recrawls > 0 {
		waiting := ""
		if st.WaitingForRecrawls {
			waiting = "; waiting for recrawls"
		}
		fmt.Fprintf(w, "  recrawls    %d: %d not modified (304), %d changed%s\n", st.Recrawls, st.NotModified, st.Changed, waiting)
	}
	if f := st.Freshness; f != nil {
		fmt.Fprintf(w, "  freshness   %s, mean age %s; %d scheduled, %d due, %d overdue (as of %s)\n",
			progress.Percent(f.Freshness), progress.Age(time.Duration(f.MeanAgeS*float64(time.Second))),
			f.Scheduled, f.Due, f.Overdue, f.At.Format(time.RFC3339))
	}
}

// Millis is n milliseconds, as the API counts them.
func Millis(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// HostDelay is a host's gap between fetches and why it is that.
func HostDelay(h apiclient.Host) string {
	s := Millis(h.DelayMS).String()
	if h.DelayReason != "" {
		s += " (" + h.DelayReason + ")"
	}
	return s
}

// NextFetch is when a host may be fetched next and why it waits till
// then: "in 59m (robots.txt Retry-After)", "now", or "-" for a dead host.
func NextFetch(h apiclient.Host) string {
	switch {
	case h.DeadReason != "" || h.State == "dead":
		return "-"
	case h.WaitMS <= 0:
		return "now"
	}
	s := "in " + waitDuration(Millis(h.WaitMS))
	if h.WaitReason != "" {
		s += " (" + waitWords(h.WaitReason) + ")"
	}
	return s
}

// waitWords is a wait reason in the user's words (frontier.GapReason's
// Describe), or as the server sent it if this client does not know it.
func waitWords(reason string) string {
	if r, ok := frontier.ParseGapReason(reason); ok && reason != "" {
		return r.Describe()
	}
	return reason
}

// waitDuration is d to the precision a person reads a wait with: whole
// minutes past an hour, whole seconds past a minute ("1h", "59m12s").
func waitDuration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		d = d.Round(time.Minute)
	case d >= time.Minute:
		d = d.Round(time.Second)
	case d >= time.Second:
		d = d.Round(100 * time.Millisecond)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// HostState is a host's state and, for a dead host, why it was given up,
// "dead (failing)"; for a live host whose latest fetches ended without a
// response, how many in a row and how, "backoff (3 failures: timeout)".
func HostState(h apiclient.Host) string {
	switch {
	case h.DeadReason != "":
		return h.State + " (" + h.DeadReason + ")"
	case h.Failures > 0:
		how := h.FailingHow
		if how == "" {
			how = "no response"
		}
		noun := "failures"
		if h.Failures == 1 {
			noun = "failure"
		}
		return fmt.Sprintf("%s (%d %s: %s)", h.State, h.Failures, noun, how)
	}
	return h.State
}

// PolicyText is a host policy in a few words.
func PolicyText(p apiclient.HostPolicy) string {
	var parts []string
	if p.MinDelayMS != nil {
		parts = append(parts, "min-delay "+Millis(*p.MinDelayMS).String())
	}
	if p.MaxParallel != 0 {
		parts = append(parts, fmt.Sprintf("max-parallel %d", p.MaxParallel))
	}
	if p.Paused {
		parts = append(parts, "paused")
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ", ")
}

// ByCrawl is a count by crawl id, "crawl 3: 12, crawl 5: 1", or
// "none".
func ByCrawl(m map[string]int) string {
	return crawlCounts(m, func(id string) string { return strconv.Itoa(m[id]) })
}

// QueuedByCrawl is a host's URLs by crawl id, split as the host's own
// totals are: "crawl 1: 41 queued + 2 in flight, crawl 2: 17 queued"
// (queued counts them in flight included, inFlight those in flight).
func QueuedByCrawl(queued, inFlight map[string]int) string {
	return crawlCounts(queued, func(id string) string {
		s := fmt.Sprintf("%d queued", queued[id]-inFlight[id])
		if inFlight[id] > 0 {
			s += fmt.Sprintf(" + %d in flight", inFlight[id])
		}
		return s
	})
}

// crawlCounts is "crawl ID: count" for each id of m, in id order, or
// "none".
func crawlCounts(m map[string]int, count func(id string) string) string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, _ := strconv.Atoi(ids[i])
		b, _ := strconv.Atoi(ids[j])
		return a < b
	})
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "crawl " + id + ": " + count(id)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Robots is one origin's robots.txt state in a line.
func Robots(r apiclient.RobotsStatus) string {
	var parts []string
	if r.Status != 0 {
		s := fmt.Sprintf("status %d", r.Status)
		if r.AgeS != nil {
			s += fmt.Sprintf(", fetched %s ago", (time.Duration(*r.AgeS * float64(time.Second))).Round(time.Second))
		}
		parts = append(parts, s)
	} else {
		parts = append(parts, "no copy")
	}
	if r.Pending {
		parts = append(parts, "a fetch pending")
	}
	if r.Attempts > 0 {
		parts = append(parts, fmt.Sprintf("%d attempts", r.Attempts))
	}
	if r.OutageSince != nil {
		parts = append(parts, "unavailable since "+r.OutageSince.Local().Format(time.DateTime))
	}
	if r.Error != "" {
		parts = append(parts, r.Error)
	}
	return strings.Join(parts, "; ")
}
