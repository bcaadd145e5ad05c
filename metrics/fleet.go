package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawl-crawler/trawl/cluster/fleet"
	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/cluster/ipcap"
)

// A fleet member's own figures (cluster/fleet's Stats), read at scrape
// time. Each member exports its own; the fleet's totals are sums over the
// members' series, as Prometheus makes them (sum without (instance) ...).
var (
	fleetMembers  = gauge("trawl_fleet_members", "Live members of the fleet as this member sees them, itself included.")
	fleetServed   = gauge("trawl_fleet_partitions_served", "Host partitions this member's node serves now.")
	fleetFenced   = gauge("trawl_fleet_fenced", "1 while this member may start no fetch (its membership may have lapsed), else 0.")
	fleetMoves    = counter("trawl_fleet_partition_moves_total", "Partition moves this member served: take (a free partition, from its checkpoint), takeover (from a dead or fenced owner; also counted as take), adopt (a claim kept across a restart), release (handed on, checkpointed), drop (let go without a checkpoint).", "kind")
	fleetCkpts    = counter("trawl_fleet_checkpoints_total", "Partition checkpoints this member wrote to the object store, by result (saved, failed).", "result")
	fleetRestores = counter("trawl_fleet_checkpoint_restores_total", "Partition checkpoints this member restored when it took a partition.")
	fleetUnread   = counter("trawl_fleet_checkpoints_unreadable_total", "Partition checkpoints this member found unreadable, again and again, and served the partition without (from an empty state: its queued URLs lost, its pages may be fetched again).")
	fleetRouted   = counter("trawl_fleet_routed_urls_total", "URLs routed between members: out (this member published them for another's partition), in (folded from the route stream into this member's).", "direction")
	fleetOutbox   = gauge("trawl_fleet_outbox_urls", "Routed URLs this member has yet to publish (its outbox).")
	fleetChanges  = counter("trawl_fleet_progress_changes_total", "Partition changes (one committed batch's share of a served partition) in the replicated progress stream (cluster/progress), by what became of them: published (acknowledged by JetStream), replayed (applied by this member after a take), lost (not published: the partition's next checkpoint covers them).", "result")
	fleetChangeB  = counter("trawl_fleet_progress_bytes_total", "Bytes of the partition changes this member published to the progress stream.")
	fleetQueued   = gauge("trawl_fleet_progress_queued_changes", "Committed partition changes waiting to be published: what a kill of this member now would cost its takers, with its fetches in flight.")
	fleetLagSum   = counter("trawl_fleet_progress_lag_seconds_total", "Sum over the published changes of the time from their commit to JetStream's acknowledgement (divide by the published changes for the mean).")
	fleetLagMax   = gauge("trawl_fleet_progress_lag_max_seconds", "The longest time a change took from its commit to JetStream's acknowledgement since the member started.")
	fleetDescs    = []desc{fleetMembers, fleetServed, fleetFenced, fleetMoves, fleetCkpts, fleetRestores, fleetUnread, fleetRouted, fleetOutbox, fleetChanges, fleetChangeB, fleetQueued, fleetLagSum, fleetLagMax}

	ipSlotsHeld  = gauge("trawl_fleet_ip_slots_held", "Per-IP fetch slots this member holds now (cluster/ipcap: the fleet's cap on fetches at once to one address).")
	ipSlotWaits  = counter("trawl_fleet_ip_slot_waits_total", "Fetches that found every slot of their address taken (by this member or others) and waited their turn.")
	ipSlotsFreed = counter("trawl_fleet_ip_slots_freed_total", "Per-IP slots of members gone (or of this member's earlier run) that this member deleted.")
	ipcapDescs   = []desc{ipSlotsHeld, ipSlotWaits, ipSlotsFreed}

	fpLookups  = counter("trawl_fleet_fingerprint_lookups_total", "Content-fingerprint lookups (cluster/fpshard), by where they were answered: local (a partition this member serves), remote (asked of the partition's owner; a near lookup counts once per partition its bands fall in).", "where")
	fpMisses   = counter("trawl_fleet_fingerprint_lookup_misses_total", "Remote fingerprint lookups that got no answer (no owner, a timeout, a partition moving), counted as not seen: their payloads were archived in full.")
	fpRequests = counter("trawl_fleet_fingerprint_requests_total", "Request messages this member's remote fingerprint lookups were batched into (each retry counted).")
	fpRetries  = counter("trawl_fleet_fingerprint_move_retries_total", "Remote fingerprint requests sent again because their partition was moving (no member served it), within the wait for its next owner.")
	fpAdds     = counter("trawl_fleet_fingerprint_adds_total", "Fingerprints this member added, by where they went: local (written here, in a partition it serves), remote (published to the partition's owner).", "where")
	fpDropped  = counter("trawl_fleet_fingerprint_adds_dropped_total", "Fingerprints for another member's partition lost to a full publishing queue or a failed publish (their copies are archived in full, never lost).")
	fpReceived = counter("trawl_fleet_fingerprint_adds_received_total", "Fingerprints sent by other members and written here.")
	fpServed   = counter("trawl_fleet_fingerprint_lookups_served_total", "Fingerprint lookups this member answered for other members.")
	fpDescs    = []desc{fpLookups, fpMisses, fpRequests, fpRetries, fpAdds, fpDropped, fpReceived, fpServed}
)

// AddFleet exports a fleet member's figures: src returns them, or false
// while the member has not joined (no series then).
func (m *Metrics) AddFleet(src func() (fleet.Stats, bool)) {
	m.reg.MustRegister(memberCollector[fleet.Stats]{fleetDescs, src, func(s fleet.Stats, emit emitFunc) {
		emit(fleetMembers, float64(s.Members))
		emit(fleetServed, float64(s.Served))
		fenced := 0.0
		if s.Fenced {
			fenced = 1
		}
		emit(fleetFenced, fenced)
		emit(fleetMoves, float64(s.Takes), "take")
		emit(fleetMoves, float64(s.Takeovers), "takeover")
		emit(fleetMoves, float64(s.Adopts), "adopt")
		emit(fleetMoves, float64(s.Releases), "release")
		emit(fleetMoves, float64(s.Drops), "drop")
		emit(fleetCkpts, float64(s.CheckpointsSaved), "saved")
		emit(fleetCkpts, float64(s.CheckpointsFailed), "failed")
		emit(fleetRestores, float64(s.CheckpointsRestored))
		emit(fleetUnread, float64(s.CheckpointsUnreadable))
		emit(fleetRouted, float64(s.RoutedOut), "out")
		emit(fleetRouted, float64(s.RoutedIn), "in")
		emit(fleetOutbox, float64(s.Outbox))
		emit(fleetChanges, float64(s.ChangesPublished), "published")
		emit(fleetChanges, float64(s.ChangesReplayed), "replayed")
		emit(fleetChanges, float64(s.ChangeGaps), "lost")
		emit(fleetChangeB, float64(s.ChangeBytes))
		emit(fleetQueued, float64(s.ChangesQueued))
		emit(fleetLagSum, s.ChangeLagSum.Seconds())
		emit(fleetLagMax, s.ChangeLagMax.Seconds())
	}})
}

// AddIPCap exports a fleet member's per-IP slot figures: src returns them,
// or false while the member has not joined.
func (m *Metrics) AddIPCap(src func() (ipcap.Stats, bool)) {
	m.reg.MustRegister(memberCollector[ipcap.Stats]{ipcapDescs, src, func(s ipcap.Stats, emit emitFunc) {
		emit(ipSlotsHeld, float64(s.Held))
		emit(ipSlotWaits, float64(s.Waits))
		emit(ipSlotsFreed, float64(s.Freed))
	}})
}

// AddFingerprints exports a fleet member's content-fingerprint shard
// figures: src returns them, or false while the member has not joined.
func (m *Metrics) AddFingerprints(src func() (fpshard.Stats, bool)) {
	m.reg.MustRegister(memberCollector[fpshard.Stats]{fpDescs, src, func(s fpshard.Stats, emit emitFunc) {
		emit(fpLookups, float64(s.LookupsLocal), "local")
		emit(fpLookups, float64(s.LookupsRemote), "remote")
		emit(fpMisses, float64(s.RemoteMisses))
		emit(fpRequests, float64(s.Requests))
		emit(fpRetries, float64(s.MoveRetries))
		emit(fpAdds, float64(s.AddsLocal), "local")
		emit(fpAdds, float64(s.AddsSent), "remote")
		emit(fpDropped, float64(s.AddsDropped))
		emit(fpReceived, float64(s.AddsReceived))
		emit(fpServed, float64(s.Served))
	}})
}

// emitFunc sends one sample of d, with its label values.
type emitFunc func(d desc, v float64, labels ...string)

// memberCollector exports, at each scrape, the figures of type S that src
// returns, through write; nothing while src reports the member has not
// joined the fleet.
type memberCollector[S any] struct {
	descs []desc
	src   func() (S, bool)
	write func(S, emitFunc)
}

func (c memberCollector[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d.Desc
	}
}

func (c memberCollector[S]) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.src()
	if !ok {
		return
	}
	c.write(s, func(d desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d.Desc, d.kind, v, labels...)
	})
}
