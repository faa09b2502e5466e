package zkmem

import (
	"strings"

	"github.com/zksim/zksim"
)

// Replication: the leader (the ensemble's core Server) applies each
// transaction to the committed tree. A member that keeps up (in sync) reads
// that very tree: it applies a commit by firing the commit's watch events
// for its own sessions (its view has its own watch tables) and releasing
// the replies that waited for it, which costs next to nothing. A member
// that falls behind (Lag, Crash, Isolate) diverges: it takes a copy of the
// committed tree, and from then on applies log entries in zxid order to
// its copy, until it has caught up and keeps up again, when it drops the
// copy. The log is recorded only while some member diverges.
//
// An entry carries what a member needs to reach the leader's state without
// re-running the request: the inserts and removes of nodes in the order the
// leader made them (so each parent's children table, a Java HashSet model
// whose order depends on its history, evolves exactly as the leader's), the
// final fields of every node the transaction touched, and its watch events.

// effect is an insert into or a removal from the tree, by path.
type effect struct {
	path   string
	insert bool
}

// entry is one committed transaction.
type entry struct {
	zxid   int64
	fx     []effect
	eph    []ephEffect // the sessions' sets of ephemerals, in order
	snaps  []node      // the fields of each node touched that still exists, as committed
	events []pendingEvent
}

// member is one server of an ensemble. Guarded by core.mu.
type member struct {
	id       int
	view     *Server // the member's applied state; view.zxid is its last applied zxid
	up       bool    // not crashed
	lagging  bool    // commits queue instead of being applied (Lag)
	isolated bool    // cut off from the quorum (Isolate)
	observer bool    // takes no part in the quorum, never leads
	queue    []*pendingReply
	// eph holds, while the member diverges, each session's set of
	// ephemerals as the member applied it (getEphemerals lists it).
	eph map[int64]*ephemeralSet
}

// pendingReply is a request of one of the member's clients waiting for the
// member to apply a zxid: a write's reply (the write is applied by the
// leader already), a sync, or a read queued behind either of them.
type pendingReply struct {
	sess  *Session
	req   Request
	resp  Response
	wait  int64 // the zxid the member must have applied
	write bool  // resp is ready; only the reply waits
	fault ConnFault
	done  chan struct{}
}

// seal turns the transaction the leader just applied into a log entry, and
// has every member that keeps up apply it. Called with core.mu held.
func (e *Ensemble) seal(t *txn) {
	s := e.core
	if s.tree.rec != nil {
		e.record(t)
	}
	for _, m := range e.members {
		v := m.view
		if v.tree != s.tree {
			if m.up && !m.isolated && !m.lagging && e.leader >= 0 {
				e.applyAll(m)
				e.settle(m)
			}
			continue
		}
		v.zxid = t.zxid
		for _, ev := range t.events {
			v.trigger(ev.typ, ev.path, ev.acl)
		}
		if len(m.queue) > 0 {
			e.release(m)
		}
	}
	e.trim()
}

// record appends the transaction to the log, for the members that diverge.
// Called with core.mu held.
func (e *Ensemble) record(t *txn) {
	s := e.core
	en := e.nextEntry()
	en.zxid = t.zxid
	en.fx = append(en.fx, t.fx...)
	en.eph = append(en.eph, t.eph...)
	if len(t.events) > 0 {
		en.events = append(en.events, t.events...)
		var seen map[string]bool
		if len(t.events) > 16 {
			seen = make(map[string]bool, len(t.events))
		}
	events:
		for _, ev := range t.events {
			if seen != nil {
				if seen[ev.path] {
					continue
				}
				seen[ev.path] = true
			} else {
				for i := range en.snaps {
					if en.snaps[i].path == ev.path {
						continue events
					}
				}
			}
			if n := s.tree.get(ev.path); n != nil {
				en.snaps = append(en.snaps, *n)
			}
		}
	}
	for _, n := range t.acled {
		en.snaps = append(en.snaps, *n)
	}
}

// diverge gives m a tree of its own, a copy of the committed one, from
// which it goes on at its own pace; the log is recorded from now on.
// Called with core.mu held.
func (e *Ensemble) diverge(m *member) {
	s := e.core
	if m.view.tree != s.tree {
		return
	}
	m.view.tree = s.tree.clone()
	s.tree.rec = &s.txnBuf
	m.eph = make(map[int64]*ephemeralSet)
	for id, sess := range s.sessions {
		if sess.ephemerals != nil {
			m.eph[id] = sess.ephemerals.clone()
		}
	}
}

// settle makes m read the committed tree again if it has caught up and
// keeps up; when no member diverges any more, the log is no longer
// recorded. Called with core.mu held.
func (e *Ensemble) settle(m *member) {
	s := e.core
	v := m.view
	if v.tree == s.tree || v.zxid != s.zxid || !m.up || m.isolated || m.lagging || e.leader < 0 {
		return
	}
	v.tree = s.tree
	m.eph = nil
	for _, o := range e.members {
		if o.view.tree != s.tree {
			return
		}
	}
	s.tree.rec = nil
	e.trim()
}

// clone returns a deep copy of t: the same nodes, fields and children
// tables, each bucket's entries in the same order, so that the copy lists
// children as t does and evolves as t would.
func (t *tree) clone() *tree {
	c := &tree{seed: t.seed, mask: t.mask, nodes: make(map[uint64]*node, len(t.nodes)), sorted: t.sorted}
	c.root = c.cloneNode(t.root, nil)
	return c
}

func (c *tree) cloneNode(n, parent *node) *node {
	m := new(node)
	*m = *n
	m.parent, m.next, m.children = parent, nil, nil
	c.index(m)
	if n.children == nil {
		return m
	}
	cs := &childSet{table: make([]*node, len(n.children.table)), n: n.children.n}
	m.children = cs
	for i, head := range n.children.table {
		var last *node
		for ch := head; ch != nil; ch = ch.next {
			cc := c.cloneNode(ch, m)
			if last == nil {
				cs.table[i] = cc
			} else {
				last.next = cc
			}
			last = cc
		}
	}
	return m
}

// applyAll makes m apply every entry it has not. Called with core.mu held.
func (e *Ensemble) applyAll(m *member) {
	for e.applyNext(m) {
	}
}

// applyNext makes m apply its next entry, if any, and reports whether it
// did. Called with core.mu held.
func (e *Ensemble) applyNext(m *member) bool {
	v := m.view
	if v.tree == e.core.tree || v.zxid >= e.core.zxid || len(e.log) == 0 {
		return false
	}
	en := &e.log[v.zxid+1-e.log[0].zxid]
	for _, f := range en.fx {
		if f.insert {
			n := &node{path: f.path, nameAt: int32(strings.LastIndexByte(f.path, '/') + 1), parent: v.tree.get(parentPath(f.path))}
			v.tree.insert(n)
		} else if n := v.tree.get(f.path); n != nil {
			v.tree.remove(n)
		}
	}
	for _, f := range en.eph {
		set := m.eph[f.sess]
		switch {
		case f.add && set == nil:
			set = newEphemeralSet()
			m.eph[f.sess] = set
			fallthrough
		case f.add:
			set.add(f.n, &v.tree.sets, false)
		case set != nil:
			set.remove(f.n, &v.tree.sets, false)
		}
	}
	for i := range en.snaps {
		sn := &en.snaps[i]
		if n := v.tree.get(sn.path); n != nil {
			n.version, n.cversion, n.aversion, n.kind = sn.version, sn.cversion, sn.aversion, sn.kind
			n.data, n.acl, n.owner = sn.data, sn.acl, sn.owner
			n.czxid, n.mzxid, n.pzxid, n.ctime, n.mtime = sn.czxid, sn.mzxid, sn.pzxid, sn.ctime, sn.mtime
		}
	}
	v.zxid = en.zxid
	if len(e.seqs) > 0 {
		e.applySeqs(m, en.zxid)
	}
	for _, ev := range en.events {
		v.trigger(ev.typ, ev.path, ev.acl)
	}
	if len(m.queue) > 0 {
		e.release(m)
	}
	return true
}

// seqPatch is a SetNextSequence call on the committed state at zxid.
type seqPatch struct {
	zxid int64
	path string
	next int32
}

// setNextSequence follows SetNextSequence on the committed tree: each
// member that fell behind sets its node's counter when it has applied
// zxid (at once if it has), so that its later replays, which copy the
// committed fields of the nodes a transaction touched, agree. Called with
// core.mu held.
func (e *Ensemble) setNextSequence(path string, next int32) {
	s := e.core
	for _, m := range e.members {
		if v := m.view; v.tree != s.tree && v.zxid == s.zxid {
			if n := v.tree.get(path); n != nil {
				n.cversion = next
			}
		}
	}
	for _, m := range e.members {
		if m.view.zxid < s.zxid {
			e.seqs = append(e.seqs, seqPatch{zxid: s.zxid, path: path, next: next})
			return
		}
	}
}

// applySeqs sets, on m that just applied zxid, the counters of the
// SetNextSequence calls made at zxid. Called with core.mu held.
func (e *Ensemble) applySeqs(m *member, zxid int64) {
	for _, p := range e.seqs {
		if p.zxid == zxid {
			if n := m.view.tree.get(p.path); n != nil {
				n.cversion = p.next
			}
		}
	}
}

// applyCreateSession makes m apply the commits it lags behind up to the
// createSession the leader just committed for a session opening through
// it: a ZooKeeper member answers the connect once it applied that
// transaction (FinalRequestProcessor, behind every earlier commit), so the
// client reads no state older than its session. A member that lags goes
// on lagging after it. It reports whether m applied anything while
// clients wait for a member (call redialWaiting after unlocking). Called
// with core.mu held, right after the createSession's commit.
func (e *Ensemble) applyCreateSession(m *member) (redial bool) {
	applied := false
	for m.view.zxid < e.core.zxid && e.applyNext(m) {
		applied = true
	}
	if !applied {
		return false
	}
	e.settle(m)
	e.trim()
	return len(e.waiting) > 0
}

// trim drops the entries every member applied. Called with core.mu held.
func (e *Ensemble) trim() {
	low := e.core.zxid
	for _, m := range e.members {
		low = min(low, m.view.zxid)
	}
	if len(e.seqs) > 0 { // the calls every member reached
		kept := e.seqs[:0]
		for _, p := range e.seqs {
			if p.zxid > low {
				kept = append(kept, p)
			}
		}
		e.seqs = kept
	}
	if len(e.log) == 0 {
		return
	}
	k := int(low + 1 - e.log[0].zxid)
	if k <= 0 || 2*k < len(e.log) {
		return // shifting the log for a few entries would cost more than it frees
	}
	// The applied entries' buffers are kept for the next ones (nextEntry);
	// the node copies they hold are dropped.
	for i := range e.log[:k] {
		clear(e.log[i].snaps)
		clear(e.log[i].eph)
	}
	n := len(e.log) - k
	for i := range n { // rotate the applied entries behind the others
		e.log[i], e.log[i+k] = e.log[i+k], e.log[i]
	}
	e.log = e.log[:n]
}

// nextEntry appends an empty entry to the log, reusing the buffers of one
// trimmed before. Called with core.mu held.
func (e *Ensemble) nextEntry() *entry {
	if len(e.log) < cap(e.log) {
		e.log = e.log[:len(e.log)+1]
		en := &e.log[len(e.log)-1]
		en.fx, en.snaps, en.events, en.eph = en.fx[:0], en.snaps[:0], en.events[:0], en.eph[:0]
		return en
	}
	e.log = append(e.log, entry{})
	return &e.log[len(e.log)-1]
}

// release answers, in order, the queued requests whose zxid m has applied,
// each session's in the order they came. The ready ones leave the queue
// before any is answered: answering one may close its connection (a lost
// reply), which fails what its session still has in the queue. Called
// with core.mu held.
func (e *Ensemble) release(m *member) {
	var blocked []*Session
	var ready []*pendingReply
	kept := m.queue[:0]
	for _, p := range m.queue {
		switch {
		case !p.sess.connected:
			p.resp = Response{Err: zksim.ErrConnectionLoss, Closed: true}
			close(p.done)
		case p.wait > m.view.zxid || containsSession(blocked, p.sess):
			blocked = append(blocked, p.sess)
			kept = append(kept, p)
		default:
			ready = append(ready, p)
		}
	}
	clear(m.queue[len(kept):])
	m.queue = kept
	for _, p := range ready {
		if !p.sess.connected { // an earlier reply of its session closed the connection
			p.resp = Response{Err: zksim.ErrConnectionLoss, Closed: true}
			close(p.done)
			continue
		}
		if !p.write {
			p.sess.apply(&p.req, &p.resp)
		}
		if p.sess.finish(m, &p.req, &p.resp, p.fault) {
			// A Delay holds it: it leaves, and its Do returns, when the
			// Delay ends (releaseHeld), or fails with the connection.
			p.sess.held = append(p.sess.held, heldItem{req: &p.req, resp: &p.resp, done: p.done})
			continue
		}
		close(p.done)
	}
}

func containsSession(list []*Session, s *Session) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// queued reports whether sess has a request waiting at m. Called with
// core.mu held.
func (m *member) queued(sess *Session) bool {
	for _, p := range m.queue {
		if p.sess == sess {
			return true
		}
	}
	return false
}

// failAll fails every waiting request of m with err and closes their
// connections. Called with core.mu held.
func (m *member) failAll(err error) {
	for _, p := range m.queue {
		p.resp = Response{Err: err, Closed: true}
		close(p.done)
	}
	clear(m.queue)
	m.queue = m.queue[:0]
}

// failSession fails the waiting requests of sess, whose connection closed.
// Called with core.mu held.
func (m *member) failSession(sess *Session) {
	kept := m.queue[:0]
	for _, p := range m.queue {
		if p.sess == sess {
			p.resp = Response{Err: zksim.ErrConnectionLoss, Closed: true}
			close(p.done)
			continue
		}
		kept = append(kept, p)
	}
	clear(m.queue[len(kept):])
	m.queue = kept
}
