package explore

import (
	"errors"
	"slices"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
)

// What a third party (an operator) does to the election's directory:
// deletes a candidate's node (the leader's most often, and while its
// connection is down), sets two candidates' data in one multi, creates
// nodes that are not candidates.

// deleteCandidate: a third party (an operator) deletes a candidate's
// node, the leader's most often, or the directory once it is
// empty.
func (a *electionAPI) deleteCandidate(t *rapid.T) {
	w := a.w
	var nodes []string
	if a.single {
		if w.owner(a.path) != 0 {
			nodes = append(nodes, a.path)
		}
	} else {
		for _, name := range w.children(electionDir) {
			if w.owner(electionDir+"/"+name) != 0 {
				nodes = append(nodes, electionDir+"/"+name)
			}
		}
		if l := a.leaderNow(); l != "" {
			nodes = append(nodes, l, l)
		}
	}
	if ok, st, err := w.observer.Exists(w.ctx, electionDir); err == nil && ok && st.NumChildren == 0 {
		nodes = append(nodes, electionDir)
	}
	if len(nodes) == 0 {
		t.SkipNow()
	}
	p := rapid.SampledFrom(nodes).Draw(t, "node")
	a.noteDeleted(p)
	w.inject(t, faults.DeleteNode(p))
}

// deleteWhileDown: a leader's connection goes down, a third party
// deletes its node meanwhile, and the connection comes back: the
// leadership, Doubtful while down, is Lost once it has checked its
// node (see checkLost).
func (a *electionAPI) deleteWhileDown(t *rapid.T) {
	w := a.w
	var cs []*client
	for _, c := range w.awake() {
		lc := a.f.cs[c.idx]
		if lc.h != nil && lc.holding.Load() && lc.h.State() == recipes.Held && lc.conn == c.conn && !c.partitioned && w.owner(a.holdKey(lc)) == c.conn.SessionID() {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "delete while down")
	key := a.holdKey(a.f.cs[c.idx])
	w.inject(t, faults.Disconnect(c.conn.Index(), 200*time.Millisecond))
	if a.noteDeleted(key) {
		w.inject(t, faults.DeleteNode(key))
	}
}

// setTwo: a third party sets the two lowest candidates' data (each
// its own, unchanged) in one multi, so that both nodes have the same
// mzxid, then deletes the leader's node: the next leader is another
// node, which an Observe reports though its mzxid is the last one's.
func (a *electionAPI) setTwo(t *rapid.T) {
	w := a.w
	var nodes []seqNode
	for _, name := range w.children(electionDir) {
		if n, ok := a.candidate(name); ok {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) < 2 {
		t.SkipNow()
	}
	sortSeqNodes(nodes)
	settle := func() {
		for i := 0; i < 50 && w.sw.Enabled() > 0 && !w.violated(); i++ {
			w.step(t)
			synctest.Wait()
		}
	}
	if !slices.ContainsFunc(w.clients, func(c *client) bool { return c.busy("observe") }) {
		a.observe(t) // someone observes
		settle()
	}
	var ops []zksim.Op
	for _, n := range nodes[:2] {
		data, _, err := w.observer.Get(w.ctx, electionDir+"/"+n.name)
		if err != nil {
			t.SkipNow()
		}
		ops = append(ops, &zksim.SetOp{Path: electionDir + "/" + n.name, Data: data, Version: -1})
	}
	if _, err := w.observer.Multi(w.ctx, ops...); err != nil {
		t.Fatalf("set two: %v", err)
	}
	w.trace("a third party sets %s and %s in one multi", nodes[0].name, nodes[1].name)
	settle() // the observers read the leader's new mzxid first
	l := electionDir + "/" + nodes[0].name
	if _, st, err := w.observer.Exists(w.ctx, l); err == nil && st != nil {
		a.delMu.Lock()
		a.deletedIDs[st.Czxid], a.deletedPaths[l] = true, true
		a.delMu.Unlock()
		w.inject(t, faults.DeleteNode(l))
	}
	w.runFor(t, sharedWait+100*time.Millisecond) // long enough for checkObservers to see a lag
}

// createJunk: a third party creates a node in the directory that is not a
// candidate node; the recipe must ignore it.
func (a *electionAPI) createJunk(t *rapid.T) {
	w := a.w
	if !a.ownLayout() {
		t.SkipNow() // junk takes part in Curator's line (election_layout.go)
	}
	names := junkNames
	if w.cfg.members == 0 {
		// (Not on the ensemble, whose committed fail files draw from
		// junkNames as it was.)
		names = append(slices.Clip(junkNames), oneServerJunk...)
	}
	name := rapid.SampledFrom(names).Draw(t, "junk")
	_, _ = w.observer.Create(w.ctx, electionDir, nil, zksim.ModePersistent, zksim.OpenACL())
	if _, err := w.observer.Create(w.ctx, electionDir+"/"+name, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil && !errors.Is(err, zksim.ErrNodeExists) {
		t.Fatalf("create junk: %v", err)
	}
	w.trace("a third party creates %s/%s", electionDir, name)
}

// junkNames are children of an election's directory that are not
// candidate nodes: no sequence number after "n_" as the server formats it
// (ten digits, or a minus sign and nine or ten).
var junkNames = []string{
	"n_123456789",             // nine digits
	"_c_junk-n_+000000001",    // a sign the server never writes
	"_c_junk-n_3000000000",    // out of the int32 range
	"_c_junk-n_99999999999",   // eleven digits, out of range
	"_c_junk-n_00000000x1",    // not a number
	"_c_junk-n_",              // no number
	"_c_junk-lock-0000000001", // another recipe's marker
}

// oneServerJunk are more such children, on one server: protected names
// (a version 4 GUID) whose name part holds one of Curator's names, but not
// at its start, so no layout takes them for Curator's nodes (Foreign).
var oneServerJunk = []string{
	"_c_ffffffff-ffff-4fff-bfff-ffffffffffff-x-lock-0000000001",
	"_c_ffffffff-ffff-4fff-bfff-ffffffffffff-x-latch-0000000001",
}
