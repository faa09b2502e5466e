package history

import (
	"fmt"
	"sort"
)

// seenBy returns the highest zxid op i shows: for a read, of the state it
// returned (czxid, mzxid, pzxid); for a write, its zxid if known.
func (c *checker) seenBy(i int) int64 {
	op := &c.ops[i]
	if c.out[i] != OK {
		return 0
	}
	if op.Kind.IsWrite() {
		return c.zx[i]
	}
	if st := op.Result.Stat; st != nil && op.Kind.IsRead() {
		return max(st.Czxid, st.Mzxid, st.Pzxid)
	}
	return 0
}

// bound computes, for every op, the highest zxid seen by any op that
// returned before it was invoked (low, lowSrc), and for every op the
// lower bound of the zxid it shows (seen): a write's zxid is above every
// zxid seen before its call, so an acknowledged write of unknown zxid
// shows at least low+1. It then checks the known zxids of writes against
// real time.
func (c *checker) bound() {
	type event struct {
		t   int64
		op  int
		ret bool
	}
	var evs []event
	for i := range c.ops {
		evs = append(evs, event{c.ops[i].Invoked, i, false})
		if ret := c.returned(i); ret != Pending {
			evs = append(evs, event{ret, i, true})
		}
	}
	// At equal times returns come first: a return at t precedes a call at t
	// (see Clock; the recorder never gives both one time).
	sort.SliceStable(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return evs[a].ret && !evs[b].ret
	})
	var hi int64
	src := -1
	for _, e := range evs {
		i := e.op
		if e.ret { // op i's zxids are now seen
			s := c.seenBy(i)
			if s == 0 && c.acked(i) && c.ops[i].Kind.IsWrite() {
				s = c.low[i] + 1
			}
			c.seen[i] = s
			if s > hi {
				hi, src = s, i
			}
			continue
		}
		c.low[i], c.lowSrc[i] = hi, src
	}
	for i := range c.ops {
		if c.ops[i].Kind.IsWrite() && c.zx[i] != 0 && c.zx[i] <= c.low[i] {
			c.violate(Linearizable, -1, fmt.Sprintf("a write has zxid %#x, yet an op that returned before it was invoked had seen zxid %#x (writes are ordered by zxid, and a read cannot see a later write)", c.zx[i], c.low[i]), i, c.lowSrc[i], c.zxSrc[i])
		}
	}
}

// checkStates checks that the known states of each node fit one history:
// versions of an incarnation in zxid order, and an incarnation's changes
// all before the next incarnation was created.
func (c *checker) checkStates() {
	paths := make([]string, 0, len(c.incarnations))
	for p := range c.incarnations {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		cs := c.incarnations[p]
		for k, cz := range cs {
			vs := c.versions[p][cz]
			for j := 1; j < len(vs); j++ {
				if vs[j].mzxid <= vs[j-1].mzxid {
					c.violate(ValueWritten, -1, fmt.Sprintf("%s (czxid %#x): version %d has mzxid %#x, not above version %d's %#x", p, cz, vs[j].version, vs[j].mzxid, vs[j-1].version, vs[j-1].mzxid), vs[j].src, vs[j-1].src)
				}
			}
			if k+1 < len(cs) && len(vs) > 0 && vs[len(vs)-1].mzxid >= cs[k+1] {
				last := vs[len(vs)-1]
				c.violate(ValueWritten, -1, fmt.Sprintf("%s: the incarnation created at %#x was changed at %#x, after the next one was created at %#x", p, cz, last.mzxid, cs[k+1]), last.src, c.versions[p][cs[k+1]][0].src)
			}
		}
	}
}

// replacedAt returns an upper bound of the zxid at which state (czxid,
// version) of path was replaced (0: none known), with the op that showed
// it: the mzxid of a later version of the incarnation, or the czxid of a
// later incarnation (the node was deleted before it).
func (c *checker) replacedAt(path string, czxid int64, version int32) (int64, int) {
	var at int64
	src := -1
	for _, v := range c.versions[path][czxid] {
		if v.version > version {
			at, src = v.mzxid, v.src
			break
		}
	}
	cs := c.incarnations[path]
	k := sort.Search(len(cs), func(k int) bool { return cs[k] > czxid })
	if k < len(cs) && (at == 0 || cs[k] < at) {
		at, src = cs[k], c.versions[path][cs[k]][0].src
	}
	return at, src
}
