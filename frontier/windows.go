package frontier

import "slices"

// Windows: the few items of each host and priority level held in memory,
// head first (the rest wait in the Store; refill.go reads them), and the
// biased round robin over the levels that takes a host's next item (take).

// maxLevels is the most priority levels (Options.Levels): per-host arrays
// of this size keep a host's memory small and fixed.
const maxLevels = 4

// win is h's window at level l.
func (f *Frontier) win(h *hostState, l int) []Item {
	if h.window == 0 {
		return nil
	}
	return f.windows[h.window-1][l]
}

// setWin sets h's window at level l, taking a set of windows when needed
// and giving it back when all are empty.
func (f *Frontier) setWin(h *hostState, l int, w []Item) {
	if len(w) == 0 {
		w = nil
	}
	if h.window == 0 {
		if w == nil {
			return
		}
		if n := len(f.freeWins); n > 0 {
			h.window = f.freeWins[n-1]
			f.freeWins = f.freeWins[:n-1]
		} else {
			f.windows = append(f.windows, new([maxLevels][]Item))
			h.window = int32(len(f.windows))
		}
	}
	ws := f.windows[h.window-1]
	ws[l] = w
	for _, x := range ws {
		if len(x) > 0 {
			return
		}
	}
	f.freeWindows(h)
}

// freeWindows gives h's set of windows back.
func (f *Frontier) freeWindows(h *hostState) {
	if h.window == 0 {
		return
	}
	*f.windows[h.window-1] = [maxLevels][]Item{}
	f.freeWins = append(f.freeWins, h.window)
	h.window = 0
}

// take removes the next item of h, choosing the level by a biased round
// robin: level i gets weight 2^(Levels-1-i), so every level is served. If
// the level to serve has items only in the store, take starts a refill of
// it and reports false with h out of the heap until the window is read
// (the round robin does not move on: the same level is served then).
func (f *Frontier) take(h *hostState) (Item, bool) {
	L := f.opts.Levels
	total := uint64(1)<<L - 1
	slot := h.tick % total
	want, span := 0, uint64(1)<<(L-1)
	for slot >= span && want < L-1 {
		slot -= span
		span >>= 1
		want++
	}
	for i := range L {
		l := (want + i) % L
		if w := f.win(h, l); len(w) > 0 {
			it := w[0]
			f.setWin(h, l, shift(w))
			f.queued--
			f.windowed--
			h.tick++
			f.unspare(h)
			f.kick()
			return it, true
		}
		if h.unread[l] > 0 {
			f.startRefill(h, l)
			return Item{}, false
		}
	}
	return Item{}, false
}

// shift removes w's head. The rest moves down, rather than w being
// resliced past its head (which kept the consumed slots alive until the
// window emptied), so cap(w) is its array's size: appends reuse the room,
// and once the window fills no more than half of its array it moves to an
// array of its size. A window drained from the front so holds at most
// about twice its items' slots (Item is 88 B).
func shift(w []Item) []Item {
	n := copy(w, w[1:])
	w[n] = Item{}
	w = w[:n]
	if n > 0 && n <= cap(w)/2 {
		w = slices.Clone(w)
	}
	return w
}

// pushFront puts it back at the head of h's queue (a dead host drains it
// with the rest).
func (f *Frontier) pushFront(h *hostState, it Item) {
	l := it.Level
	f.setWin(h, l, append([]Item{it}, f.win(h, l)...))
	f.queued++
	f.windowed++
	f.schedule(h)
}
