package explore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The election machines' view of the rest of the election API, beyond
// Campaign and Resign (which the lock machine drives as Acquire and
// Release): Leader, Observe, Proclaim, Guard, Resume, a second Campaign,
// Resign with nothing held; and what a third party does to the election's
// directory (deletes a candidate's node, creates nodes that are not
// candidates). Each call's result is checked against what the machine saw
// of the tree after every step:
//
//   - Leader returns a node that was, at some step, the leader (the lowest
//     candidate in sequence order; for a SingleNode, the node), with that
//     node's czxid as Token, its owner as Session and a value it had; it
//     returns ErrNoLeader only if, at some step during the call, there was
//     no candidate; it "blocks only for the round trips": while nothing
//     changes in the directory it reads no more than pollLimit times;
//   - a Campaign (or a Resume) that returns nil leads: its hold is not
//     NotHeld or Released as it returns; a SingleNode's Campaign waits
//     for the connection after its first connection loss, and no more,
//     and keeps to the retry timing after later ones (newCallConn);
//   - Observe reports only such leaders, never the same (token, value)
//     twice in a row; an observer that is connected, quiet and awake has
//     reported the current leader and its value within sharedWait; its
//     channel closes only when its ctx is done or its session ended, and
//     closes when its ctx is done;
//   - Proclaim by the leader sets its node's value, by anyone else, or by
//     a leader whose node a third party deleted, returns ErrNotLeader; Resign and Guard with nothing held return ErrNotLeader;
//     Campaign while leading or campaigning returns ErrCampaigning; Resume
//     of a node that is not ours (another's, a missing one, one in another
//     directory) returns ErrNotCandidate; a Campaign with an ACL the
//     server refuses returns ErrInvalidACL, creating only once;
//   - a hold becomes Lost only when its node is gone, its Conn expired or
//     closed, or it stayed Doubtful for the session timeout (a Proclaim,
//     which changes its node's data, loses nothing): checkLost;
//   - the leader's node is the lowest candidate (sequence order, across the
//     int32 wrap): a leader that is Held and whose node exists leads;
//   - a holder whose node is gone (deleted by a third party, or its
//     session's) and that has heard all the server has to say is not Held;
//   - nobody deletes another session's node;
//   - nodes that are not candidates (a name without the server's sequence
//     format after "n_") are ignored: the election goes on past them;
//   - a call belongs to the session it began on (recipes/doc.go): each
//     process's library, and each Observe's, may be a sim.Renewing drawn
//     from the seed; a Campaign or Resume that began on one session never
//     returns nil on another (reportCall), an Observe whose session was
//     renewed calls the Conn no more and closes its channel, and a
//     renewing leader's hold of the expired session becomes Lost
//     (lockFamily.ending);
//   - a leadership is Doubtful only while disconnected: connected with
//     nothing in flight it is Held or Lost (checkLost); Resign returns nil,
//     ErrNotLeader, ctx's error or the session's end, never another error,
//     and during a campaign ErrNotLeader, without a request
//     (CampaignAfterLoss).

// electionAPI is the part of the election families beyond the holdable.
type electionAPI struct {
	f      *lockFamily
	w      *world
	single bool   // election.SingleNode; else election.New
	path   string // the single node's path

	mu      sync.Mutex // what client goroutines report
	results []apiResult

	// Machine goroutine only.
	leaders   map[string]map[int64]*seenNode // nodes seen as the leader, by path and czxid
	nodes     map[string]map[int64]*seenNode // every node of the directory seen, by path and czxid
	empty     int                            // checks that found no leader
	owners    map[string]int64               // ephemeral owners at the last check, by path
	curValue  string                         // the leader's value at the last check
	values    int                            // proclaimed values so far
	observers map[*client]*observer
	conns     map[string]*sim.Conn          // the sessions of the API calls, by op
	guards    map[electionDirect]*spinBound // the spin guards of the API calls' Conns
	goneSince map[*client]time.Duration     // a Held holder's node missing since
	ends      map[*client]*holdEnd          // each hold's state at the last check
	calls     []*leaderCall                 // the Leader calls under way

	delMu        sync.Mutex
	deletedIDs   map[int64]bool  // the czxids of the nodes a third party deleted
	deletedPaths map[string]bool // ... and their paths
	// robbed holds, for the single node's path, the sessions whose node
	// there a third party deleted (see applied).
	robbed map[int64]bool
}

// seenNode is what the machine saw of a node.
type seenNode struct {
	czxid, owner int64
	values       map[string]bool
}

// apiResult is the result of an API call, for check to judge.
type apiResult struct {
	c     *client
	what  string
	l     election.Leader
	err   error
	empty int    // a.empty when the call started
	value string // Proclaim's value
	key   string // the node Proclaim acted on
	// refused counts the creates the server refused with ErrInvalidACL
	// (a Campaign with an invalid ACL).
	refused int32
	h       holdable
	conn    *sim.Conn // the session of a Campaign, Resume or Resign
	// renewed is the session a Renewing client's call returned on, when
	// its Renewing renewed the session the call began on (conn).
	renewed *sim.Conn
	state   recipes.HoldState // the hold's state as the call returned
}

// poller counts the reads of a call that waits on watches or reads once
// (an Observe, a Leader): while nothing changes in the directory, it has
// no reason to read again (but after connection losses, a few times).
type poller struct {
	guard *spinBound // its Conn's guard, which counts its calls
	sig   string     // the directory as of the last change seen
	base  int64      // guard's calls when the directory last changed
}

// reads returns the reads since the directory last changed, sig being
// the directory now (dirSig).
func (p *poller) reads(sig string) int64 {
	if sig != p.sig {
		p.sig, p.base = sig, p.guard.calls.Load()
	}
	return p.guard.calls.Load() - p.base
}

// leaderCall is a Leader call under way.
type leaderCall struct {
	c     *client
	polls poller
	done  atomic.Bool
}

// observer is an Observe running on a client.
type observer struct {
	c           *client
	conn        *sim.Conn
	renewing    *sim.Renewing // the client library of conn, if a Renewing
	callsBefore int64         // its calls at the last check before its Renewing renewed
	cancelled   bool          // machine goroutine only
	lagSince    time.Duration // since when it lags behind the leader, -1 if not
	polls       poller        // its reads while nothing changes

	mu      sync.Mutex
	reports []election.Leader
	checked int  // reports already judged
	closed  bool // the channel was closed
	early   bool // ... with its ctx not done
	end     zksim.State
}

// electionHold is an Election as a holdable. Its Acquire campaigns, or,
// with resume set, creates a candidate node by hand and resumes with it
// (Resume), deleting it if Resume fails before it took the node over.
type electionHold struct {
	*election.Election
	c        *client
	conn     *sim.Conn
	resume   bool
	proclaim string   // the value to proclaim once leading, "" for none
	own      *ownSeen // the Election's Conn
}

// ownSeen is a Conn that notes when an Exists of key found the node owned
// by the Conn's session: from then on, a Resume with key has found it
// ours, and deletes it itself if it fails (its doc).
type ownSeen struct {
	zksim.Conn
	mu   sync.Mutex
	key  string
	seen bool
}

// RandReader implements zksim.RandSource: the wrapped Conn's stream.
func (o *ownSeen) RandReader() io.Reader { return zksim.RandReader(o.Conn) }

// Exists implements zksim.Conn.
func (o *ownSeen) Exists(ctx context.Context, p string) (bool, *zksim.Stat, error) {
	ok, st, err := o.Conn.Exists(ctx, p)
	o.mu.Lock()
	if err == nil && ok && p == o.key && st.EphemeralOwner == o.Conn.SessionID() {
		o.seen = true
	}
	o.mu.Unlock()
	return ok, st, err
}

// watch begins noting for key.
func (o *ownSeen) watch(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.key, o.seen = key, false
}

func (o *ownSeen) found() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen
}

func newElectionHold(t *rapid.T, c *client) holdable {
	own := &ownSeen{Conn: libConn(c)}
	h := electionHold{Election: election.New(own, electionDir), c: c, conn: c.conn, own: own}
	if t != nil {
		h.resume = rapid.Bool().Draw(t, "resume")
		if a := apiOf(c); a != nil && rapid.Bool().Draw(t, "proclaim") {
			a.values++ // newHold runs on the machine goroutine
			h.proclaim = fmt.Sprintf("v%d", a.values)
		}
	}
	return h
}

// Acquire campaigns (or resumes), and once it leads proclaims a new
// value if the hold was drawn with one.
func (h electionHold) Acquire(ctx context.Context) error {
	err := h.acquire(ctx)
	if err != nil || h.proclaim == "" {
		return err
	}
	key := h.Key()
	perr := h.Proclaim(ctx, []byte(h.proclaim))
	reportCall(h.c, h.conn, "Proclaim", perr, h, func(r *apiResult) { r.key, r.value = key, h.proclaim })
	return nil
}

func (h electionHold) acquire(ctx context.Context) error {
	if !h.resume {
		err := h.Campaign(ctx, []byte("v"))
		reportCall(h.c, h.conn, "Campaign", err, h)
		return err
	}
	key, err := recipes.CreateProtectedEphemeralSequential(ctx, h.conn, electionDir+"/"+election.CandidateName, []byte("v"), zksim.OpenACL())
	if err != nil {
		return err
	}
	// The session Resume begins on: a Renewing may have renewed since
	// the create (then the node is gone with the session it was made on).
	conn := h.conn
	if h.c.renewing != nil {
		conn = h.c.renewing.Current()
	}
	h.own.watch(key)
	if err = h.Resume(ctx, key); err != nil && !h.own.found() {
		// Resume had not found it ours: it leaves it (once it has, it
		// deletes it on any error, which the orphan check sees).
		deleteNode(h.conn, key)
	}
	if conn == h.conn {
		reportCall(h.c, conn, "Resume of our own node", err, h, func(r *apiResult) { r.key = key })
	}
	return err
}

func (h electionHold) Release(ctx context.Context) error {
	before := h.State()
	err := h.Resign(ctx)
	reportCall(h.c, h.conn, resignWhat(before), err, h)
	return err
}

// resignWhat names a Resign of a hold whose state was before.
func resignWhat(before recipes.HoldState) string {
	if before.Final() {
		return "Resign of an ended hold"
	}
	return "Resign"
}

func (h electionHold) Exclusive() bool { return true }

// singleNodeHold is a SingleNode as a holdable. Its Campaigns are checked
// for the retry timing (retrycheck.go: after their first connection loss
// only the wait for the connection, the backoff after later ones), on a
// Conn that their hold tracker also reads through once it leads:
// newCallConn checks only the Campaigns.
type singleNodeHold struct {
	*election.SingleNode
	c     *client
	conn  *sim.Conn // the session it began on
	timed *timedConn
}

func newSingleNodeHold(_ *rapid.T, c *client) holdable {
	timed := newCallConn(c.w, c, "Campaign")
	timed.Conn = libConn(c)
	return singleNodeHold{SingleNode: election.NewSingleNode(timed, electionDir+"/leader"), c: c, conn: c.conn, timed: timed}
}

func (h singleNodeHold) Acquire(ctx context.Context) error {
	err := h.timed.call(func() error { return h.Campaign(ctx, []byte("v")) })
	reportCall(h.c, h.conn, "Campaign", err, h)
	return err
}

func (h singleNodeHold) Release(ctx context.Context) error {
	before := h.State()
	err := h.Resign(ctx)
	reportCall(h.c, h.conn, resignWhat(before), err, h)
	return err
}

func (h singleNodeHold) Exclusive() bool { return true }

// apiOf returns the election API of c's machine, nil if it has none.
func apiOf(c *client) *electionAPI {
	if f, ok := c.w.fam.(*lockFamily); ok {
		if a, ok := f.api.(*electionAPI); ok {
			return a
		}
	}
	return nil
}

// reportCall reports the result of a Campaign, Resume or Resign the lock
// machine made through h, which began on session conn, to the election
// API's checks. With a Renewing that has renewed since, it notes the
// session the call returned on (renewed).
func reportCall(c *client, conn *sim.Conn, what string, err error, h holdable, more ...func(*apiResult)) {
	if a := apiOf(c); a != nil {
		r := apiResult{c: c, what: what, err: err, h: h, conn: conn, state: h.State()}
		if c.renewing != nil && c.renewing.Current() != conn {
			r.renewed = c.renewing.Current()
		}
		for _, m := range more {
			m(&r)
		}
		a.report(r)
	}
}

// deleteNode deletes p, retrying across connection losses, until it is
// gone or the session ended.
func deleteNode(conn *sim.Conn, p string) {
	ctx := context.Background()
	for {
		err := conn.Delete(ctx, p, -1)
		if !errors.Is(err, zksim.ErrConnectionLoss) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// observeSpinLimit is how many calls with a done ctx make an API call
// spin (spin.go's guard, with a bound tighter than spinLimit, which holds
// for a whole machine): a loop that ignores the error would call the
// server again and again without ever blocking, and hang the machine.
const observeSpinLimit = 100

// electionDirect is what both election kinds offer a machine directly.
type electionDirect interface {
	Leader(ctx context.Context) (election.Leader, error)
	Observe(ctx context.Context) <-chan election.Leader
	Campaign(ctx context.Context, value []byte) error
	Resign(ctx context.Context) error
}

func newElectionAPI(f *lockFamily) familyAPI {
	return newAPI(f, false)
}

func newSingleNodeAPI(f *lockFamily) familyAPI {
	return newAPI(f, true)
}

func newAPI(f *lockFamily, single bool) *electionAPI {
	a := &electionAPI{f: f, w: f.w, single: single, path: electionDir + "/leader",
		leaders: map[string]map[int64]*seenNode{}, nodes: map[string]map[int64]*seenNode{}, owners: map[string]int64{},
		observers: map[*client]*observer{}, conns: map[string]*sim.Conn{}, guards: map[electionDirect]*spinBound{}, goneSince: map[*client]time.Duration{}, deletedIDs: map[int64]bool{}, deletedPaths: map[string]bool{}, robbed: map[int64]bool{}}
	f.w.onApply = append(f.w.onApply, a.applied)
	return a
}

// candidateSeq matches what the server appends to a sequential name:
// %010d of an int32.
var candidateSeq = regexp.MustCompile(`^(\d{10}|-\d{9,10})$`)

// leaderNow returns the path of the current leader, "" if none.
// noteDeleted records that a third party is about to delete p, if it
// exists: its creation zxid and path, and for the single node the session
// it is taken from. It reports whether p exists.
func (a *electionAPI) noteDeleted(p string) bool {
	_, st, err := a.w.observer.Exists(a.w.ctx, p)
	if err != nil || st == nil {
		return false
	}
	a.delMu.Lock()
	a.deletedIDs[st.Czxid], a.deletedPaths[p] = true, true
	a.delMu.Unlock()
	if a.single {
		a.robbed[st.EphemeralOwner] = true
	}
	return true
}

func (a *electionAPI) leaderNow() string {
	if a.single {
		if a.w.owner(a.path) == 0 {
			return ""
		}
		return a.path
	}
	var nodes []seqNode
	for _, name := range a.w.children(electionDir) {
		if n, ok := parseCandidate(name); ok {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return ""
	}
	sortSeqNodes(nodes)
	return electionDir + "/" + nodes[0].name
}

// parseCandidate parses a candidate node's name strictly: "n_" and the
// sequence number exactly as the server formats it.
func parseCandidate(name string) (seqNode, bool) {
	i := strings.LastIndex(name, election.CandidateName)
	if i < 0 || !candidateSeq.MatchString(name[i+len(election.CandidateName):]) {
		return seqNode{}, false
	}
	return parseSeqNode(name, election.CandidateName)
}

// see records the node at p as it is now, and returns it and its data;
// nil if it is missing.
func (a *electionAPI) see(p string) (*seenNode, string) {
	data, st, err := a.w.observer.Get(a.w.ctx, p)
	if err != nil {
		return nil, ""
	}
	if a.nodes[p] == nil {
		a.nodes[p] = map[int64]*seenNode{}
	}
	n := a.nodes[p][st.Czxid]
	if n == nil {
		n = &seenNode{czxid: st.Czxid, owner: st.EphemeralOwner, values: map[string]bool{}}
		a.nodes[p][st.Czxid] = n
	}
	n.values[string(data)] = true
	return n, string(data)
}

// applied: nobody deletes a node another live session owns. There is one
// exception, which no client can avoid: ZooKeeper cannot make a delete
// conditional on the node's owner, so a SingleNode that checked that the
// node is its own and then deletes it may delete the next leader's node
// if, in between, a third party deleted its node and another candidate
// created one (see the SingleNode doc).
func (a *electionAPI) applied(c *client, r *zkmem.Request) {
	check := func(p string) {
		if o := a.owners[p]; o != 0 && o != c.conn.SessionID() && !a.robbed[c.conn.SessionID()] {
			a.w.violate(kindDeletedAnothersNode, "p%d (session c%d) deleted %s, a node of session %#x", c.idx, c.conn.Index(), p, o)
		}
	}
	switch r.Op {
	case zkmem.OpDelete:
		check(r.Path)
	case zkmem.OpMulti:
		for _, op := range r.Ops {
			if d, ok := op.(*zksim.DeleteOp); ok {
				check(d.Path)
			}
		}
	}
}

// apiConn returns the session the calls op make (Leader, Observe, Resume
// of another's node), a new one if it is missing or ended. They do not
// run on the clients' own sessions: two goroutines that call one session
// at once (a client acquiring and observing) would send their requests in
// whatever order the Go scheduler wakes them, and a seed would not replay.
func (a *electionAPI) apiConn(op string) *sim.Conn {
	conn := a.conns[op]
	if conn == nil || conn.State() == zksim.StateExpired || conn.State() == zksim.StateClosed || conn.State() == zksim.StateAuthFailed {
		var err error
		if conn, err = a.w.sw.Connect(); err != nil {
			panic(fmt.Sprintf("connect: %v", err)) // the World is open while actions run
		}
		a.conns[op] = conn
		a.w.trace("%s calls run on session c%d", op, conn.Index())
	}
	return conn
}

// direct returns an election value of the kind on conn, for c's API call
// what.
func (a *electionAPI) direct(c *client, sc zksim.Conn, what string) electionDirect {
	conn, bound := newBoundConn(c, sc, observeSpinLimit, fmt.Sprintf("p%d's %s", c.idx, what))
	var e electionDirect
	if a.single {
		e = election.NewSingleNode(conn, a.path)
	} else {
		e = election.New(conn, electionDir)
	}
	a.guards[e] = bound
	return e
}

// startNow starts op on c as c.start does, and lets it run until it
// blocks (on the simulator, most often) before the machine goes on: what
// it does first (a check of the Election's own state, say) sees the world
// as the action drew it.
func startNow(c *client, name string, op func(ctx context.Context) error) {
	if c.start(name, op) {
		synctest.Wait()
	}
}

// report records a result from a client goroutine.
func (a *electionAPI) report(r apiResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.results = append(a.results, r)
}

// apiOps are the names of the operations the API actions start.
var apiOps = []string{"leader", "observe", "proclaim", "campaign again", "resign idle", "resume", "invalid acl"}

func (a *electionAPI) actions() map[string]func(*rapid.T) {
	w := a.w
	// free returns the clients that may start op: none while one runs it
	// (op runs on a session of its own, one call at a time, see apiConn).
	free := func(op string) []*client {
		for _, c := range w.clients {
			if c.busy(op) {
				return nil
			}
		}
		return w.awake()
	}
	// startLeader starts a checked Leader call on c and returns it.
	startLeader := func(c *client) *leaderCall {
		e, empty := a.direct(c, a.apiConn("leader"), "Leader"), a.empty
		lc := &leaderCall{c: c, polls: poller{guard: a.guards[e]}}
		a.calls = append(a.calls, lc)
		startNow(c, "leader", func(ctx context.Context) error {
			l, err := e.Leader(ctx)
			lc.done.Store(true)
			a.report(apiResult{c: c, what: "Leader", l: l, err: err, empty: empty})
			return err
		})
		return lc
	}
	m := map[string]func(*rapid.T){
		"Leader": func(t *rapid.T) {
			startLeader(drawClient(t, free("leader"), "leader"))
		},
		"Observe": func(t *rapid.T) {
			c := drawClient(t, free("observe"), "observe")
			conn := a.apiConn("observe")
			o := &observer{c: c, conn: conn, lagSince: -1}
			var lib zksim.Conn = conn
			if w.cfg.faults && rapid.Bool().Draw(t, "renewing observer") {
				// A session of its own, through a Renewing: once it
				// expires, Observe must end, not go on with the new one.
				var err error
				if conn, err = w.sw.Connect(); err != nil {
					panic(fmt.Sprintf("connect: %v", err)) // the World is open while actions run
				}
				o.conn, o.renewing = conn, w.sw.Renewing(conn.Index())
				lib = o.renewing
				w.trace("p%d observes on session c%d, through a Renewing", c.idx, conn.Index())
			}
			a.observers[c] = o
			e := a.direct(c, lib, "Observe")
			o.polls.guard = a.guards[e]
			c.start("observe", func(ctx context.Context) error {
				for l := range e.Observe(ctx) {
					o.mu.Lock()
					o.reports = append(o.reports, l)
					o.mu.Unlock()
				}
				o.mu.Lock()
				o.closed = true
				o.early, o.end = ctx.Err() == nil, o.conn.State()
				o.mu.Unlock()
				return nil
			})
		},
		// ExpireObserver expires the session of an Observe that runs
		// through a Renewing while one of its requests is on its way: the
		// Renewing renews it as the reply (the session's error) comes, and
		// Observe must end (see checkObservers). It first lets the
		// Observe send a drawn number of requests more (the one after a
		// listing that found no directory, say).
		"ExpireObserver": func(t *rapid.T) {
			var cs []*client
			for _, c := range w.awake() {
				if o := a.observers[c]; o != nil && o.renewing != nil && c.busy("observe") && !o.cancelled && o.renewing.Current() == o.conn {
					cs = append(cs, c)
				}
			}
			c := drawClient(t, cs, "expire observer")
			o := a.observers[c]
			want := o.polls.guard.calls.Load() + int64(rapid.IntRange(0, 2).Draw(t, "requests first"))
			for i := 0; i < 20 && o.polls.guard.calls.Load() < want && w.sw.Enabled() > 0 && !w.violated(); i++ {
				w.step(t)
				synctest.Wait()
			}
			if !w.sw.InFlight(o.conn.Index()) || o.renewing.Current() != o.conn {
				return
			}
			w.inject(t, faults.Expire(o.conn.Index()))
		},
		"StopObserve": func(t *rapid.T) {
			var running []*client
			for _, c := range w.awake() {
				if o := a.observers[c]; o != nil && c.busy("observe") && !o.cancelled {
					running = append(running, c)
				}
			}
			c := drawClient(t, running, "stop observing")
			a.observers[c].cancelled = true
			c.stop("observe")
		},
		// CampaignAgain: a second Campaign on the Election value that leads
		// or campaigns returns ErrCampaigning.
		"CampaignAgain": func(t *rapid.T) {
			var cs []*client
			for _, c := range w.awake() {
				lc := a.f.cs[c.idx]
				if lc.h == nil || c.busy("campaign again") || c.busy("release") {
					continue
				}
				// Held, or still campaigning (NotHeld in an acquire:
				// an acquire that led may be proclaiming or writing).
				// (An acquire by Resume campaigns only once it has made
				// its node.)
				eh, ok := lc.h.(electionHold)
				resuming := ok && eh.resume
				if st := lc.h.State(); st == recipes.Held || (st == recipes.NotHeld && c.busy("acquire") && !resuming) {
					cs = append(cs, c)
				}
			}
			c := drawClient(t, cs, "campaign again")
			e := a.f.cs[c.idx].h.(electionDirect)
			startNow(c, "campaign again", func(ctx context.Context) error {
				err := e.Campaign(ctx, []byte("again"))
				a.report(apiResult{c: c, what: "second Campaign", err: err})
				return err
			})
		},
		// ResignIdle: Resign with nothing held (never campaigned, or
		// resigned already) returns ErrNotLeader.
		"ResignIdle": func(t *rapid.T) {
			c := drawClient(t, a.f.idle(), "resign idle")
			if c.busy("resign idle") || c.busy("campaign again") {
				t.SkipNow()
			}
			var e electionDirect
			// (Not an Election whose Campaign after a Lost leadership
			// failed: its Resign may still delete the Lost node, as
			// after a Lost leadership, and return nil.)
			if h := a.f.cs[c.idx].h; h != nil && !a.f.cs[c.idx].again && !a.f.cs[c.idx].unreleased.Load() && rapid.Bool().Draw(t, "resigned") {
				e = h.(electionDirect)
			} else {
				e = a.direct(c, c.conn, "Resign")
			}
			startNow(c, "resign idle", func(ctx context.Context) error {
				err := e.Resign(ctx)
				a.report(apiResult{c: c, what: "Resign with nothing held", err: err})
				return err
			})
		},
		// CancelRelease: a Resign is cancelled; it returns ctx's error
		// and the holder still holds (it may resign again), or it returns
		// nil having deleted the node (the orphan check).
		"CancelRelease": func(t *rapid.T) {
			var cs []*client
			for _, c := range w.awake() {
				if c.busy("release") {
					cs = append(cs, c)
				}
			}
			c := drawClient(t, cs, "cancel release")
			c.stop("release")
		},
		// DeleteNode: a third party (an operator) deletes a candidate's
		// node, the leader's most often, or the directory once it is
		// empty.
		"DeleteNode": func(t *rapid.T) {
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
		},
	}
	// DeleteWhileDown: a leader's connection goes down, a third party
	// deletes its node meanwhile, and the connection comes back: the
	// leadership, Doubtful while down, is Lost once it has checked its
	// node (see checkLost).
	m["DeleteWhileDown"] = func(t *rapid.T) {
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
	// InvalidACL: a Campaign whose ACL the server refuses (the "auth"
	// scheme, and the session has no credentials) returns ErrInvalidACL:
	// it gives up at the first refused create. (No create can succeed:
	// the server refuses the ACL itself, KeeperException.InvalidACL.)
	m["InvalidACL"] = func(t *rapid.T) {
		c := drawClient(t, free("invalid acl"), "invalid acl")
		conn := &refusalConn{Conn: a.apiConn("invalid acl")}
		acl := election.WithACL([]zksim.ACL{{Perms: zksim.PermAll, Scheme: "auth"}})
		var e electionDirect
		if a.single {
			e = election.NewSingleNode(conn, a.path, acl)
		} else {
			e = election.New(conn, electionDir, acl)
		}
		startNow(c, "invalid acl", func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			conn.cancel = cancel
			err := e.Campaign(ctx, []byte("v"))
			a.report(apiResult{c: c, what: "Campaign with an invalid ACL", err: err, refused: conn.refused.Load()})
			return err
		})
	}
	// CampaignAfterLoss (the single node): a process whose leadership
	// was lost (its node deleted, its session expired and renewed)
	// campaigns again with the same SingleNode; a Resign during that
	// campaign returns ErrNotLeader (it does not lead yet).
	m["CampaignAfterLoss"] = func(t *rapid.T) {
		if !a.single {
			t.SkipNow()
		}
		// (Its API calls, which run on sessions of their own, may go on.)
		busyHold := func(c *client) bool {
			return slices.ContainsFunc([]string{"acquire", "release", "write", "campaign again", "resign idle"}, c.busy)
		}
		lost := func(c *client) (singleNodeHold, bool) {
			lc := a.f.cs[c.idx]
			for _, h := range []holdable{lc.h, lc.prev} {
				if sh, ok := h.(singleNodeHold); ok && sh.State() == recipes.Lost && ((h == lc.prev && c.renewing != nil) || (h == lc.h && lc.holding.Load())) {
					return sh, true
				}
			}
			return singleNodeHold{}, false
		}
		var cs []*client
		for _, c := range w.awake() {
			// (Not while the node is still ours, its hold presumed lost
			// after a long disconnection: a campaign would take it again,
			// the same term.) Or a leader, whose node a third party
			// deletes first.
			lc := a.f.cs[c.idx]
			_, leads := lc.h.(singleNodeHold)
			leads = leads && lc.holding.Load() && lc.h.State() == recipes.Held && lc.conn == c.conn && w.owner(a.path) == c.conn.SessionID()
			if _, ok := lost(c); (ok || leads) && !busyHold(c) && (leads || w.owner(a.path) != c.conn.SessionID()) {
				cs = append(cs, c)
			}
		}
		c := drawClient(t, cs, "campaign after loss")
		if _, ok := lost(c); !ok {
			if a.noteDeleted(a.path) {
				w.inject(t, faults.DeleteNode(a.path))
			}
			for i := 0; i < 50 && w.sw.Enabled() > 0 && !w.violated(); i++ {
				w.step(t)
				synctest.Wait()
			}
		}
		old, ok := lost(c)
		if !ok || busyHold(c) || w.owner(a.path) == c.conn.SessionID() {
			return
		}
		lc := a.f.cs[c.idx]
		lc.holding.Store(false) // the process drops the lost hold
		lc.prev, lc.again = nil, true
		h := singleNodeHold{SingleNode: old.SingleNode, c: c, conn: c.conn, timed: old.timed}
		a.f.acquireHold(c, h)
		if a.ends == nil {
			a.ends = map[*client]*holdEnd{}
		}
		a.ends[c] = &holdEnd{h: h, last: recipes.Lost, since: -1} // Lost from before, until it leads again
		synctest.Wait()
		if !c.busy("acquire") || !rapid.Bool().Draw(t, "resign") {
			return
		}
		// It does not lead: Resign says so from what it knows, sending
		// nothing (so its ctx, done here, plays no part, and the
		// machine's goroutine may call it).
		ctx, cancel := context.WithCancel(w.ctx)
		cancel()
		if err := h.Resign(ctx); !errors.Is(err, election.ErrNotLeader) {
			w.violate(kindElectionAPI, "p%d: Resign during a campaign (of a SingleNode whose leadership was lost) returned %v, not ErrNotLeader", c.idx, err)
		}
	}
	if a.single {
		return m
	}
	// ProclaimIdle: Proclaim by a client that does not lead (never did,
	// or resigned) returns ErrNotLeader at once. (A leader proclaims as
	// part of its acquisition: electionHold.Acquire.)
	m["ProclaimIdle"] = func(t *rapid.T) {
		c := drawClient(t, a.f.idle(), "proclaim idle")
		e := election.New(c.conn, electionDir)
		if h := a.f.cs[c.idx].h; h != nil && rapid.Bool().Draw(t, "resigned") {
			e = h.(electionHold).Election
		}
		if e.State() == recipes.Held || e.State() == recipes.Doubtful {
			t.SkipNow() // an acquire that failed after it led (a write)
		}
		startNow(c, "proclaim", func(ctx context.Context) error {
			err := e.Proclaim(ctx, []byte("idle"))
			a.report(apiResult{c: c, what: "Proclaim by a non-leader", err: err})
			return err
		})
	}
	// LeaderRace: a Leader call is caught between its listing and its
	// read of the lowest candidate. Once the read is on its way, a third
	// party deletes that candidate (Leader must look again: it returns
	// ErrNoLeader "when there is no candidate" only), or the call is
	// cancelled (it returns ctx's error, not ErrNoLeader).
	leaderRace := func(t *rapid.T, cancel bool) {
		c := drawClient(t, free("leader"), "leader race")
		if a.leaderNow() == "" {
			t.SkipNow()
		}
		lc := startLeader(c)
		// Step until the listing's reply is in and the read sent.
		for i := 0; i < 20 && lc.polls.guard.calls.Load() < 2 && !lc.done.Load() && w.sw.Enabled() > 0 && !w.violated(); i++ {
			w.step(t)
			synctest.Wait()
		}
		if lc.done.Load() || lc.polls.guard.calls.Load() < 2 {
			return
		}
		if cancel {
			c.stop("leader")
			return
		}
		l := a.leaderNow()
		if _, st, err := w.observer.Exists(w.ctx, l); l != "" && err == nil && st != nil {
			a.delMu.Lock()
			a.deletedIDs[st.Czxid], a.deletedPaths[l] = true, true
			a.delMu.Unlock()
			w.inject(t, faults.DeleteNode(l))
		}
	}
	m["LeaderRaceDelete"] = func(t *rapid.T) { leaderRace(t, false) }
	m["LeaderRaceCancel"] = func(t *rapid.T) { leaderRace(t, true) }
	// ProclaimGone: a third party deletes the leader's node, then the
	// leader proclaims. Proclaim "returns ErrNotLeader if we do not lead
	// or our node is gone".
	m["ProclaimGone"] = func(t *rapid.T) {
		var cs []*client
		for _, c := range w.awake() {
			lc := a.f.cs[c.idx]
			if lc.h != nil && lc.holding.Load() && lc.h.State() == recipes.Held && !c.busy("release") && !c.busy("proclaim") {
				cs = append(cs, c)
			}
		}
		c := drawClient(t, cs, "proclaim gone")
		eh := a.f.cs[c.idx].h.(electionHold)
		key := eh.Key()
		if _, st, err := w.observer.Exists(w.ctx, key); err == nil && st != nil {
			a.delMu.Lock()
			a.deletedIDs[st.Czxid], a.deletedPaths[key] = true, true
			a.delMu.Unlock()
			w.inject(t, faults.DeleteNode(key))
		}
		a.values++
		value := fmt.Sprintf("v%d", a.values)
		startNow(c, "proclaim", func(ctx context.Context) error {
			err := eh.Proclaim(ctx, []byte(value))
			a.report(apiResult{c: c, what: "Proclaim of a deleted node", err: err, key: key, value: value})
			return err
		})
	}
	// SetTwo: a third party sets the two lowest candidates' data (each
	// its own, unchanged) in one multi, so that both nodes have the same
	// mzxid, then deletes the leader's node: the next leader is another
	// node, which an Observe reports though its mzxid is the last one's.
	m["SetTwo"] = func(t *rapid.T) {
		var nodes []seqNode
		for _, name := range w.children(electionDir) {
			if n, ok := parseCandidate(name); ok {
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
			m["Observe"](t) // someone observes
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
	// Guard: the leader's guard is a check on its node; with nothing held,
	// ErrNotLeader.
	m["Guard"] = func(t *rapid.T) {
		var cs []*client
		for _, c := range w.awake() {
			if !c.busy("") || a.f.cs[c.idx].holding.Load() {
				cs = append(cs, c)
			}
		}
		c := drawClient(t, cs, "guard")
		lc := a.f.cs[c.idx]
		var e *election.Election
		if lc.h != nil {
			e = lc.h.(electionHold).Election
		} else {
			e = election.New(c.conn, electionDir)
		}
		state := e.State()
		op, err := e.Guard()
		switch {
		case state == recipes.Held && lc.holding.Load():
			if check, ok := op.(*zksim.CheckOp); err != nil || !ok || check.Path != e.Key() {
				w.violate(kindGuard, "p%d leads (Held) with %s, but Guard returned %v, %v", c.idx, e.Key(), op, err)
			}
		case state == recipes.NotHeld || state == recipes.Released || state == recipes.Lost:
			if !errors.Is(err, election.ErrNotLeader) || op != nil {
				w.violate(kindGuard, "p%d does not lead (%v), but Guard returned %v, %v, not ErrNotLeader", c.idx, state, op, err)
			}
		}
	}
	// Resume with a node that is not ours: ErrNotCandidate.
	m["Resume"] = func(t *rapid.T) {
		c := drawClient(t, free("resume"), "resume")
		// (One that is not named as a candidate, one that is but missing.)
		keys := []string{electionDir + "/" + junkNames[0], electionDir + "/_c_00000000-0000-4000-8000-000000000000-n_0000000099"}
		for _, name := range w.children(electionDir) {
			// ... and a candidate's name in another directory.
			keys = append(keys, electionDir+"/"+name, path.Dir(electionDir)+"/"+name)
		}
		key := rapid.SampledFrom(keys).Draw(t, "key")
		e := election.New(a.apiConn("resume"), electionDir) // owns no node
		lc, own := a.f.cs[c.idx], false
		if lc.holding.Load() && lc.h.State() == recipes.Held && !c.busy("release") && rapid.Bool().Draw(t, "own") {
			// The leader resumes with its own node: ErrCampaigning.
			e, key, own = lc.h.(electionHold).Election, lc.h.(electionHold).Key(), true
		}
		startNow(c, "resume", func(ctx context.Context) error {
			err := e.Resume(ctx, key)
			if own {
				a.report(apiResult{c: c, what: "Resume while leading", err: err})
				return err
			}
			if err == nil {
				_ = e.Resign(ctx)
			}
			a.report(apiResult{c: c, what: "Resume of another's node", err: err})
			return err
		})
	}
	// Junk: a third party creates a node in the directory that is not a
	// candidate node; the recipe must ignore it.
	m["Junk"] = func(t *rapid.T) {
		name := rapid.SampledFrom(junkNames).Draw(t, "junk")
		_, _ = w.observer.Create(w.ctx, electionDir, nil, zksim.ModePersistent, zksim.OpenACL())
		if _, err := w.observer.Create(w.ctx, electionDir+"/"+name, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil && !errors.Is(err, zksim.ErrNodeExists) {
			t.Fatalf("create junk: %v", err)
		}
		w.trace("a third party creates %s/%s", electionDir, name)
	}
	return m
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

// failedOK reports whether err is how a call ends when its session ended,
// its client failed to authenticate (authfail.go) or its ctx is done (the
// machine's shutdown).
func failedOK(err error) bool {
	return errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing) || errors.Is(err, zksim.ErrAuthFailed) || errors.Is(err, context.Canceled)
}

func (a *electionAPI) check() {
	w := a.w
	// What the tree holds now: the candidates, in sequence order.
	owners := map[string]int64{}
	var candidates []seqNode
	if a.single {
		candidates = []seqNode{{name: "leader"}}
	} else {
		for _, name := range w.children(electionDir) {
			if n, ok := parseCandidate(name); ok {
				candidates = append(candidates, n)
			}
		}
		sortSeqNodes(candidates)
	}
	leader := ""
	a.curValue = ""
	var cur *seenNode
	for _, c := range candidates {
		p := electionDir + "/" + c.name
		n, data := a.see(p)
		if n == nil {
			continue
		}
		if n.owner != 0 {
			owners[p] = n.owner
		}
		if leader == "" {
			leader, cur, a.curValue = p, n, data
		}
	}
	a.owners = owners
	if leader == "" {
		a.empty++
	} else {
		if a.leaders[leader] == nil {
			a.leaders[leader] = map[int64]*seenNode{}
		}
		a.leaders[leader][cur.czxid] = cur
	}
	a.judgeResults()
	a.checkHolders(leader)
	a.checkLost()
	a.checkObservers(leader, cur)
	a.checkLeaderCalls(leader, cur)
}

// checkLeaderCalls: a Leader call "blocks only for the round trips, and
// across connection losses" (its doc); it reads again only when the
// lowest candidate left between its listing and its read, which changes
// the directory. So while nothing changes, it makes no more than
// pollLimit reads.
func (a *electionAPI) checkLeaderCalls(leader string, cur *seenNode) {
	sig := ""
	calls := a.calls[:0]
	for _, lc := range a.calls {
		if lc.done.Load() {
			continue
		}
		calls = append(calls, lc)
		if sig == "" {
			sig = a.dirSig(leader, cur)
		}
		if n := lc.polls.reads(sig); n > pollLimit {
			a.w.violate(kindLeader, "p%d's Leader read %d times with nothing changed (%s)", lc.c.idx, n, sig)
		}
	}
	clear(a.calls[len(calls):])
	a.calls = calls
}

// deleted reports whether a third party deleted h's node.
func (a *electionAPI) deleted(h holdable) bool {
	a.delMu.Lock()
	defer a.delMu.Unlock()
	return a.deletedIDs[h.Token()]
}

// validLeader reports why l is not a leader the machine saw, "" if it is.
func (a *electionAPI) validLeader(l election.Leader) string {
	n := a.leaders[l.Key][l.Token]
	switch {
	case a.leaders[l.Key] == nil:
		return fmt.Sprintf("%q was never the leader", l.Key)
	case n == nil:
		return fmt.Sprintf("token %#x, but %s never had that czxid", l.Token, l.Key)
	case l.Session != n.owner:
		return fmt.Sprintf("session %#x, but %s belongs to %#x", l.Session, l.Key, n.owner)
	case !n.values[string(l.Value)]:
		return fmt.Sprintf("value %q, which %s never had", l.Value, l.Key)
	}
	return ""
}

// judgeResults checks the results the client goroutines reported.
func (a *electionAPI) judgeResults() {
	w := a.w
	a.mu.Lock()
	results := a.results
	a.results = nil
	a.mu.Unlock()
	for _, r := range results {
		bad := ""
		switch r.what {
		case "Leader":
			switch {
			case r.err == nil:
				bad = a.validLeader(r.l)
			case errors.Is(r.err, election.ErrNoLeader):
				if a.empty == r.empty {
					bad = "ErrNoLeader, but there was a candidate all along"
				}
			case !failedOK(r.err):
				bad = "an unexpected error"
			}
		case "Proclaim":
			had := false
			for _, n := range a.nodes[r.key] {
				had = had || n.values[r.value]
			}
			switch {
			case r.err == nil:
				if !had {
					bad = fmt.Sprintf("nil, but %q never held the value %q", r.key, r.value)
				}
			case errors.Is(r.err, election.ErrNotLeader):
				if r.h.State() == recipes.Held && w.owner(r.key) == r.conn.SessionID() && a.leaderNow() == r.key {
					bad = "ErrNotLeader from the leader"
				}
			case !failedOK(r.err):
				bad = "an unexpected error"
			}
		case "Proclaim of a deleted node":
			if !errors.Is(r.err, election.ErrNotLeader) && !failedOK(r.err) {
				bad = "not ErrNotLeader"
			}
		case "Proclaim by a non-leader":
			if !errors.Is(r.err, election.ErrNotLeader) {
				bad = "not ErrNotLeader"
			}
		case "second Campaign":
			if !errors.Is(r.err, election.ErrCampaigning) {
				bad = "not ErrCampaigning"
			}
		case "Resign with nothing held":
			if !errors.Is(r.err, election.ErrNotLeader) {
				bad = "not ErrNotLeader"
			}
		case "Campaign with an invalid ACL":
			switch {
			case r.refused > 1:
				bad = fmt.Sprintf("it created again after ErrInvalidACL (%d refused creates)", r.refused)
			case !errors.Is(r.err, zksim.ErrInvalidACL) && !failedOK(r.err):
				bad = "not ErrInvalidACL"
			}
		case "Resume of another's node":
			if !errors.Is(r.err, election.ErrNotCandidate) && !failedOK(r.err) {
				bad = "not ErrNotCandidate"
			}
		case "Campaign", "Resume of our own node":
			ended := !slices.Contains(w.sw.Server().SessionIDs(), r.conn.SessionID())
			switch {
			case r.renewed != nil && r.err == nil:
				// "A call belongs to the session it began on" (recipes/doc.go):
				// it does not go on with the Renewing's new session.
				bad = fmt.Sprintf("it began on session c%d and returned on session c%d (its Renewing renewed the expired session): want ErrSessionExpired", r.conn.Index(), r.renewed.Index())
			case r.err == nil:
				// "blocks until we lead": a nil return is a leadership,
				// the hold's state Held, or already past it (Doubtful,
				// Lost), never NotHeld or Released.
				if r.state == recipes.NotHeld || r.state == recipes.Released {
					bad = fmt.Sprintf("nil, but the state is %v: it does not lead", r.state)
				}
			case errors.Is(r.err, context.Canceled):
			case errors.Is(r.err, zksim.ErrSessionExpired):
				if !ended {
					bad = "the session is live"
				}
			case errors.Is(r.err, zksim.ErrClosing):
				// The machine closes no Conn (but at its end): a campaign
				// whose session expired returns ErrSessionExpired.
				bad = "the Conn is not closed"
			case errors.Is(r.err, zksim.ErrAuthFailed):
				if !w.sw.AuthFailed(r.conn.Index()) {
					bad = "its client did not fail to authenticate"
				}
			case errors.Is(r.err, election.ErrNotCandidate) && r.what != "Campaign":
				// Only if our node was deleted (by a third party) as we
				// waited.
				a.delMu.Lock()
				gone := a.deletedPaths[r.key]
				a.delMu.Unlock()
				if !gone {
					bad = fmt.Sprintf("ErrNotCandidate for our own node %q, which no third party deleted", r.key)
				}
			default:
				bad = "an unexpected error"
			}
		case "Resign", "Resign of an ended hold":
			// "the state becomes Released and the node is deleted if it
			// is still ours" (a node that is not ours, or gone, is no
			// error); ErrNotLeader if we do not lead; ctx's error, or the
			// session's end, if it could not finish.
			switch {
			case r.err == nil && r.what == "Resign" && r.state != recipes.Released:
				bad = fmt.Sprintf("nil, but the state is %v, not Released", r.state)
			case r.err != nil && !errors.Is(r.err, election.ErrNotLeader) && !failedOK(r.err):
				bad = "an unexpected error"
			}
		case "Resume while leading":
			if !errors.Is(r.err, election.ErrCampaigning) {
				bad = "not ErrCampaigning"
			}
		}
		if bad != "" {
			w.violate(kindElectionAPI, "p%d: %s returned %v, %v: %s", r.c.idx, r.what, r.l, r.err, bad)
		}
	}
}

// holdEnd is what checkLost saw of a client's hold.
type holdEnd struct {
	h     holdable
	last  recipes.HoldState
	since time.Duration // Doubtful since, -1 if not Doubtful
}

// checkLost: a hold becomes Lost only when its node is gone (deleted, or
// gone with the session), its Conn expired or closed, or it stayed
// Doubtful for the session timeout (the lock machines' checkEnd). A
// Proclaim, which changes the node's data, loses nothing.
func (a *electionAPI) checkLost() {
	w := a.w
	if a.ends == nil {
		a.ends = map[*client]*holdEnd{}
	}
	for _, c := range w.clients {
		lc := a.f.cs[c.idx]
		if lc.h == nil || lc.conn != c.conn {
			delete(a.ends, c)
			continue
		}
		e := a.ends[c]
		if e == nil || e.h != lc.h {
			e = &holdEnd{h: lc.h, last: recipes.NotHeld, since: -1}
			a.ends[c] = e
		}
		st := lc.h.State()
		if st == recipes.Lost && e.last != recipes.Lost {
			cs := c.conn.State()
			timedOut := e.last == recipes.Doubtful && e.since >= 0 && w.sw.Now()-e.since >= c.conn.SessionTimeout()
			if key := a.holdKey(lc); key != "" && a.owners[key] == c.conn.SessionID() && cs != zksim.StateExpired && cs != zksim.StateClosed && !w.sw.AuthFailed(c.conn.Index()) && !timedOut {
				w.violate(kindHoldState, "p%d's hold became Lost (from %v) with its node %s there, its Conn %v", c.idx, e.last, key, cs)
			}
		}
		switch {
		case st != recipes.Doubtful:
			e.since = -1
		case e.since < 0:
			e.since = w.sw.Now()
		}
		e.last = st
		// Doubtful only while the connection is down (recipes/doc.go,
		// "Connection states and what they mean for a holder"): once
		// connected again it verifies its node, and is Held or Lost as
		// soon as it has heard the answer.
		if i := c.conn.Index(); st == recipes.Doubtful && c.conn.State() == zksim.StateConnected && !w.sw.Paused(i) && !w.sw.InFlight(i) {
			w.violate(kindHoldState, "p%d's leadership says Doubtful though connected, with nothing in flight", c.idx)
		}
	}
}

// checkHolders: a Held leader whose node exists is the leader; a Held
// holder whose node is gone learns it (is no longer Held) once it has
// heard all the server has to say.
func (a *electionAPI) checkHolders(leader string) {
	w := a.w
	for _, c := range w.clients {
		lc := a.f.cs[c.idx]
		key := a.holdKey(lc)
		if lc.h == nil || !lc.holding.Load() || lc.h.State() != recipes.Held || key == "" || lc.conn != c.conn {
			delete(a.goneSince, c)
			continue
		}
		owner := a.owners[key]
		if owner == c.conn.SessionID() && !a.single && key != leader {
			w.violate(kindLeaderNotFirst, "p%d leads with %s, but the first candidate is %s (%s)", c.idx, key, leader, strings.Join(w.children(electionDir), " "))
		}
		quiet := !c.paused() && !w.inFlight(c) && c.conn.State() == zksim.StateConnected
		if owner == c.conn.SessionID() || !quiet {
			delete(a.goneSince, c)
			continue
		}
		since, ok := a.goneSince[c]
		switch {
		case !ok:
			a.goneSince[c] = w.sw.Now()
		case w.sw.Now()-since > sharedWait:
			w.violate(kindHeldWithoutNode, "p%d is Held for %v with its node %s gone, connected and told everything", c.idx, w.sw.Now()-since, key)
		}
	}
}

// holdKey returns the node of lc's hold.
func (a *electionAPI) holdKey(lc *lockClient) string {
	if a.single {
		return a.path
	}
	if h, ok := lc.h.(electionHold); ok {
		return h.Key()
	}
	return ""
}

// checkObservers judges what the observers reported.
func (a *electionAPI) checkObservers(leader string, cur *seenNode) {
	w := a.w
	sig := "" // dirSig, once an observer needs it
	for c, o := range a.observers {
		o.mu.Lock()
		reports, closed, early, end := o.reports[o.checked:], o.closed, o.early, o.end
		o.checked = len(o.reports)
		var last *election.Leader
		if len(o.reports) > 0 {
			last = &o.reports[len(o.reports)-1]
		}
		o.mu.Unlock()
		for _, l := range reports {
			if bad := a.validLeader(l); bad != "" {
				w.violate(kindObserve, "p%d observed %s: %s", c.idx, l.Key, bad)
			}
		}
		if closed {
			ended := end == zksim.StateExpired || end == zksim.StateClosed || end == zksim.StateAuthFailed || !slices.Contains(w.sw.Server().SessionIDs(), o.conn.SessionID())
			if early && !o.cancelled && !ended {
				w.violate(kindObserve, "p%d's Observe channel closed, its ctx not done, its session %v", c.idx, end)
			}
			delete(a.observers, c)
			continue
		}
		// "A call belongs to the session it began on" (recipes/doc.go): an
		// Observe whose Renewing renewed its session ends (its channel
		// closes) rather than go on with the new session; once the new
		// session has nothing of it in flight, it must have.
		if r := o.renewing; r != nil {
			switch calls := o.polls.guard.calls.Load(); {
			case r.Current() == o.conn:
				o.callsBefore = calls
			case calls > o.callsBefore:
				w.violate(kindObserve, "p%d's Observe began on session c%d and called the Conn on session c%d (its Renewing renewed the expired session): want its channel closed", c.idx, o.conn.Index(), r.Current().Index())
			}
		}
		// An observer waits on watches: it reads again when something
		// changed, not again and again.
		if sig == "" {
			sig = a.dirSig(leader, cur)
		}
		if n := o.polls.reads(sig); n > pollLimit {
			w.violate(kindObserve, "p%d's Observe read %d times with nothing changed (%s)", c.idx, n, sig)
		}
		// A quiet observer has reported the leader as it is now.
		live := slices.Contains(w.sw.Server().SessionIDs(), o.conn.SessionID())
		quiet := !o.cancelled && !w.sw.Paused(o.conn.Index()) && !w.sw.InFlight(o.conn.Index()) && o.conn.State() == zksim.StateConnected && live
		lags := quiet && cur != nil && (last == nil || last.Key != leader || last.Token != cur.czxid || string(last.Value) != a.curValue)
		switch {
		case !lags:
			o.lagSince = -1
		case o.lagSince < 0:
			o.lagSince = w.sw.Now()
		case w.sw.Now()-o.lagSince > sharedWait:
			w.violate(kindObserve, "p%d's Observe has not reported the leader %s for %v (last report %v)", c.idx, leader, w.sw.Now()-o.lagSince, last)
		}
	}
}

// pollLimit is how many reads an observer may make while nothing changes
// (connection losses make it read again, a few times).
const pollLimit = 50

// dirSig describes the election's directory and its leader as of this
// check: it changes when an observer has something new to read.
func (a *electionAPI) dirSig(leader string, cur *seenNode) string {
	ok, st, err := a.w.observer.Exists(a.w.ctx, electionDir)
	sig := fmt.Sprintf("directory %v %v", ok, err)
	if ok {
		sig += fmt.Sprintf(" czxid %d cversion %d", st.Czxid, st.Cversion)
	}
	if cur != nil {
		sig += fmt.Sprintf(", leader %s czxid %d value %q", leader, cur.czxid, a.curValue)
	}
	return sig
}

// live: every API call has returned; the observers are stopped first, and
// their channels must close.
func (a *electionAPI) live() bool {
	done := true
	for _, c := range a.w.clients {
		if o := a.observers[c]; o != nil && !o.cancelled && c.busy("observe") {
			o.cancelled = true
			c.stop("observe")
		}
		if slices.ContainsFunc(apiOps, c.busy) {
			done = false
		}
	}
	return done
}

// refusalConn counts the creates the server refuses with ErrInvalidACL, and
// cancels the call at the second: a recipe that ignores the refusal would
// create again and again.
type refusalConn struct {
	*sim.Conn
	refused atomic.Int32
	cancel  context.CancelFunc // set before the call
}

func (r *refusalConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	p, err := r.Conn.Create(ctx, path, data, mode, acl)
	if errors.Is(err, zksim.ErrInvalidACL) && r.refused.Add(1) > 1 {
		r.cancel()
	}
	return p, err
}
