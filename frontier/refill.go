package frontier

// Window refills. No store I/O happens under f.mu: a host whose window at
// the level to serve ran dry (take), or a dead host being drained (drain),
// is marked refilling, taken out of the ready heap and queued in
// f.refillQ (at most once: the mark). Refiller goroutines, at most
// Options.Refillers, take hosts from the queue's head under f.mu (up to
// refillBatch at a time), read their windows without f.mu (Store.Read),
// and install them under f.mu:
// the window is appended, the host is put back in the heap (a dead host's
// items are dropped at once and its next window queued) and Changed is
// signalled. While a host is refilling, only install changes its readSeq
// and unread at the level read; new items go to unread, requeued ones to
// the window's head, so the read's items still follow the window. Done
// reports false while refills are pending.
//
// How much a host reads is readSize's: a whole window while it fits in
// WindowBudget with the items in windows and being read; past that, while
// the workers starve (a Lease found nothing to hand out since the last
// lease, f.starving), one item while fewer than spareMax hosts hold such
// a spare item (hostState.spare, cleared by the host's next take); past
// that, nothing: the queue's head waits and the refillers end. A running
// refiller looks again after each read; take and drain, which make room,
// start one (kick) once the head can read, and so does a Lease that
// starves. Only hosts due now start a refill (take is called by Lease for
// the heap's due top), so a spare item is taken by the next leases, and
// the head waits no longer than the spare items' hosts take to be leased:
// whatever holds the budget, no host holds up the others for good. Spare
// reads wait for a starving Lease because while windows in memory still
// feed the workers they only cost: a spare read is a store seek for one
// item, and with the budget full every lease made room for one (after a
// restart with 1M URLs queued over 100k hosts, 75,000 reads for 100,000
// leases, most of one item). A dead host reads a whole window whatever
// the budget: its items are dropped as soon as they are read.

// spareMax is how many hosts may hold an item read past WindowBudget.
func (f *Frontier) spareMax() int { return max(1, f.opts.WindowBudget/16) }

// readSize is how many items h may read now, and whether the read is a
// spare one (past WindowBudget); 0 means none until room is made.
func (f *Frontier) readSize(h *hostState) (n int, spare bool) {
	if h.draining() {
		return f.opts.Window, false
	}
	if full := min(f.opts.Window, f.opts.WindowBudget); f.windowed+f.reading+full <= f.opts.WindowBudget {
		return full, false
	}
	if f.starving && f.spare < f.spareMax() {
		return 1, true
	}
	return 0, false
}

// startRefill marks h refilling at level and queues it for a refiller.
func (f *Frontier) startRefill(h *hostState, level int) {
	h.refilling = true
	h.refillLevel = uint8(level)
	f.refilling++
	f.refillQ = append(f.refillQ, h.id)
	f.schedule(h)
	f.kick()
}

// kick starts a refiller if the refill queue's head may read now and
// fewer than Options.Refillers run. It is called wherever a read may have
// become possible outside a refiller: a host queued, items taken out of
// windows.
func (f *Frontier) kick() {
	if len(f.refillQ) == 0 || f.refillers >= f.opts.Refillers {
		return
	}
	if n, _ := f.readSize(f.hosts.at(f.refillQ[0])); n == 0 {
		return
	}
	f.refillers++
	go f.refiller()
}

// refillBatch is how many hosts a refiller takes from the queue at once:
// it reads their windows one after the other without f.mu and installs
// them under one hold of it. A lock taken and given back per host cost the
// workers, who lease and complete under the same lock, more waiting than
// the reads themselves.
const refillBatch = 8

// refill is one host's window being read by a refiller.
type refill struct {
	h     *hostState
	level int
	name  string
	after uint64
	n     int
	items []Item
	err   error
}

// refiller reads windows until f.refillQ is empty or its head must wait
// for room (readSize).
func (f *Frontier) refiller() {
	f.mu.Lock()
	defer f.mu.Unlock()
	var batch [refillBatch]refill
	for len(f.refillQ) > 0 {
		rs := batch[:0]
		for len(f.refillQ) > 0 && len(rs) < refillBatch {
			h := f.hosts.at(f.refillQ[0])
			n, spare := f.readSize(h)
			if n == 0 {
				break
			}
			f.refillQ = f.refillQ[1:]
			if len(f.refillQ) == 0 {
				f.refillQ = f.refillQ[:0:0]
			}
			if spare && !h.spare {
				h.spare = true
				f.spare++
			}
			l := int(h.refillLevel)
			f.reading += n
			rs = append(rs, refill{h: h, level: l, name: f.hosts.name(h), after: h.readSeq[l], n: n})
		}
		if len(rs) == 0 {
			break
		}
		f.mu.Unlock()
		for i := range rs {
			r := &rs[i]
			r.items, r.err = f.opts.Store.Read(r.name, r.level, r.after, r.n)
		}
		f.mu.Lock()
		for i := range rs {
			r := &rs[i]
			f.reading -= r.n
			f.install(r.h, r.level, r.items, r.err)
			*r = refill{}
		}
	}
	f.refillers--
}

// install puts items, read from the store after h.readSeq[level], into h's
// window and puts h back in the heap.
func (f *Frontier) install(h *hostState, level int, items []Item, err error) {
	h.refilling = false
	f.refilling--
	if h.fenced {
		f.unbusy(h)
	}
	if err != nil || len(items) == 0 {
		// The store lost track; forget its count rather than spin. (The
		// jobs of the items forgotten are not known: their counts keep
		// them until a restart.)
		f.queued -= int(h.unread[level])
		h.unread[level] = 0
		f.unspare(h)
	} else {
		h.unread[level] = max(0, h.unread[level]-int32(len(items)))
		h.readSeq[level] = items[len(items)-1].Seq
		if w := f.win(h, level); len(w) > 0 {
			f.setWin(h, level, append(w, items...))
		} else {
			f.setWin(h, level, items) // the store's slice is the caller's
		}
		f.windowed += len(items)
	}
	if h.draining() {
		ch := &Change{}
		if h.dead {
			f.drain(h, ch)
		} else {
			f.sweepHost(h, ch)
		}
		if len(ch.Del) > 0 || len(ch.Put) > 0 || len(f.touched) > 0 {
			f.write(ch)
		}
	}
	f.schedule(h)
	f.signal()
}

// unspare clears h's spare mark (a take, or its window is gone).
func (f *Frontier) unspare(h *hostState) {
	if h.spare {
		h.spare = false
		f.spare--
	}
}
