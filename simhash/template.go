package simhash

// Template learns a host's template as its pages are read: the blocks of
// main text (Block.Hash) that appear on many of its pages (a sidebar's
// blurb, a footer's address, a disclaimer), which say nothing about one
// page. A page's print leaves them out (Content.Print with Is), so that
// distinct pages sharing a large template are told apart by what is their
// own.
//
// A block is template once the host has TemplateMinPages pages read and
// the block was on at least TemplateMinCount of them and on
// TemplateShare of them. Until then nothing is: a near copy shares most
// blocks with its original, so two or three pages cannot tell a template
// from a copied text, and the pages a crawl reads first are judged by
// their main text alone. Callers add only pages judged distinct, so that
// copies of one page do not make its text look like template.
//
// A Template holds at most MaxTemplateBlocks block counts: once full, it
// forgets the blocks seen on one page only, and counts no new block if
// none was. It is not safe for concurrent use.
type Template struct {
	pages  int
	counts map[uint64]uint16
}

// Template rules (see Template).
const (
	TemplateMinPages  = 4
	TemplateMinCount  = 4
	TemplateShare     = 0.4
	MaxTemplateBlocks = 1024
)

// Pages returns the number of pages added.
func (t *Template) Pages() int { return t.pages }

// Is reports whether a block is part of the host's template.
func (t *Template) Is(block uint64) bool {
	if t.pages < TemplateMinPages {
		return false
	}
	c := int(t.counts[block])
	return c >= TemplateMinCount && float64(c) >= TemplateShare*float64(t.pages)
}

// SharedTitle reports whether a page's title (Content's title block) was
// on two or more pages of the host already: pages judged distinct (Add),
// so it names none of them. (One is not enough: a copy edited beyond the
// near-duplicate gate's reach is judged distinct, and keeps its title.)
func (t *Template) SharedTitle(block uint64) bool {
	return block != 0 && t.counts[block] >= 2
}

// Add counts the blocks of a page's main text, each once.
func (t *Template) Add(c *Content) {
	if t.counts == nil {
		t.counts = make(map[uint64]uint16)
	}
	t.pages++
	blocks := c.Blocks()
	for i, b := range blocks {
		if repeated(blocks[:i], b.Hash) {
			continue
		}
		if n, ok := t.counts[b.Hash]; ok {
			if n < 1<<16-1 {
				t.counts[b.Hash] = n + 1
			}
			continue
		}
		if len(t.counts) >= MaxTemplateBlocks && !t.forget() {
			continue
		}
		t.counts[b.Hash] = 1
	}
}

// repeated reports whether h is the hash of one of blocks; the few blocks
// a page repeats are found by a scan (a page has tens of blocks).
func repeated(blocks []Block, h uint64) bool {
	if len(blocks) > 64 {
		blocks = blocks[len(blocks)-64:]
	}
	for _, b := range blocks {
		if b.Hash == h {
			return true
		}
	}
	return false
}

// forget drops the blocks seen once and reports whether any were.
func (t *Template) forget() bool {
	n := len(t.counts)
	for h, c := range t.counts {
		if c <= 1 {
			delete(t.counts, h)
		}
	}
	return len(t.counts) < n
}
