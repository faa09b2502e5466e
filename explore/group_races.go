package explore

import (
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/zkmem"
)

// The races the group machines arrange on purpose, rare otherwise: a
// session expired while a call waits on a watch, a newcomer joining an
// open round late, a third party deleting the ready node or a member's
// node there (see group_invariants.go for what each must not break).

// expireWaiting: see ExpireWaiting in actions.
func (f *groupFamily) expireWaiting(t *rapid.T) {
	if !f.w.cfg.faults {
		t.SkipNow()
	}
	var renewing []*client
	for _, c := range f.w.awake() {
		if c.renewing != nil {
			renewing = append(renewing, c)
		}
	}
	c := drawClient(t, renewing, "expire")
	if f.leave && !c.busy("") {
		if len(f.can(func(m *member) bool { return m.entered && !m.left })) == 0 && !f.anyBusy("leave") {
			for _, o := range f.can(func(m *member) bool { return !m.entered }) {
				f.enter(o)
			}
			f.w.runFor(t, 200*time.Millisecond)
		}
		if len(f.can(func(m *member) bool { return m.entered && !m.left && !m.leaving })) > 1 && c.renewing != nil && !c.busy("") {
			f.mu.Lock()
			m := f.ms[c.idx]
			ok := m.entered && !m.leaving
			f.mu.Unlock()
			if ok {
				f.leaveGroup(c)
				f.w.runFor(t, 50*time.Millisecond)
			}
		}
	}
	if c.renewing == nil || !c.busy("") || f.w.inFlight(c) {
		return
	}
	f.w.inject(t, faults.Expire(c.conn.Index()))
}

// lateJoin: a member joins the open round late, just after the last
// member of the round listed the members and found no other: the others
// enter (if no round is open) and leave, the last one's replies are held back once it has
// listed, while the newcomer enters and writes the ready node, so its
// versioned delete of the ready node fails and its Leave must look again
// (and wait for the newcomer), not fail nor return.
func (f *groupFamily) lateJoin(t *rapid.T) {
	j := drawClient(t, f.can(func(m *member) bool { return !m.entered }), "joiner")
	f.whenListedAlone(t, j, func(alone int) {
		f.w.inject(t, faults.Delay(alone, time.Second))
		f.enter(j)
	})
}

// lateDelete: as in lateJoin, the members of an open round leave; once
// the last of them has listed the members and found no other, a third
// party deletes the ready node, or that member's own node, before its
// multi deletes both. The multi then fails, and that member's Leave must
// still end its round and return nil (Leave's guarantee: it returns nil
// only once its round's ready node is deleted), not fail.
//
// With lose, that multi's request is also lost on its way: the member
// must then look (at once: a first loss) whether it took effect, and not
// take its own node gone for its round over.
func (f *groupFamily) lateDelete(t *rapid.T) {
	node := rapid.SampledFrom([]string{"ready", "member", "none"}).Draw(t, "node")
	lose := rapid.Bool().Draw(t, "lose")
	f.whenListedAlone(t, nil, func(alone int) {
		if lose {
			f.w.inject(t, faults.DropNextRequest(alone, zkmem.OpMulti))
		}
		p := f.gate()
		if ok, st, err := f.w.observer.Exists(f.w.ctx, p); node == "ready" && err == nil && ok {
			f.mu.Lock()
			f.cut[st.Czxid] = true
			f.mu.Unlock()
		}
		if node == "member" {
			for _, c := range f.w.clients {
				if c.conn.Index() == alone {
					if mine := f.w.ownedUnder(f.dir, c.conn.SessionID()); len(mine) > 0 {
						p = f.dir + "/" + mine[0]
					}
				}
			}
		}
		f.w.inject(t, faults.Delay(alone, 100*time.Millisecond))
		if node != "none" {
			f.w.inject(t, faults.DeleteNode(p))
		}
	})
}

// lateJoinEmpty: as in lateDelete, a third party deletes the member node
// of the last member of an open round once it has listed the members and
// found no other; its Leave then finds no member node at all, and deletes
// the ready node of its round itself. Once it has listed the members
// again, a newcomer joins the round (writing the ready node) before that
// delete, which fails: the Leave must look again and wait for the
// newcomer, not return nor fail (Leave's guarantee: it returns nil only
// once its round's ready node is deleted).
func (f *groupFamily) lateJoinEmpty(t *rapid.T) {
	j := drawClient(t, f.can(func(m *member) bool { return !m.entered }), "joiner")
	f.whenListedAlone(t, j, func(alone int) {
		p := ""
		for _, c := range f.w.clients {
			if c.conn.Index() == alone {
				if mine := f.w.ownedUnder(f.dir, c.conn.SessionID()); len(mine) > 0 {
					p = f.dir + "/" + mine[0]
				}
			}
		}
		if p == "" {
			return
		}
		f.w.inject(t, faults.Delay(alone, 100*time.Millisecond))
		f.w.inject(t, faults.DeleteNode(p))
		f.mu.Lock()
		f.lister, f.listedAlone = map[int]bool{alone: true}, -1
		f.mu.Unlock()
		// Its deliveries wait out the delay (the ready node's multi fails,
		// it looks again), one step at a time from then on.
		f.w.runFor(t, 100*time.Millisecond)
		for i := 0; i < 2*lateJoinSteps && f.w.sw.Enabled() > 0 && !f.w.violated(); i++ {
			f.w.step(t)
			f.mu.Lock()
			again := f.listedAlone
			f.mu.Unlock()
			if again >= 0 {
				f.w.inject(t, faults.Delay(alone, 300*time.Millisecond))
				if !j.busy("") {
					f.enter(j)
				}
				return
			}
		}
	})
}

// whenListedAlone opens a round if none is open (without j), has its
// members leave, and calls then with the index of the first of their
// sessions that lists the members and finds no member node but its own.
//
// The calm stretches meet no fault meanwhile (the scheduler's quiet): the
// interleaving is the action's, with the faults then injects.
func (f *groupFamily) whenListedAlone(t *rapid.T, j *client, then func(alone int)) {
	defer f.w.hw.Quiet()()
	open := func() bool {
		return len(f.can(func(m *member) bool { return m.entered && !m.left })) > 0 || f.anyBusy("leave")
	}
	if !open() {
		// Open a round without the newcomer.
		for _, c := range f.can(func(m *member) bool { return !m.entered }) {
			if c != j {
				f.enter(c)
			}
		}
		f.w.runFor(t, 200*time.Millisecond)
		if !open() {
			return
		}
	}
	for _, c := range f.can(func(m *member) bool { return m.entered && !m.leaving && !m.left }) {
		if !c.partitioned {
			f.leaveGroup(c)
		}
	}
	f.mu.Lock()
	f.lister, f.listedAlone = map[int]bool{}, -1
	for _, c := range f.w.awake() {
		if c != j && c.busy("leave") && !c.partitioned {
			f.lister[c.conn.Index()] = true
		}
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.lister = nil
		f.mu.Unlock()
	}()
	for i := 0; i < lateJoinSteps && f.w.sw.Enabled() > 0 && !f.w.violated(); i++ {
		f.w.step(t)
		f.mu.Lock()
		alone := f.listedAlone
		f.mu.Unlock()
		if alone >= 0 {
			then(alone)
			f.w.runFor(t, 200*time.Millisecond)
			return
		}
	}
}

// anyBusy reports whether an awake client runs the call name.
func (f *groupFamily) anyBusy(name string) bool {
	for _, c := range f.w.awake() {
		if c.busy(name) {
			return true
		}
	}
	return false
}

// lateJoinSteps bounds the steps lateJoin takes waiting for the leaver to
// list the members.
const lateJoinSteps = 30

// noteListing records (for lateJoin) that a client of lister listed the
// group's directory and found no member node but its own.
func (f *groupFamily) noteListing(c *client, r *zkmem.Request) {
	if r.Op != zkmem.OpGetChildren || r.Path != f.dir {
		return
	}
	f.mu.Lock()
	lister := f.lister[c.conn.Index()]
	f.mu.Unlock()
	if !lister {
		return
	}
	sid := c.conn.SessionID()
	for _, n := range f.w.children(f.dir) {
		if f.dir+"/"+n != f.gate() && f.w.owner(f.dir+"/"+n) != sid {
			return
		}
	}
	f.mu.Lock()
	if f.listedAlone < 0 {
		f.listedAlone = c.conn.Index()
	}
	f.mu.Unlock()
}
