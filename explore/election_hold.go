package explore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/sim"
)

// The elections as the lock machine's holdables: leading is holding,
// Campaign (or Resume) acquires, Resign releases, and the leader's token is
// its term. The lock machine drives them (lock_machine.go) and checks the
// invariants an election shares with a lock; election_invariants.go says
// which.

// electionDir is the directory of both elections' candidate nodes.
const electionDir = "/election"

// electionKind and singleNodeKind are the lock machine's kinds of the two
// elections, election.New and election.SingleNode, each with the rest of
// its API (newElectionAPI, newSingleNodeAPI).
var (
	electionKind = lockKind{
		name:    "leadership",
		dirs:    []string{electionDir},
		newHold: newElectionHold,
		api:     newElectionAPI,
	}
	singleNodeKind = lockKind{
		name:    "single-node leadership",
		dirs:    []string{electionDir},
		newHold: newSingleNodeHold,
		api:     newSingleNodeAPI,
	}
)

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
	// called: the last Acquire called the Election (Campaign or Resume);
	// a resume whose own create failed did not.
	called *atomic.Bool
}

// untouched reports whether the last Acquire failed before it called the
// Election: the Election's last hold is as it was (see lockFamily.acquire).
func (h electionHold) untouched() bool { return !h.called.Load() }

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
	a := apiOf(c)
	var opts []election.Option
	if a != nil {
		opts = a.opts()
	}
	h := electionHold{Election: election.New(own, electionDir, opts...), c: c, conn: c.conn, own: own, called: new(atomic.Bool)}
	if t != nil {
		// (A resume makes its node by hand, in zksim's layout only.)
		h.resume = rapid.Bool().Draw(t, "resume") && (a == nil || a.ownLayout())
		if a != nil && rapid.Bool().Draw(t, "proclaim") {
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
	h.called.Store(!h.resume)
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
	h.called.Store(true)
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
