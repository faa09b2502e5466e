package explore

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/sim"
)

// The election machines' view of the rest of the election API, beyond
// Campaign and Resign (which the lock machine drives as Acquire and
// Release): Leader, Observe, Proclaim, Guard, Resume, a second Campaign,
// Resign with nothing held (election_readers.go, election_candidates.go);
// and what a third party does to the election's directory (deletes a
// candidate's node, creates nodes that are not candidates:
// election_thirdparty.go). Each call's result is checked against what the
// machine saw of the tree after every step (election_invariants.go).

// electionAPI is the part of the election families beyond the holdable.
type electionAPI struct {
	f      *lockFamily
	w      *world
	single bool            // election.SingleNode; else election.New
	layout election.Layout // the candidates' (election_layout.go)
	path   string          // the single node's path

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

	// foreign is the node of another layout a third party made
	// (election_foreign.go), until it goes; foreignEver: there was one.
	foreign     string
	foreignEver bool
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
	left    []string          // the nodes a refused Campaign left behind
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

// leaderNow returns the path of the current leader, "" if none.
func (a *electionAPI) leaderNow() string {
	if a.single {
		if a.w.owner(a.path) == 0 {
			return ""
		}
		return a.path
	}
	var nodes []seqNode
	for _, name := range a.w.children(electionDir) {
		if n, ok := a.candidate(name); ok {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return ""
	}
	sortSeqNodes(nodes)
	return electionDir + "/" + nodes[0].name
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

// apiConn returns the session the calls op make (Leader, Observe, Resume
// of another's node), a new one if it is missing or ended. They do not
// run on the clients' own sessions: two goroutines that call one session
// at once (a client acquiring and observing) would send their requests in
// whatever order the Go scheduler wakes them, and a seed would not replay.
//
// On an ensemble no member may take a new session (an election): the
// action is skipped then.
func (a *electionAPI) apiConn(t *rapid.T, op string) *sim.Conn {
	conn := a.conns[op]
	if conn == nil || conn.State() == zksim.StateExpired || conn.State() == zksim.StateClosed || conn.State() == zksim.StateAuthFailed {
		var err error
		if conn, err = a.w.connect(t); err != nil {
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
		e = election.New(conn, electionDir, a.opts()...)
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
var apiOps = []string{"leader", "observe", "proclaim", "campaign again", "resign idle", "resume", "invalid acl", "foreign"}

// actions are the election API's actions: the calls that read the
// election (election_readers.go), a candidate's other calls
// (election_candidates.go) and a third party's doings
// (election_thirdparty.go). The single node has no Proclaim, Guard or
// Resume, and no candidates' sequence to race or junk to ignore.
func (a *electionAPI) actions() map[string]func(*rapid.T) {
	m := map[string]func(*rapid.T){
		"Leader":            a.callLeader,
		"Observe":           a.observe,
		"ExpireObserver":    a.expireObserver,
		"StopObserve":       a.stopObserve,
		"CampaignAgain":     a.campaignAgain,
		"ResignIdle":        a.resignIdle,
		"CancelRelease":     a.cancelRelease,
		"DeleteNode":        a.deleteCandidate,
		"DeleteWhileDown":   a.deleteWhileDown,
		"InvalidACL":        a.invalidACL,
		"CampaignAfterLoss": a.campaignAfterLoss,
	}
	if a.single {
		return m
	}
	m["ProclaimIdle"] = a.proclaimIdle
	m["LeaderRaceDelete"] = func(t *rapid.T) { a.leaderRace(t, false) }
	m["LeaderRaceCancel"] = func(t *rapid.T) { a.leaderRace(t, true) }
	m["ProclaimGone"] = a.proclaimGone
	m["SetTwo"] = a.setTwo
	m["Guard"] = a.callGuard
	m["Resume"] = a.callResume
	m["Junk"] = a.createJunk
	if a.w.cfg.members == 0 {
		// (Not on the ensemble, whose committed fail files draw from
		// the actions as they were.)
		m["Foreign"] = a.foreignNode
	}
	return m
}

// pollLimit is how many reads an observer may make while nothing changes
// (connection losses make it read again, a few times).
const pollLimit = 50
