package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/cluster/fleet"
	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/cluster/ipcap"
)

// TestScrapeOfAFleetMember: a member's fleet figures, each in its series,
// named and labelled by the conventions (and none before it joins). The
// figures themselves are cluster/fleet's, checked by its tests against a
// fleet's crawl.
func TestScrapeOfAFleetMember(t *testing.T) {
	var (
		st     fleet.Stats
		ips    ipcap.Stats
		fps    fpshard.Stats
		joined bool
	)
	m := New(func() Source { return nil })
	m.AddFleet(func() (fleet.Stats, bool) { return st, joined })
	m.AddIPCap(func() (ipcap.Stats, bool) { return ips, joined })
	m.AddFingerprints(func() (fpshard.Stats, bool) { return fps, joined })
	for name := range scrape(t, m) {
		if strings.HasPrefix(name, "trawl_fleet_") {
			t.Errorf("%s before the member joined", name)
		}
	}
	st, joined = fleet.Stats{
		Members: 3, Served: 85, Fenced: true,
		Takes: 90, Takeovers: 12, Adopts: 4, Releases: 9, Drops: 2,
		CheckpointsSaved: 400, CheckpointsFailed: 3, CheckpointsRestored: 60, CheckpointsUnreadable: 1,
		RoutedOut: 1234, RoutedIn: 987, Outbox: 5,
		ChangesPublished: 5000, ChangesReplayed: 70, ChangeGaps: 2, ChangeBytes: 1 << 20, ChangesQueued: 12,
		ChangeLagSum: 250 * time.Second, ChangeLagMax: 1500 * time.Millisecond,
	}, true
	ips = ipcap.Stats{Held: 7, Waits: 321, Freed: 2}
	fps = fpshard.Stats{LookupsLocal: 500, LookupsRemote: 1000, RemoteMisses: 110, Requests: 80, MoveRetries: 9,
		AddsLocal: 300, AddsSent: 600, AddsDropped: 1, AddsReceived: 550, Served: 950}
	fams := scrape(t, m)
	checkConventions(t, fams, nil)
	lint(t, fams)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"trawl_fleet_members", nil, 3},
		{"trawl_fleet_partitions_served", nil, 85},
		{"trawl_fleet_fenced", nil, 1},
		{"trawl_fleet_partition_moves_total", map[string]string{"kind": "take"}, 90},
		{"trawl_fleet_partition_moves_total", map[string]string{"kind": "takeover"}, 12},
		{"trawl_fleet_partition_moves_total", map[string]string{"kind": "adopt"}, 4},
		{"trawl_fleet_partition_moves_total", map[string]string{"kind": "release"}, 9},
		{"trawl_fleet_partition_moves_total", map[string]string{"kind": "drop"}, 2},
		{"trawl_fleet_checkpoints_total", map[string]string{"result": "saved"}, 400},
		{"trawl_fleet_checkpoints_total", map[string]string{"result": "failed"}, 3},
		{"trawl_fleet_checkpoint_restores_total", nil, 60},
		{"trawl_fleet_checkpoints_unreadable_total", nil, 1},
		{"trawl_fleet_routed_urls_total", map[string]string{"direction": "out"}, 1234},
		{"trawl_fleet_routed_urls_total", map[string]string{"direction": "in"}, 987},
		{"trawl_fleet_outbox_urls", nil, 5},
		{"trawl_fleet_progress_changes_total", map[string]string{"result": "published"}, 5000},
		{"trawl_fleet_progress_changes_total", map[string]string{"result": "replayed"}, 70},
		{"trawl_fleet_progress_changes_total", map[string]string{"result": "lost"}, 2},
		{"trawl_fleet_progress_bytes_total", nil, 1 << 20},
		{"trawl_fleet_progress_queued_changes", nil, 12},
		{"trawl_fleet_progress_lag_seconds_total", nil, 250},
		{"trawl_fleet_progress_lag_max_seconds", nil, 1.5},
		{"trawl_fleet_ip_slots_held", nil, 7},
		{"trawl_fleet_ip_slot_waits_total", nil, 321},
		{"trawl_fleet_ip_slots_freed_total", nil, 2},
		{"trawl_fleet_fingerprint_lookups_total", map[string]string{"where": "local"}, 500},
		{"trawl_fleet_fingerprint_lookups_total", map[string]string{"where": "remote"}, 1000},
		{"trawl_fleet_fingerprint_lookup_misses_total", nil, 110},
		{"trawl_fleet_fingerprint_requests_total", nil, 80},
		{"trawl_fleet_fingerprint_move_retries_total", nil, 9},
		{"trawl_fleet_fingerprint_adds_total", map[string]string{"where": "local"}, 300},
		{"trawl_fleet_fingerprint_adds_total", map[string]string{"where": "remote"}, 600},
		{"trawl_fleet_fingerprint_adds_dropped_total", nil, 1},
		{"trawl_fleet_fingerprint_adds_received_total", nil, 550},
		{"trawl_fleet_fingerprint_lookups_served_total", nil, 950},
	} {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
