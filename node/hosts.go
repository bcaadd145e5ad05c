package node

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/hostpolicy"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/robotscache"
	"github.com/trawl-crawler/trawl/urlnorm"
)

// ErrBadHost is returned for a host name that is not one.
var ErrBadHost = errors.New("not a host name")

// CanonicalHost returns the politeness key (urlnorm.HostKey) of a host
// name as an operator types it ("Example.COM", "example.com."), or an
// error wrapping ErrBadHost.
func CanonicalHost(name string) (string, error) {
	bare := name
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		bare = "" // an IPv6 literal: the parser judges it
	}
	if name == "" || len(name) > 253 || strings.ContainsAny(bare, ":/?#@%\\ \t\r\n") {
		return "", fmt.Errorf("node: host %q: %w", name, ErrBadHost)
	}
	u, err := urlnorm.Parse("http://"+name+"/", nil)
	if err != nil || u.Port() != "" || u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("node: host %q: %w", name, ErrBadHost)
	}
	return urlnorm.HostKey(urlnorm.Normalize(u)), nil
}

// loadPolicies hands the frontier every stored host policy. A record that
// cannot be read is logged and left in place (an operator sets it again).
func (n *Node) loadPolicies() (err error) {
	it, err := n.db.NewIter(store.KindPrefix(store.KindPolicy))
	if err != nil {
		return fmt.Errorf("node: load host policies: %w", err)
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("node: load host policies: %w", cerr)
		}
	}()
	for it.First(); it.Valid(); it.Next() {
		k, err := store.DecodeKey(it.Key())
		if err != nil {
			n.opts.Logger.Warn("host policy under a malformed key; ignored", "key", fmt.Sprintf("%q", it.Key()), "err", err)
			continue
		}
		p, err := hostpolicy.Decode(it.Value())
		if err != nil {
			n.opts.Logger.Warn("stored host policy unreadable; ignored", "host", k.Host, "err", err)
			continue
		}
		n.frontier.SetHostPolicy(k.Host, p)
	}
	return nil
}

// SetHostPolicy stores host's policy (the zero Policy deletes it) and
// applies it from the host's next lease (frontier.SetHostPolicy). host is
// canonicalised (CanonicalHost); p is validated. It returns once the
// policy is durable.
func (n *Node) SetHostPolicy(host string, p hostpolicy.Policy) (string, error) {
	host, err := CanonicalHost(host)
	if err != nil {
		return "", err
	}
	if err := p.Validate(); err != nil {
		return "", err
	}
	b := n.db.NewBatch()
	if p.IsZero() {
		err = b.Delete(store.PolicyKey(host))
	} else {
		err = b.Set(store.PolicyKey(host), p.Encode())
	}
	if err == nil {
		err = n.db.Commit(b)
	} else {
		b.Close()
	}
	if err != nil {
		return "", fmt.Errorf("node: store policy of %s: %w", host, err)
	}
	n.frontier.SetHostPolicy(host, p)
	n.poke()
	return host, nil
}

// HostStatus is what the node knows of one host, for operators.
type HostStatus struct {
	frontier.HostInfo
	// QueuedByJob counts the host's items per job, in flight included,
	// and InFlightByJob those in flight: figures of the same moment as
	// HostInfo's, so that while QueuedCounted the first sum to Queued +
	// InFlight and the second to InFlight (frontier.HostQueue).
	// QueuedCounted is false if the host had more than MaxCountedItems
	// items (only that many were counted) or its queue moved too fast to
	// be counted whole.
	QueuedByJob   map[job.ID]int
	InFlightByJob map[job.ID]int
	HeldByJob     map[job.ID]int
	QueuedCounted bool
	Robots        []robotscache.OriginStatus
}

// MaxCountedItems bounds the store items HostStatus reads for one host.
const MaxCountedItems = 100_000

// HostStatus returns what the node knows of host, counting its queue per
// job (frontier.HostQueue, reading at most MaxCountedItems items from the
// store) and its held items, and false if neither the frontier nor the
// store knows the host.
func (n *Node) HostStatus(name string) (*HostStatus, bool, error) {
	host, err := CanonicalHost(name)
	if err != nil {
		return nil, false, err
	}
	hi, byJob, known, err := n.frontier.HostQueue(host, MaxCountedItems)
	if err != nil {
		return nil, false, err
	}
	if !known {
		hi = frontier.HostInfo{Host: host, State: frontier.HostIdle}
	}
	s := &HostStatus{HostInfo: hi, QueuedByJob: map[job.ID]int{}, InFlightByJob: map[job.ID]int{}, HeldByJob: map[job.ID]int{},
		QueuedCounted: byJob.Complete}
	budget := MaxCountedItems
	for id, c := range byJob.Queued {
		s.QueuedByJob[job.ID(id)] += c
		budget -= c
	}
	for id, c := range byJob.InFlight {
		s.QueuedByJob[job.ID(id)] += c
		s.InFlightByJob[job.ID(id)] = c
	}
	if err := n.countHeld(host, s, max(0, budget)); err != nil {
		return nil, false, err
	}
	if s.Robots, err = n.robots.Status(host); err != nil {
		return nil, false, err
	}
	return s, known || len(s.QueuedByJob) > 0 || len(s.HeldByJob) > 0 || len(s.Robots) > 0, nil
}

// countHeld counts host's held items per job from their keys, up to
// budget (less: QueuedCounted false).
func (n *Node) countHeld(host string, s *HostStatus, budget int) (err error) {
	it, err := n.db.NewIter(store.HeldPrefix(host))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for it.First(); it.Valid(); it.Next() {
		if budget <= 0 {
			s.QueuedCounted = false
			return nil
		}
		budget--
		k, err := store.DecodeKey(it.Key())
		if err != nil {
			return err
		}
		s.HeldByJob[k.Job]++
	}
	if budget <= 0 {
		s.QueuedCounted = false
	}
	return it.Error()
}

// HostFilter selects hosts for Hosts.
type HostFilter struct {
	State string // one of frontier.HostStates, or "" for any
	Job   job.ID // 0: any; else hosts where the job has seen a URL
	// Cursor is where to go on (0 to start; Hosts returns the next).
	Cursor frontier.HostCursor
	Limit  int // hosts to return, 1..MaxHostsPage
}

// MaxHostsPage bounds a page of Hosts; hostsScan bounds the hosts one
// call looks at, so that a call is cheap whatever the number of hosts
// (it may return fewer than Limit with a cursor to go on from).
const (
	MaxHostsPage = 1000
	hostsScan    = 65536
)

// Hosts returns a page of hosts by state and job, and the cursor to go
// on from (-1 once every host was looked at). The job filter reads the
// store (one seek per candidate), outside the frontier's lock.
func (n *Node) Hosts(f HostFilter) ([]frontier.HostInfo, frontier.HostCursor, error) {
	if f.State != "" && !slices.Contains(frontier.HostStates, f.State) {
		return nil, 0, fmt.Errorf("node: host state %q: want one of %v", f.State, frontier.HostStates)
	}
	if f.Limit < 1 || f.Limit > MaxHostsPage {
		return nil, 0, fmt.Errorf("node: page limit %d: want 1..%d", f.Limit, MaxHostsPage)
	}
	if f.Job == 0 {
		page, next := n.frontier.Hosts(f.State, f.Cursor, f.Limit, hostsScan)
		return page, next, nil
	}
	var out []frontier.HostInfo
	cur, scanned := f.Cursor, 0
	for cur >= 0 && len(out) < f.Limit && scanned < hostsScan {
		page, next := n.frontier.Hosts(f.State, cur, 256, min(4096, hostsScan-scanned))
		scanned += 4096
		for _, hi := range page {
			ok, err := n.jobKnows(f.Job, hi.Host)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				out = append(out, hi)
				if len(out) == f.Limit {
					return out, hi.Seq + 1, nil
				}
			}
		}
		cur = next
	}
	return out, cur, nil
}

// jobKnows reports whether job id has seen (queued) a URL of host.
func (n *Node) jobKnows(id job.ID, host string) (ok bool, err error) {
	prefix := store.SeenKey(id, host, "")
	prefix = prefix[:len(prefix)-1] // without the empty URL's form tag
	it, err := n.db.NewIter(prefix)
	if err != nil {
		return false, err
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return it.First(), it.Error()
}

// PauseNode stops the whole node leasing: fetches in flight end, nothing new
// starts, until ResumeNode. The state is stored: a restart stays paused.
func (n *Node) PauseNode() error { return n.setNodePaused(true) }

// ResumeNode undoes PauseNode.
func (n *Node) ResumeNode() error { return n.setNodePaused(false) }

// NodePaused reports whether the node is paused.
func (n *Node) NodePaused() bool { return n.paused.Load() }

// nodePausedKey holds 1 while the node is paused.
var nodePausedKey = store.MetaKey("node-paused")

func (n *Node) setNodePaused(p bool) error {
	b := n.db.NewBatch()
	var err error
	if p {
		err = b.Set(nodePausedKey, []byte{1})
	} else {
		err = b.Delete(nodePausedKey)
	}
	if err == nil {
		err = n.db.Commit(b)
	} else {
		b.Close()
	}
	if err != nil {
		return fmt.Errorf("node: store paused state: %w", err)
	}
	n.paused.Store(p)
	n.poke()
	return nil
}

// loadNodePaused restores the paused state.
func (n *Node) loadNodePaused() error {
	v, err := n.db.Get(nodePausedKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("node: load paused state: %w", err)
	}
	n.paused.Store(len(v) == 1 && v[0] == 1)
	return nil
}
