package explore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The flaws of issue 25: code that trusts a read served by a lagging
// ensemble member, where a sync first would have made it see what the
// leader had committed. Both run on a 3-member ensemble, whose faults the
// harness draws, and a machine action of their own lags every follower at
// once (LagFollowers), so that a read served by a member behind is likely.
// Each machine with its sync (staleElectorFamily.sync,
// staleDoneFamily.sync) is the correct code, which must pass: its
// property test runs it (TestStaleReadsWithSync).
//
//   - ElectorTrustsStaleRead: an elector that led is cut off, and opens
//     a new client before its old session has expired (it will not wait
//     for one disconnected that long); once it hears that the old session
//     expired, it looks for its old node through the new client (Apache
//     Helix, issue 1118: the new session landed on a slower server). A
//     member that applied the new session's creation but not the expiry,
//     committed after it, still shows the node, and the elector believes
//     it still leads while another is elected: two leaders. (A session
//     opened after the expiry cannot read it stale: its member applies
//     the expiry before it answers the connect.)
//   - WorkerDoneFromStaleListing: a worker declares the work done when
//     its listing of the work directory is empty (Apache Pravega, issues
//     3755 and 3958); a member that has not applied the producer's creates
//     lists none: done with work still to do.
func init() {
	Flaws = append(Flaws,
		Flaw{Name: "ElectorTrustsStaleRead", Want: string(kindTwoLeaders), Machine: staleElectorMachine(false)},
		Flaw{Name: "WorkerDoneFromStaleListing", Want: string(kindDoneTooEarly), Machine: staleDoneMachine(false)},
	)
}

// staleConfig is the machines' world: clients on a 3-member ensemble,
// with every fault of the catalogue.
func staleConfig(clients int) worldConfig {
	return worldConfig{clients: clients, faults: true, members: ensembleMembers}
}

// staleElectorMachine is the elector's machine, with or without the sync.
func staleElectorMachine(withSync bool) Machine {
	return Machine{cfg: staleConfig(3), newFamily: func(w *world, _ *rapid.T) family {
		return newStaleElector(w, withSync)
	}}
}

// staleDoneMachine is the worker's machine, with or without the sync.
func staleDoneMachine(withSync bool) Machine {
	return Machine{cfg: staleConfig(3), newFamily: func(w *world, _ *rapid.T) family {
		return newStaleDone(w, withSync)
	}}
}

const (
	staleElectDir = "/elect"
	staleWorkDir  = "/work"
	// staleTraffic is a node other applications write (backlog times
	// before an expiry): a lagging follower has those commits to apply
	// first, as a slow follower under load has.
	staleTraffic = "/traffic"
	backlog      = 6
)

// lagFollowers lags every member that follows and does not lag yet.
// It reports whether it lagged one.
func lagFollowers(t *rapid.T, w *world) bool {
	e := w.sw.Ensemble()
	lagged := false
	for m := range w.sw.Members() {
		if e.Role(m) == zkmem.RoleFollower && !w.sw.Lagging(m) {
			w.inject(t, faults.Lag(m))
			lagged = true
		}
	}
	return lagged
}

// staleElector is an election: each client campaigns with an ephemeral
// sequential node under /elect and leads while its node is the lowest.
// The flaw is in renew: see ElectorTrustsStaleRead.
type staleElector struct {
	w    *world
	sync bool

	mu      sync.Mutex
	node    map[int]string // each client's node, as it believes
	leading map[int]bool
	// on is the session each client leads or campaigns on.
	on map[int]*sim.Conn
	// led is the node each client last led with, until it resigned or
	// saw the node deleted: a session that expired keeps it.
	led map[int]string
	// spare is the client a process opened while its old one was cut
	// off, before the old session expired (ExpireLeader); renew looks
	// for the old node through it. It stays open, idle unless the
	// process leads through it.
	spare map[int]*sim.Conn
}

func newStaleElector(w *world, withSync bool) *staleElector {
	_, _ = w.observer.Create(w.ctx, staleElectDir, nil, zksim.ModePersistent, zksim.OpenACL())
	_, _ = w.observer.Create(w.ctx, staleTraffic, nil, zksim.ModePersistent, zksim.OpenACL())
	return &staleElector{w: w, sync: withSync, node: map[int]string{}, leading: map[int]bool{},
		on: map[int]*sim.Conn{}, led: map[int]string{}, spare: map[int]*sim.Conn{}}
}

// set records c's node, whether it leads with it, and the session it
// does so on.
func (f *staleElector) set(c *client, conn *sim.Conn, node string, leading bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.node[c.idx], f.leading[c.idx], f.on[c.idx] = node, leading, conn
	if leading {
		f.led[c.idx] = node
	}
}

// forget records that c no longer leads with node, and knows it.
func (f *staleElector) forget(c *client, node string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.led[c.idx] == node {
		delete(f.led, c.idx)
	}
}

// campaign runs for leadership on c's session until its node goes, its
// session ends or ctx ends; any error ends it.
func (f *staleElector) campaign(ctx context.Context, c *client) error {
	conn := c.session()
	// Its nodes carry its session's name, so that it finds the node a
	// create whose reply was lost made (a protected create). It syncs
	// first: the member it reconnected to after the loss may not have
	// applied that create (the client never saw its zxid), and a second
	// node would stay the lowest with nobody leading on it.
	prefix := fmt.Sprintf("c%d-n-", conn.Index())
	if _, err := conn.Sync(ctx, staleElectDir); err != nil {
		return err
	}
	names, _, err := conn.Children(ctx, staleElectDir)
	if err != nil {
		return err
	}
	me := ""
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			me = staleElectDir + "/" + n
		}
	}
	if me == "" {
		if me, err = conn.Create(ctx, staleElectDir+"/"+prefix, nil, zksim.ModeEphemeralSequential, zksim.OpenACL()); err != nil {
			return err
		}
	}
	f.set(c, conn, me, false)
	defer func() {
		f.set(c, conn, me, false)
		if ctx.Err() != nil {
			f.forget(c, me) // it resigns
			_ = conn.Delete(context.WithoutCancel(ctx), me, -1)
		}
	}()
	for {
		names, _, err := conn.Children(ctx, staleElectDir)
		if err != nil {
			return err
		}
		slices.SortFunc(names, compareSeq)
		i := slices.Index(names, path.Base(me))
		if i < 0 {
			return zksim.ErrNoNode
		}
		watch := me
		if i > 0 {
			watch = staleElectDir + "/" + names[i-1]
		}
		ok, _, ch, err := conn.ExistsW(ctx, watch)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		f.set(c, conn, me, i == 0)
		select {
		case ev := <-ch:
			f.set(c, conn, me, false)
			if ev.Type != zksim.EventNodeDeleted {
				return zksim.ErrConnectionLoss // a session event: start over
			}
			if watch == me {
				f.forget(c, me)
				return zksim.ErrNoNode
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (f *staleElector) actions() map[string]func(*rapid.T) {
	w := f.w
	return map[string]func(*rapid.T){
		"Campaign": func(t *rapid.T) {
			c := drawClient(t, w.awake(), "campaign")
			if c.busy("") || !c.start("campaign", func(ctx context.Context) error { return f.campaign(ctx, c) }) {
				t.SkipNow()
			}
		},
		"Resign": func(t *rapid.T) {
			c := drawClient(t, w.awake(), "resign")
			if !c.busy("campaign") {
				t.SkipNow()
			}
			c.stop("campaign")
		},
		"LagFollowers": func(t *rapid.T) {
			if !lagFollowers(t, w) {
				t.SkipNow()
			}
		},
		// ExpireLeader: once a client leads (the idle ones campaign, for
		// up to a session timeout), its connection is cut off, and its
		// process opens a new client (spare) rather than wait for the old
		// one; then its old session expires, and the old client, back,
		// hears of it (renew follows).
		"ExpireLeader": func(t *rapid.T) {
			defer w.hw.Quiet()()
			if len(f.leaders()) == 0 {
				f.campaignIdle(nil)
				w.hw.RunUntil(t, sessionTimeout, func() bool { return len(f.leaders()) > 0 })
			}
			var awake []*client // a paused process could not hear of its expiry
			for _, c := range f.leaders() {
				if !c.paused() {
					awake = append(awake, c)
				}
			}
			c := drawClient(t, awake, "expire leader")
			f.campaignIdle(c) // the others, to be elected after it
			w.partition(t, c)
			spare, err := w.sw.Connect()
			if err != nil {
				w.heal(t, c)
				if w.sw.Members() > 1 && errors.Is(err, zksim.ErrConnectionLoss) {
					t.SkipNow() // no member takes a new session now (an election)
				}
				t.Fatalf("connect: %v", err)
			}
			w.trace("p%d opens a new client: session c%d", c.idx, spare.Index())
			f.mu.Lock()
			f.spare[c.idx] = spare
			f.mu.Unlock()
			// The spare's member applied the commits up to its session's
			// creation. The followers lag, behind other applications'
			// writes and then the expiry, which the old client hears of
			// as it reconnects: the spare's member may not have applied
			// it yet.
			lagFollowers(t, w)
			for range backlog {
				if _, err := w.observer.Set(w.ctx, staleTraffic, nil, -1); err != nil {
					t.Fatalf("traffic: %v", err)
				}
			}
			w.inject(t, faults.Expire(c.conn.Index()))
			w.heal(t, c)
			for i := 0; i < 20 && c.conn.State() != zksim.StateExpired && w.sw.Enabled() > 0 && !w.violated(); i++ {
				w.step(t)
			}
		},
	}
}

// campaignIdle starts a campaign for each client other than except that
// is not paused, runs nothing and does not believe it leads.
func (f *staleElector) campaignIdle(except *client) {
	for _, c := range f.w.awake() {
		if c != except && !c.busy("") && !f.leads(c) {
			c.start("campaign", func(ctx context.Context) error { return f.campaign(ctx, c) })
		}
	}
}

// leads reports whether c believes it leads.
func (f *staleElector) leads(c *client) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leading[c.idx]
}

// leaders returns the clients that lead on their process's session, live.
func (f *staleElector) leaders() []*client {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*client
	for _, c := range f.w.clients {
		if f.leading[c.idx] && f.on[c.idx] == c.conn && f.w.sessionLive(c) {
			out = append(out, c)
		}
	}
	return out
}

// renew: c has a new session, its old one expired. If it led then, it
// looks for its old node through the client it opened before the expiry
// (spare), or else on the new session, and leads on through it if the
// node is there: with the sync first, the member has applied the expiry,
// which deleted the node; without it (the flaw), the spare's member, which
// applied the spare's creation and not the expiry committed after it, may
// still show it. (The new session's member applied the expiry before it
// answered the connect.)
func (f *staleElector) renew(c *client) {
	f.mu.Lock()
	old := f.led[c.idx]
	delete(f.led, c.idx)
	f.leading[c.idx] = false
	conn := f.spare[c.idx]
	delete(f.spare, c.idx)
	f.mu.Unlock()
	if old == "" {
		return
	}
	if conn == nil {
		conn = c.session()
	}
	c.start("resume", func(ctx context.Context) error {
		if f.sync {
			if _, err := conn.Sync(ctx, staleElectDir); err != nil {
				return err
			}
		}
		ok, _, err := conn.Exists(ctx, old)
		if err == nil && ok {
			f.set(c, conn, old, true) // still ours, it believes, and it leads on
		}
		return err
	})
}

// check: at most one client leads on a live session.
func (f *staleElector) check() {
	f.mu.Lock()
	defer f.mu.Unlock()
	var leaders []int
	for _, c := range f.w.clients {
		if f.leading[c.idx] && f.w.hw.SessionLive(f.on[c.idx].SessionID()) {
			leaders = append(leaders, c.idx)
		}
	}
	if len(leaders) > 1 {
		f.w.violate(kindTwoLeaders, "processes %v lead on live sessions", leaders)
	}
}

// live: every client that does not lead campaigns, until the owner of the
// lowest node leads.
func (f *staleElector) live() bool {
	f.campaignIdle(nil)
	names := f.w.children(staleElectDir)
	if len(names) == 0 {
		return false
	}
	slices.SortFunc(names, compareSeq)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.w.clients {
		if f.leading[c.idx] && f.node[c.idx] == staleElectDir+"/"+names[0] && f.w.hw.SessionLive(f.on[c.idx].SessionID()) {
			return true
		}
	}
	return false
}

func (f *staleElector) stuck() string { return "the owner of the lowest node does not lead" }

// staleDone is a work directory: client 0 produces items (persistent
// sequential nodes under /work), the others take them (delete them), and
// any client may check whether the work is done: its listing of /work is
// empty. The flaw is in the check: see WorkerDoneFromStaleListing.
type staleDone struct {
	w    *world
	sync bool

	mu    sync.Mutex
	acked []string // items whose create returned, in order
}

func newStaleDone(w *world, withSync bool) *staleDone {
	_, _ = w.observer.Create(w.ctx, staleWorkDir, nil, zksim.ModePersistent, zksim.OpenACL())
	return &staleDone{w: w, sync: withSync}
}

func (f *staleDone) actions() map[string]func(*rapid.T) {
	w := f.w
	return map[string]func(*rapid.T){
		"Add": func(t *rapid.T) {
			if !f.add() {
				t.SkipNow()
			}
		},
		// AddWhileLagging: the followers lag, the producer adds an item
		// and hears that it did, and a client checks at once.
		"AddWhileLagging": func(t *rapid.T) {
			lagFollowers(t, w)
			if !f.add() {
				t.SkipNow()
			}
			for i := 0; i < 20 && w.clients[0].busy("add") && w.sw.Enabled() > 0 && !w.violated(); i++ {
				w.step(t)
			}
			if c := drawClient(t, w.awake(), "check"); !c.busy("") {
				f.startCheck(c)
			}
		},
		"Take": func(t *rapid.T) {
			var workers []*client
			for _, c := range w.awake() {
				if c.idx > 0 {
					workers = append(workers, c)
				}
			}
			c := drawClient(t, workers, "take")
			if c.busy("") {
				t.SkipNow()
			}
			conn := c.session()
			c.start("take", func(ctx context.Context) error {
				names, _, err := conn.Children(ctx, staleWorkDir)
				if err != nil || len(names) == 0 {
					return err
				}
				slices.SortFunc(names, compareSeq)
				return conn.Delete(ctx, staleWorkDir+"/"+names[0], -1)
			})
		},
		"Check": func(t *rapid.T) {
			c := drawClient(t, w.awake(), "check")
			if c.busy("") {
				t.SkipNow()
			}
			f.startCheck(c)
		},
		"LagFollowers": func(t *rapid.T) {
			if !lagFollowers(t, w) {
				t.SkipNow()
			}
		},
	}
}

func (f *staleDone) renew(*client) {}
func (f *staleDone) check()        {}
func (f *staleDone) live() bool    { return true }
func (f *staleDone) stuck() string { return "" }

// add starts the producer's adding an item, unless it is paused or busy.
func (f *staleDone) add() bool {
	c := f.w.clients[0]
	if c.paused() || c.busy("") {
		return false
	}
	conn := c.session()
	return c.start("add", func(ctx context.Context) error {
		name, err := conn.Create(ctx, staleWorkDir+"/item-", nil, zksim.ModePersistentSequential, zksim.OpenACL())
		if err == nil {
			f.mu.Lock()
			f.acked = append(f.acked, name)
			f.mu.Unlock()
		}
		return err
	})
}

// startCheck starts c's check: it lists the work directory (after a sync,
// with the sync) and declares the work done if it is empty.
func (f *staleDone) startCheck(c *client) {
	w := f.w
	f.mu.Lock()
	before := slices.Clone(f.acked) // created before the check began
	f.mu.Unlock()
	conn := c.session()
	c.start("check", func(ctx context.Context) error {
		if f.sync {
			if _, err := conn.Sync(ctx, staleWorkDir); err != nil {
				return err
			}
		}
		names, _, err := conn.Children(ctx, staleWorkDir)
		if err != nil || len(names) > 0 {
			return err
		}
		// Done, it declares: every item created before the check must be
		// gone.
		for _, item := range before {
			if ok, _, _ := w.observer.Exists(w.ctx, item); ok {
				w.violate(kindDoneTooEarly, "p%d found %s empty; %s, created before it looked, is there", c.idx, staleWorkDir, item)
			}
		}
		return nil
	})
}
