package history

import (
	"fmt"
	"github.com/zksim/zksim"
	"path"
	"sort"
)

// view is what one client has seen so far.
type view struct {
	client int
	r      int64 // the highest zxid the client has seen
	rSrc   int   // the op that showed it
	rRule  Rule  // the rule a read older than r breaks
	// alive[p] is the op that showed the client p exists (its own create or
	// set, a read, or a write acknowledged before a sync), and the czxid
	// of that incarnation if known.
	alive map[string]int
	// gone[p] is the client's latest acknowledged create or delete of p
	// (or one acknowledged before its sync): every incarnation of p
	// created before it is dead for the client.
	gone map[string]int
}

func newView(client int) *view {
	return &view{client: client, rSrc: -1, alive: map[string]int{}, gone: map[string]int{}}
}

// checkClients checks every client's reads for sequential consistency.
func (c *checker) checkClients() {
	byClient := map[int][]int{}
	var clients []int
	for i := range c.ops {
		cl := c.ops[i].Client
		if _, ok := byClient[cl]; !ok {
			clients = append(clients, cl)
		}
		byClient[cl] = append(byClient[cl], i)
	}
	sort.Ints(clients)
	for _, cl := range clients {
		c.checkClient(cl, byClient[cl])
	}
}

func (c *checker) checkClient(client int, ops []int) {
	byCall := append([]int(nil), ops...)
	sort.SliceStable(byCall, func(a, b int) bool { return c.ops[byCall[a]].Invoked < c.ops[byCall[b]].Invoked })
	byRet := append([]int(nil), ops...)
	sort.SliceStable(byRet, func(a, b int) bool { return c.ops[byRet[a]].Returned < c.ops[byRet[b]].Returned })
	v := newView(client)
	next := 0
	var session int64
	for _, i := range byCall {
		for next < len(byRet) && c.ops[byRet[next]].Returned < c.ops[i].Invoked {
			if s := c.ops[byRet[next]].Session; s == 0 || s == session {
				c.absorb(v, byRet[next])
			}
			next++
		}
		if s := c.ops[i].Session; s != 0 && s != session {
			if session != 0 {
				v = newView(client) // a new session starts afresh
			}
			session = s
		}
		c.checkRead(v, i)
	}
}

// raise raises the client's highest seen zxid to z, shown by op src.
func (v *view) raise(z int64, src int, rule Rule) {
	if z > v.r {
		v.r, v.rSrc, v.rRule = z, src, rule
	}
}

// absorb adds what op i, which returned, showed the client.
func (c *checker) absorb(v *view, i int) {
	op := &c.ops[i]
	switch {
	case op.Kind.IsRead() && c.out[i] == OK:
		v.raise(c.seen[i], i, Monotonic)
		switch {
		case op.Kind == Children:
			for _, name := range op.Result.Children {
				v.alive[path.Join(op.Path, name)] = i
			}
		case op.Kind == Get || op.Result.Exists:
			v.alive[op.Path] = i
		default:
			delete(v.alive, op.Path)
		}
	case op.Kind.IsRead() && op.is(errNoNode):
		delete(v.alive, op.Path)
	case op.Kind.IsWrite() && c.acked(i):
		v.raise(c.seen[i], i, ReadYourWrites)
		c.wrote(v, i)
	case op.Kind == Sync && c.acked(i):
		c.synced(v, i)
	}
}

// wrote records the client's knowledge after write i was acknowledged.
func (c *checker) wrote(v *view, i int) {
	op := &c.ops[i]
	switch op.Kind {
	case Create:
		v.alive[op.Path] = i
		v.gone[op.Path] = i
	case Set:
		v.alive[op.Path] = i
	case Delete:
		delete(v.alive, op.Path)
		v.gone[op.Path] = i
	}
}

// synced records what a sync (op s) shows the client: every zxid seen by
// an op that returned before the sync was invoked, and on each path the
// last acknowledged create or delete, when real time alone orders it
// after every other one acknowledged before the sync.
func (c *checker) synced(v *view, s int) {
	v.raise(c.low[s], c.lowSrc[s], SyncRead)
	call := c.ops[s].Invoked
	for p, ws := range c.lifecycle() {
		m := sort.Search(len(ws.ops), func(k int) bool { return c.ops[ws.ops[k]].Returned >= call })
		if m == 0 {
			continue
		}
		// The latest call among them is the last, if every other one
		// returned before it was invoked.
		last := ws.latest[m-1]
		other := m - 1
		if ws.ops[other] == last {
			other--
		}
		if other >= 0 && c.ops[ws.ops[other]].Returned >= c.ops[last].Invoked {
			continue // two of them overlap: which came last is unknown
		}
		if c.ops[last].Kind == Create {
			v.alive[p] = last
		} else {
			delete(v.alive, p)
		}
		if g, ok := v.gone[p]; !ok || c.low[g] < c.low[last] {
			v.gone[p] = last
		}
	}
}

// acks lists a path's acknowledged creates and deletes by return time;
// latest[k] is the one with the latest call among the first k+1.
type acks struct {
	ops    []int
	latest []int
}

// lifecycle returns the acks of every path (computed once).
func (c *checker) lifecycle() map[string]*acks {
	if c.acks != nil {
		return c.acks
	}
	c.acks = map[string]*acks{}
	for p, ws := range c.writes {
		a := &acks{}
		for _, w := range ws {
			if c.acked(w) && c.ops[w].Kind != Set {
				a.ops = append(a.ops, w)
			}
		}
		if len(a.ops) == 0 {
			continue
		}
		sort.SliceStable(a.ops, func(x, y int) bool { return c.ops[a.ops[x]].Returned < c.ops[a.ops[y]].Returned })
		for k, w := range a.ops {
			if k == 0 || c.ops[w].Invoked > c.ops[a.latest[k-1]].Invoked {
				a.latest = append(a.latest, w)
			} else {
				a.latest = append(a.latest, a.latest[k-1])
			}
		}
		c.acks[p] = a
	}
	return c.acks
}

// ruleOf is the rule a read breaks by missing what op src showed.
func (c *checker) ruleOf(v *view, src int, dflt Rule) Rule {
	if src < 0 {
		return dflt
	}
	if c.ops[src].Client == v.client && c.ops[src].Kind.IsWrite() {
		return ReadYourWrites
	}
	if c.ops[src].Client != v.client {
		return SyncRead
	}
	return dflt
}

// checkRead checks read i against what the client has seen.
func (c *checker) checkRead(v *view, i int) {
	op := &c.ops[i]
	if !op.Kind.IsRead() {
		return
	}
	switch {
	case c.out[i] == OK && op.Kind == Children:
		names := map[string]bool{}
		for _, n := range op.Result.Children {
			names[path.Join(op.Path, n)] = true
		}
		var paths []string
		for p := range c.writes {
			if path.Dir(p) == op.Path && !names[p] {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		for _, p := range paths {
			c.checkAbsent(v, i, p)
		}
		listed := make([]string, 0, len(names))
		for p := range names {
			listed = append(listed, p)
		}
		sort.Strings(listed)
		for _, p := range listed {
			c.checkListed(v, i, p)
		}
	case c.out[i] == OK && (op.Kind == Get || op.Result.Exists):
		c.checkPresent(v, i)
	case c.out[i] == OK || op.is(errNoNode):
		c.checkAbsent(v, i, op.Path)
	}
}

// checkPresent checks a read that found its node, with a Stat.
func (c *checker) checkPresent(v *view, i int) {
	op := &c.ops[i]
	st := op.Result.Stat
	if st == nil {
		return
	}
	if at, src := c.replacedAt(op.Path, st.Czxid, st.Version); at != 0 && v.r >= at {
		c.violate(v.rRule, v.client, fmt.Sprintf("read %s at version %d (czxid %#x, mzxid %#x), a state replaced by zxid %#x, after the client had seen zxid %#x: the read goes back in time", op.Path, st.Version, st.Czxid, st.Mzxid, at, v.r), i, v.rSrc, src)
		return
	}
	if g, ok := v.gone[op.Path]; ok && st.Czxid <= c.low[g] {
		c.violate(c.ruleOf(v, g, ReadYourWrites), v.client, fmt.Sprintf("read %s created at zxid %#x, though the client had seen an acknowledged %s of it invoked after zxid %#x was seen: that incarnation was gone", op.Path, st.Czxid, c.ops[g].Kind, c.low[g]), i, g)
	}
}

// checkAbsent checks a read that found path p missing.
func (c *checker) checkAbsent(v *view, i int, p string) {
	est, ok := v.alive[p]
	if !ok {
		return
	}
	ret := c.ops[i].Returned
	estOp := &c.ops[est]
	own := estOp.Kind.IsWrite() // the client's write or one before its sync
	for _, d := range c.writes[p] {
		dop := &c.ops[d]
		if dop.Kind != Delete || c.out[d] == Failed || dop.Invoked >= ret {
			continue
		}
		if own && c.returned(d) < estOp.Invoked {
			continue // it came before the write that showed p alive
		}
		if !own && c.createdAfter(p, est, d) {
			continue
		}
		return // d may have deleted p in between
	}
	rule := Monotonic
	if own {
		rule = c.ruleOf(v, est, ReadYourWrites)
	}
	c.violate(rule, v.client, fmt.Sprintf("found %s missing after it had seen it exist, and no delete of it could come in between", p), i, est)
}

// createdAfter reports whether delete d certainly came before the
// incarnation of p that read est showed.
func (c *checker) createdAfter(p string, est, d int) bool {
	st := c.ops[est].Result.Stat
	if c.ops[est].Kind == Children || st == nil {
		return false
	}
	for _, w := range c.writes[p] {
		if c.ops[w].Kind == Create && c.zx[w] == st.Czxid && c.out[w] == OK {
			return c.returned(d) < c.ops[w].Invoked
		}
	}
	return false
}

var errNoNode = zksim.ErrNoNode

// checkListed checks a child list that names p, after the client saw p
// deleted (its own delete, or one acknowledged before its sync): some
// create of p must be able to come in between.
func (c *checker) checkListed(v *view, i int, p string) {
	g, ok := v.gone[p]
	if !ok || c.ops[g].Kind != Delete {
		return
	}
	ret := c.ops[i].Returned
	for _, w := range c.writes[p] {
		if c.ops[w].Kind == Create && c.out[w] != Failed && c.ops[w].Invoked < ret && c.returned(w) >= c.ops[g].Invoked {
			return // w may have created p again in between
		}
	}
	c.violate(c.ruleOf(v, g, ReadYourWrites), v.client, fmt.Sprintf("listed %s after it was deleted, and no create of it could come in between", p), i, g)
}
