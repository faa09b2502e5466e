package explore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/zkmem"
)

// The queue machine: client 0 produces, the others consume (Take, and
// TryTake as the action "Poll"), and faults strike.
//
// Invariants:
//   - no item is delivered twice (checked as each item is delivered);
//   - FIFO queue, one producer: items leave in offer order (an item is never
//     removed while an earlier one is still there);
//   - priority queue, one consumer: each item delivered comes first, by
//     (priority, offer order), among the items that were there when the
//     call began and are still there;
//   - locking queue: a Take returns an item only while its live session
//     owns a claim; no idle client with a live session owns a claim (none is
//     left behind); an Ack never succeeds on an item a third party deleted,
//     nor a second Ack or Release on an item acknowledged or released (the
//     Stale action); a consumer may hold an item (the Finish action ends
//     the hold) while faults and third-party deletes strike;
//   - arranged on purpose (rare otherwise): races on a held item
//     (HeldRace, queue_race.go), a directory the server refuses to make
//     (Refuse, queue_refuse.go), a call cancelled at a given request or
//     as its reply arrives (CancelAt, queue_cancel.go);
//   - renewing clients (queue_renew.go): with faults each process runs on
//     a plain Conn or a sim.Renewing, drawn; a call begun on one session
//     of a Renewing returns ErrSessionExpired, not a result, once it runs
//     on another (checkSession); ExpireAt expires a session at a request
//     kind drawn; ExpireGone (locking queue) expires it as a claim whose
//     item went is undone;
//   - the priority queue also gets a plain Queue's items (the package
//     documents them as of priority 0; the action Mixed);
//   - the strict kinds' recipe calls keep to the retry timing: after an
//     operation's first connection loss the next request leaves as soon
//     as the connection is back, later ones after the backoff (a shared
//     timedConn, retrycheck.go; queueConn, beginQueueOp).
//
// Liveness: once faults stop, the consumers drain the queue, and every item
// whose Offer succeeded has been delivered, except, for the FIFO and
// priority queues, at most one per consumer call that failed (cancelled,
// or its session expired): the package documents that an item whose remove
// was applied just as the call gave up is lost with it. The locking queue
// promises more and is held to it strictly: no item is lost but one whose
// Ack failed after the Ack may have been applied (see live).

// consumer is what the machine's consumers do.
type consumer interface {
	Take(ctx context.Context) ([]byte, error)
	TryTake(ctx context.Context) ([]byte, error) // queue.ErrEmpty: no item
}

// peeker is a consumer that can read the head without taking it
// (queue.ErrEmpty: no item).
type peeker interface {
	Peek(ctx context.Context) ([]byte, error)
}

// counter is a consumer that can count the items.
type counter interface {
	Len(ctx context.Context) (int, error)
}

// queueKind makes the producer and consumer values of one queue recipe.
type queueKind struct {
	name     string
	priority bool // items carry a priority; one consumer
	locking  bool // items are taken by claim and Ack: no FIFO check
	// strict: the recipe's calls return only the errors the package
	// documents (see allowedError); the flawed test-code consumers are not
	// held to it.
	strict   bool
	itemsDir string // where the items are
	offer    func(c *client, ctx context.Context, data []byte, prio int32) error
	consumer func(c *client) consumer
}

const queueDir = "/queue"

// queueACL is the ACL the machine's queues give their nodes (with
// queue.WithACL): every permission but admin, so that it differs from the
// default.
var queueACL = zksim.WorldACL(zksim.PermAll &^ zksim.PermAdmin)

var (
	fifoKind = queueKind{
		name:     "FIFO queue",
		strict:   true,
		itemsDir: queueDir,
		offer: func(c *client, ctx context.Context, data []byte, _ int32) error {
			return c.w.fam.(*queueFamily).producer(c).(*queue.Queue).Offer(ctx, data)
		},
		consumer: func(c *client) consumer { return queue.New(queueConn(c), queueDir, queue.WithACL(queueACL)) },
	}
	priorityKind = queueKind{
		name:     "priority queue",
		priority: true,
		strict:   true,
		itemsDir: queueDir,
		offer: func(c *client, ctx context.Context, data []byte, prio int32) error {
			return c.w.fam.(*queueFamily).producer(c).(*queue.PriorityQueue).Offer(ctx, data, prio)
		},
		consumer: func(c *client) consumer { return queue.NewPriority(queueConn(c), queueDir, queue.WithACL(queueACL)) },
	}
)

type queueFamily struct {
	w    *world
	kind queueKind
	cons []consumer // by client; cons[0] is the producer's queue value

	mu        sync.Mutex
	offered   int           // items whose Offer began
	added     map[int]bool  // items known to have been added
	prio      map[int]int32 // item priorities
	delivered map[int]int   // deliveries per item
	failed    int           // consumer calls that failed: each may lose an item
	uncertain map[int]bool  // locking queue: items whose Ack failed, maybe applied

	// Who removed what (machine goroutine only): the FIFO and priority
	// queues excuse a lost item only if the consumer call that removed it
	// failed, one item per failed call.
	calls     []int          // by client: its current consumer call's id
	callSeq   int            // the last call id given
	attempts  map[string]int // item path -> the call whose delete of it the server applied last
	names     map[string]int // item path -> item number, as last seen
	seen      map[string]bool
	removedBy map[int]int  // item -> the call that removed it
	failedIDs map[int]bool // consumer calls that failed (guarded by mu)
	draining  bool         // the final drain: cancelled calls lose nothing
	// deleted are the items a third party deleted (the Delete action);
	// withdrawn, those whose Offer was cancelled and failed: gone, but not
	// lost by the recipe.
	deleted, withdrawn map[int]bool
	// emptyWatch: for the Peek and TryTake calls under way, whether the
	// queue has been empty since the call began (see watchEmpty).
	emptyWatch map[int]bool
	snapshots  map[int][]int  // priority queue: items present when a call began, by client
	order      map[int]string // what each consumer call returned, for messages
	// holds: locking queue, the consumers holding an item (the end
	// "hold") until the Finish action, or the drain, lets them go on.
	holds map[int]chan struct{}
	// done: locking queue, items acknowledged or released, by the client
	// that held them (for the Stale action).
	done map[int][]*queue.Item
	// claimDeletes counts the claims a third party deleted.
	claimDeletes int
	// held: locking queue, the item each holder holds; holdThen, how
	// HeldRace has it end its hold ("release", else Ack); lostClaims, the
	// items whose claim HeldRace deleted (or expired with the holder's
	// session) while they were held.
	held       map[int]*queue.Item
	holdThen   map[int]string
	lostClaims map[*queue.Item]bool
	// lostReplies: the items whose Ack's reply HeldRace had lost.
	lostReplies map[*queue.Item]bool
	// plain: priority queue, the items a plain Queue value of the producer
	// offered (plainQueue); plainQ is that value, plainC the session it
	// was made for (a Renewing's value lives on).
	plain map[int]bool
	// itemNums: the item number of each item node name seen (itemAt).
	itemNums map[string]int
	plainQ   *queue.Queue
	plainC   int64
	// plainSessions: the sessions the producer has offered plain items
	// on; each may own two receipts (one per queue value) for as long as
	// the server keeps it, which after an authentication failure is a
	// timeout past the producer's next session.
	plainSessions map[int64]bool
	// claimGone: the items whose claim the Delete action deleted.
	claimGone map[int]bool
	// cancelAts: where CancelAt cancels each client's call.
	cancelAts map[int]*cancelPoint
	// expireAts: where ExpireAt expires each client's session.
	expireAts map[int]*expirePoint
	// refusing: the action Refuse has the server refuse to make the
	// directory a Take needs; mayRefuse, the clients whose call under way
	// may meet that refusal (zksim.ErrNoAuth is then a documented outcome).
	refusing  bool
	mayRefuse map[int]bool
}

func newQueueFamily(w *world, kind queueKind) *queueFamily {
	f := &queueFamily{w: w, kind: kind, added: map[int]bool{}, prio: map[int]int32{}, uncertain: map[int]bool{},
		delivered: map[int]int{}, snapshots: map[int][]int{}, order: map[int]string{},
		calls: make([]int, len(w.clients)), attempts: map[string]int{}, names: map[string]int{},
		seen: map[string]bool{}, removedBy: map[int]int{}, failedIDs: map[int]bool{}, deleted: map[int]bool{}, withdrawn: map[int]bool{}, emptyWatch: map[int]bool{},
		holds: map[int]chan struct{}{}, done: map[int][]*queue.Item{},
		held: map[int]*queue.Item{}, holdThen: map[int]string{}, lostClaims: map[*queue.Item]bool{}, lostReplies: map[*queue.Item]bool{}, cancelAts: map[int]*cancelPoint{}, expireAts: map[int]*expirePoint{}, claimGone: map[int]bool{}, plain: map[int]bool{}, itemNums: map[string]int{}, mayRefuse: map[int]bool{}}
	for _, c := range w.clients {
		f.cons = append(f.cons, kind.consumer(c))
	}
	return f
}

// plainQueue returns the producer p's plain Queue value on the priority
// queue's directory, made on first use and anew for a new session of a
// plain Conn.
func (f *queueFamily) plainQueue(p *client) *queue.Queue {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.plainQ == nil || (p.renewing == nil && f.plainC != p.conn.SessionID()) {
		f.plainQ = queue.New(queueConn(p), queueDir, queue.WithACL(queueACL))
		f.plainC = p.conn.SessionID()
	}
	return f.plainQ
}

// producer returns client c's queue value (the producer offers through it).
func (f *queueFamily) producer(c *client) consumer { return f.cons[c.idx] }

func (f *queueFamily) renew(c *client) {
	if c.renewing != nil {
		return // the process goes on with its queue values (queue_renew.go)
	}
	f.cons[c.idx] = f.kind.consumer(c)
	f.mu.Lock()
	delete(f.done, c.idx) // items of the old session's queue value
	f.mu.Unlock()
}

func (f *queueFamily) consumers() []*client {
	var out []*client
	for _, c := range f.w.awake() {
		if c.idx > 0 && !c.busy("") && (!f.kind.priority || c.idx == 1) {
			out = append(out, c)
		}
	}
	return out
}

func (f *queueFamily) actions() map[string]func(*rapid.T) {
	a := map[string]func(*rapid.T){
		"Offer": func(t *rapid.T) {
			p := f.w.clients[0]
			if p.paused() || p.busy("") {
				t.SkipNow()
			}
			var prio int32
			plain := false
			if f.kind.priority {
				// A plain Queue's item in the priority queue's directory
				// now and then: the package documents it as of priority 0.
				plain = rapid.IntRange(0, 5).Draw(t, "plain") == 0
				if !plain {
					prio = rapid.SampledFrom(priorities).Draw(t, "priority")
				}
			}
			f.offer(p, prio, plain)
		},
		"Take": func(t *rapid.T) { f.take(drawClient(t, f.consumers(), "take"), true, f.drawEnd(t)) },
		"Poll": func(t *rapid.T) { f.take(drawClient(t, f.consumers(), "poll"), false, f.drawEnd(t)) },
		// Peek reads the head; Len counts the items (both run in the
		// consumer's "take" slot, so Cancel can end them too).
		"Peek": func(t *rapid.T) {
			c := drawClient(t, f.consumers(), "peek")
			if _, ok := f.cons[c.idx].(peeker); !ok {
				t.SkipNow()
			}
			f.peek(c)
		},
		"Len": func(t *rapid.T) {
			c := drawClient(t, f.consumers(), "len")
			if _, ok := f.cons[c.idx].(counter); !ok {
				t.SkipNow()
			}
			f.count(c)
		},
		// Delete has a third party delete one of the queue's nodes: an
		// item (it is gone, not lost), a claim, an empty claims directory,
		// or the receipt of a client that is idle (no call under way, nothing
		// in flight: with a reply outstanding, the receipt is all the recipe
		// has to learn its outcome, and the package does not promise
		// exactly once then).
		"Delete": func(t *rapid.T) { f.thirdPartyDelete(t) },
		// Stale has an idle consumer call Ack or Release again on an item
		// it acknowledged or released before: the package promises
		// ErrClaimLost at once, even if the item's claim path is another
		// consumer's claim by then.
		"Stale": func(t *rapid.T) { f.stale(t) },
		// Finish lets a locking-queue consumer that holds an item (the
		// end "hold": it works on the item meanwhile) acknowledge it.
		"Finish": func(t *rapid.T) {
			f.mu.Lock()
			defer f.mu.Unlock()
			idx := slices.Sorted(maps.Keys(f.holds))
			if len(idx) == 0 {
				t.SkipNow()
			}
			i := rapid.SampledFrom(idx).Draw(t, "finish")
			close(f.holds[i])
			delete(f.holds, i)
		},
		// Cancel ends a consumer's call, or the producer's Offer.
		"Cancel": func(t *rapid.T) {
			var busy []*client
			for _, c := range f.w.awake() {
				if c.busy("take") || (c.busy("offer") && f.kind.strict) {
					busy = append(busy, c)
				}
			}
			c := drawClient(t, busy, "cancel")
			if c.idx == 0 {
				// The item of a cancelled Offer may be withdrawn (see offer).
				f.mu.Lock()
				f.withdrawn[f.offered-1] = true
				f.mu.Unlock()
				c.stop("offer")
				return
			}
			c.stop("take")
		},
	}
	if f.kind.strict && f.kind.priority {
		// Mixed: a plain Queue's item and a priority item, in an order
		// drawn, then a TryTake (see mixed).
		a["Mixed"] = f.mixed
	}
	if f.kind.strict && f.kind.locking {
		// HeldRace: races on a held item, arranged on purpose (see
		// queue_race.go).
		a["HeldRace"] = f.heldRace
	}
	if f.kind.strict {
		// CancelAt: a call cancelled at a request (see queue_cancel.go).
		a["CancelAt"] = f.cancelAt
	}
	if f.kind.strict && f.w.cfg.faults {
		// ExpireAt: a session expired at a request (see queue_renew.go).
		a["ExpireAt"] = f.expireAt
	}
	if f.kind.strict && f.kind.locking && f.w.cfg.faults {
		// ExpireGone: a claimed item gone and the session expired as
		// the claim is undone (see queue_renew.go).
		a["ExpireGone"] = f.expireGone
	}
	if f.kind.strict && !f.kind.priority {
		// Refuse: a directory the server refuses to make (see
		// queue_refuse.go).
		a["Refuse"] = f.refuse
	}
	if !f.kind.strict {
		// The flawed test-code consumers keep the machine they were
		// tuned on (the committed seed catches them with it): no Peek,
		// Len or third-party deletes, and no cancelled Offer.
		delete(a, "Peek")
		delete(a, "Len")
		delete(a, "Delete")
		delete(a, "Finish")
		delete(a, "Stale")
	}
	return a
}

func (f *queueFamily) offer(p *client, prio int32, plain bool) {
	f.noteCall(p)
	f.mu.Lock()
	k := f.offered
	f.offered++
	f.prio[k] = prio
	if plain {
		f.prio[k], f.plain[k] = 0, true
	}
	f.mu.Unlock()
	var plainQ *queue.Queue
	if plain {
		plainQ = f.plainQueue(p)
		f.mu.Lock()
		if f.plainSessions == nil {
			f.plainSessions = map[int64]bool{}
		}
		f.plainSessions[p.conn.SessionID()] = true
		f.mu.Unlock()
	}
	p.start("offer", func(ctx context.Context) error {
		beginQueueOp(p)
		conn := began(p)
		data := []byte(fmt.Sprintf("item-%03d", k))
		var err error
		if plainQ != nil {
			err = plainQ.Offer(ctx, data)
		} else {
			err = f.kind.offer(p, ctx, data, prio)
		}
		f.checkSession(p, conn, ctx, "Offer", err)
		f.checkError(p, "Offer", err)
		if err == nil {
			f.mu.Lock()
			delete(f.withdrawn, k) // it was too late to cancel
			f.mu.Unlock()
		}
		if err != nil && ctx.Err() != nil {
			// Withdrawn: the package deletes the item of an Offer whose
			// context ended, if it is still there (while the session the
			// Offer began on lives: a Renewing's new session does not
			// clean up after the old one's call; a client that failed to
			// authenticate can clean up nothing, though the server keeps
			// its session a timeout longer).
			if f.kind.strict && f.w.sessionLive(p) && !p.authFailed() && (conn == nil || conn == began(p)) && slices.Contains(f.present(), k) {
				f.w.violate(kindWithdrawnItemQueued, "p0's Offer of item %d was cancelled, and the item is still queued", k)
			}
		}
		if err == nil {
			f.mu.Lock()
			f.added[k] = true
			f.mu.Unlock()
		}
		return err
	})
}

func (f *queueFamily) take(c *client, wait bool, end string) {
	f.noteCall(c)
	q := f.cons[c.idx]
	before := f.present()
	if f.kind.priority {
		f.mu.Lock()
		f.snapshots[c.idx] = before
		f.mu.Unlock()
	}
	f.mu.Lock()
	f.callSeq++
	id := f.callSeq
	f.mu.Unlock()
	f.calls[c.idx] = id
	if !wait {
		f.watchEmpty(id)
	}
	var (
		claimsBefore []string
		solo         bool // no other consumer call under way
	)
	if f.kind.locking && !wait {
		claimsBefore, solo = f.w.children(queueDir+"/claims"), f.solo(c)
	}
	c.start("take", func(ctx context.Context) error {
		beginQueueOp(c)
		ctx = withCall(ctx, id)
		var (
			data []byte
			ok   = true
			err  error
		)
		conn := began(c)
		start := c.session() // the session the call begins on
		if conn != nil {
			start = conn
		}
		if lc, isLocking := q.(lockingConsumer); isLocking && end != "" {
			data, ok, err = f.lockingCall(ctx, c, lc.q, wait, end)
			if errors.Is(err, queue.ErrEmpty) {
				ok, err = false, nil
				f.checkEmptyLocking(c, id, before, claimsBefore, solo)
			}
		} else if wait {
			data, err = q.Take(ctx)
			f.checkSession(c, conn, ctx, "Take", err)
		} else {
			data, err = q.TryTake(ctx)
			f.checkSession(c, conn, ctx, "TryTake", err)
			if errors.Is(err, queue.ErrEmpty) {
				ok, err = false, nil
				if f.kind.locking {
					f.checkEmptyLocking(c, id, before, claimsBefore, solo)
				} else {
					f.checkEmpty(c, "TryTake", id)
				}
			}
		}
		f.mu.Lock()
		delete(f.emptyWatch, id)
		f.mu.Unlock()
		f.checkError(c, "Take", err)
		if f.kind.strict && errors.Is(err, zksim.ErrSessionExpired) && f.w.sessionAlive(start) {
			// The package documents ErrSessionExpired for a session that
			// can no longer act, not for one the server still has.
			f.w.violate(kindUnexpectedError, "p%d's Take returned %v, but its session c%d is live", c.idx, err, start.Index())
		}
		if err != nil && data != nil && f.kind.strict && !f.kind.locking {
			f.w.violate(kindDataWithError, "p%d's call returned item data with the error %v", c.idx, err)
		}
		if err != nil {
			f.mu.Lock()
			if k, ok := itemNumber(data); ok && f.kind.locking {
				// Taken, and the Ack failed: it may have been applied.
				f.uncertain[k] = true
			}
			// A call cancelled by the final drain may have removed an
			// item too (it was in a backoff after a lost reply, say):
			// it is excused for the item it removed, and only that one.
			f.failedIDs[id] = true
			if !f.draining {
				f.failed++
			}
			f.mu.Unlock()
			return err
		}
		if ok {
			f.deliver(c, string(data))
		}
		return nil
	})
}

// mixed runs the action Mixed on a priority queue: with the producer and
// the consumer idle, the producer offers a priority item (priority drawn)
// and a plain Queue's item, in an order drawn, each once the one before
// is in, then the consumer calls TryTake. The package documents a plain
// item as of priority 0 (recipes/queue/doc.go), so the one that comes out
// first is the plain one if the other's value is above 0, or equal and
// offered later; deliver checks it, as every delivery.
func (f *queueFamily) mixed(t *rapid.T) {
	w := f.w
	p, c := w.clients[0], w.clients[1]
	if p.paused() || p.busy("") || c.paused() || c.busy("") {
		t.SkipNow()
	}
	prio := rapid.SampledFrom(priorities).Draw(t, "priority")
	plainFirst := rapid.Bool().Draw(t, "plain first")
	for _, plain := range []bool{plainFirst, !plainFirst} {
		f.offer(p, prio, plain)
		for range heldRaceRuns {
			w.runFor(t, 50*time.Millisecond)
			if !p.busy("offer") || w.violated() {
				break
			}
		}
		if p.busy("") {
			return // not this time (a fault struck, say)
		}
	}
	f.take(c, false, "")
	w.runFor(t, 50*time.Millisecond)
}

// priorities are the priorities the producer draws from: the extremes
// and both signs, so that the encoding of priorities in item names is
// tested over its whole range, and a few equal ones.
var priorities = []int32{math.MinInt32, -1, 0, 1, 0x7fff, math.MaxInt32}

// peek starts a Peek by c: the item it returns must be one that was
// offered, and no item present throughout the call may come before it;
// queue.ErrEmpty only if no item was present throughout.
func (f *queueFamily) peek(c *client) {
	q := f.cons[c.idx].(peeker)
	before := f.present()
	f.mu.Lock()
	f.callSeq++
	id := f.callSeq
	f.mu.Unlock()
	f.watchEmpty(id)
	c.start("take", func(ctx context.Context) error {
		beginQueueOp(c)
		conn := began(c)
		data, err := q.Peek(ctx)
		f.checkSession(c, conn, ctx, "Peek", err)
		defer func() {
			f.mu.Lock()
			delete(f.emptyWatch, id)
			f.mu.Unlock()
		}()
		if errors.Is(err, queue.ErrEmpty) {
			f.checkEmpty(c, "Peek", id)
			return err
		}
		f.checkError(c, "Peek", err)
		if err != nil {
			return err
		}
		k, ok := itemNumber(data)
		f.mu.Lock()
		offered := f.offered
		f.mu.Unlock()
		if !ok || k >= offered {
			f.w.violate(kindGarbageDelivered, "p%d peeked %q", c.idx, data)
			return nil
		}
		c.note("peeked item %d", k)
		now := f.present()
		for _, i := range before {
			if slices.Contains(now, i) && f.precedes(i, k) {
				f.w.violate(kindPeekOrder, "p%d peeked item %d while item %d, before it, was queued throughout", c.idx, k, i)
			}
		}
		return nil
	})
}

// count starts a Len by c: it must count at least the items present
// throughout the call.
func (f *queueFamily) count(c *client) {
	q := f.cons[c.idx].(counter)
	before := f.present()
	c.start("take", func(ctx context.Context) error {
		beginQueueOp(c)
		conn := began(c)
		n, err := q.Len(ctx)
		f.checkSession(c, conn, ctx, "Len", err)
		f.checkError(c, "Len", err)
		if err != nil {
			return err
		}
		c.note("counted %d items", n)
		now := f.present()
		throughout := 0
		for _, i := range before {
			if slices.Contains(now, i) {
				throughout++
			}
		}
		if n < throughout {
			f.w.violate(kindWrongLength, "p%d counted %d items while %d were queued throughout", c.idx, n, throughout)
		}
		return nil
	})
}

// watchEmpty starts watching, for the call id, whether the queue is ever
// empty while it runs: now, after any step of the simulator (check), or
// when it returns. Every change of the tree is a step, and check runs
// after every step, so the machine sees every state the call's listings
// can have read.
func (f *queueFamily) watchEmpty(id int) {
	empty := f.empty()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.emptyWatch[id] = empty
}

// empty reports whether the queue has no item.
func (f *queueFamily) empty() bool { return emptyOf(f.w.children(f.kind.itemsDir)) }

// emptyOf reports whether the listing names of the items directory has no
// item.
func emptyOf(names []string) bool {
	for _, name := range names {
		if strings.Contains(name, "qn-") {
			return false
		}
	}
	return true
}

// noteEmpty records, for the calls under way, that the queue is empty.
func (f *queueFamily) noteEmpty(names []string) {
	f.mu.Lock()
	n := len(f.emptyWatch)
	f.mu.Unlock()
	if n == 0 || !emptyOf(names) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range f.emptyWatch {
		f.emptyWatch[id] = true
	}
}

// checkEmpty records a violation if c's call op (id) reported an empty
// queue while the queue was never empty during the call: Peek and TryTake
// answer ErrEmpty only from a listing that found no item. (A locking
// queue's TryTake is checked by checkEmptyLocking.)
func (f *queueFamily) checkEmpty(c *client, op string, id int) {
	f.mu.Lock()
	seen := f.emptyWatch[id]
	delete(f.emptyWatch, id)
	f.mu.Unlock()
	if !f.kind.strict || seen || f.empty() {
		return
	}
	f.w.violate(kindEmptyWhileQueued, "p%d's %s found the queue empty, and it was not empty at any time during the call", c.idx, op)
}

// solo reports whether no consumer but c has a call under way that could
// claim an item: a locking-queue consumer that holds an item (the end
// "hold") claims nothing more.
func (f *queueFamily) solo(c *client) bool {
	for _, o := range f.w.clients[1:] {
		f.mu.Lock()
		_, holding := f.holds[o.idx]
		f.mu.Unlock()
		if o != c && o.busy("take") && !holding {
			return false
		}
	}
	return true
}

// checkEmptyLocking records a violation if a locking queue's TryTake by c
// (call id) found nothing to claim while an item was queued and unclaimed
// throughout: present and unclaimed both before and after the call, with
// no other consumer call under way meanwhile (which could have claimed it
// for a while).
func (f *queueFamily) checkEmptyLocking(c *client, id int, before []int, claimsBefore []string, solo bool) {
	if !f.kind.strict || !solo {
		return
	}
	f.mu.Lock()
	later := f.callSeq != id
	f.mu.Unlock()
	if later || !f.solo(c) {
		return
	}
	claimed := map[int]bool{}
	for _, names := range [][]string{claimsBefore, f.w.children(queueDir + "/claims")} {
		for _, name := range names {
			if data, _, err := f.w.observer.Get(f.w.ctx, f.kind.itemsDir+"/"+name); err == nil {
				if k, ok := itemNumber(data); ok {
					claimed[k] = true
				}
			}
		}
	}
	now := f.present()
	for _, i := range before {
		if slices.Contains(now, i) && !claimed[i] {
			f.w.violate(kindEmptyWhileQueued, "p%d's TryTake found nothing to claim while item %d was queued and unclaimed throughout", c.idx, i)
			return
		}
	}
}

// checkError records a violation if c's call op returned an error the
// package does not document: a queue call fails only when its context
// ends, its session expired, its Conn was closed or its client failed to
// authenticate; ErrEmpty comes from
// TryTake and Peek, ErrClaimLost from a locking queue's Ack and Release.
func (f *queueFamily) checkError(c *client, op string, err error) {
	if err == nil || !f.kind.strict {
		return
	}
	f.mu.Lock()
	refused := f.mayRefuse[c.idx] && errors.Is(err, zksim.ErrNoAuth)
	f.mu.Unlock()
	// ErrAuthFailed: its client failed to authenticate (authfail.go).
	authFailed := errors.Is(err, zksim.ErrAuthFailed) && f.w.sw.AuthFailed(c.conn.Index())
	if !allowedError(err) && !refused && !authFailed {
		f.w.violate(kindUnexpectedError, "p%d's %s returned %v", c.idx, op, err)
		return
	}
	// ErrClosing means the Conn was closed (the machine closes its Conns
	// only when the run ends), not that the session expired.
	if errors.Is(err, zksim.ErrClosing) && c.conn.State() != zksim.StateClosed {
		f.w.violate(kindUnexpectedError, "p%d's %s returned %v, and its Conn is %v", c.idx, op, err, c.conn.State())
	}
}

// allowedError reports whether err is one the queue package documents.
func allowedError(err error) bool {
	for _, e := range []error{context.Canceled, zksim.ErrSessionExpired, zksim.ErrClosing, queue.ErrEmpty, queue.ErrClaimLost} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// thirdPartyDelete deletes, as a third party, a node of the queue drawn
// from those Delete may delete.
func (f *queueFamily) thirdPartyDelete(t *rapid.T) {
	w := f.w
	w.sw.Enabled() // every client blocked: busy and in-flight are settled
	owners := w.owners()
	var paths []string
	for _, name := range w.children(f.kind.itemsDir) {
		p := f.kind.itemsDir + "/" + name
		if strings.HasPrefix(name, "_r_") {
			c, ok := owners[w.owner(p)]
			if !ok || c.busy("") || w.inFlight(c) {
				continue
			}
		}
		paths = append(paths, p)
	}
	if f.kind.locking {
		claims := w.children(queueDir + "/claims")
		for _, name := range claims {
			paths = append(paths, queueDir+"/claims/"+name)
		}
		if ok, _, _ := w.observer.Exists(w.ctx, queueDir+"/claims"); ok && len(claims) == 0 {
			paths = append(paths, queueDir+"/claims")
		}
	}
	if len(paths) == 0 {
		t.SkipNow()
	}
	p := rapid.SampledFrom(paths).Draw(t, "delete")
	if strings.HasPrefix(p, queueDir+"/claims") {
		f.mu.Lock()
		f.claimDeletes++
		if k, ok := f.names[f.kind.itemsDir+"/"+path.Base(p)]; ok {
			f.claimGone[k] = true
		}
		f.mu.Unlock()
	}
	if data, _, err := w.observer.Get(w.ctx, p); err == nil && strings.HasPrefix(p, f.kind.itemsDir+"/") {
		if k, ok := itemNumber(data); ok && !strings.Contains(p, "/_r_") {
			f.mu.Lock()
			f.deleted[k] = true
			f.mu.Unlock()
		}
	}
	w.inject(t, faults.DeleteNode(p))
}

// itemName and receiptName are the names the package documents for its
// nodes in the items directory: a protected name (Curator's "_c_", a
// 36-character GUID) with, for a PriorityQueue item, "p" and the priority
// as 8 hex digits, its sign bit flipped; then "qn-" and the sequence
// number (%010d of an int32: signed past the wrap).
var (
	itemName    = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-(p([0-9a-f]{8})-)?qn-([0-9]{10}|-[0-9]{9,10})$`)
	receiptName = regexp.MustCompile(`^_r_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// checkNames records a violation if a node in the items directory has a
// name other than the documented ones, or a priority item's name does not
// carry its priority.
func (f *queueFamily) checkNames(names []string) {
	if !f.kind.strict {
		return
	}
	for _, name := range names {
		if receiptName.MatchString(name) {
			continue
		}
		m := itemName.FindStringSubmatch(name)
		if m == nil {
			f.w.violate(kindNodeName, "%s/%s is not a documented name", f.kind.itemsDir, name)
			continue
		}
		k, ok := f.itemAt(name)
		f.mu.Lock()
		prio, plain := f.prio[k], f.plain[k]
		f.mu.Unlock()
		if (m[1] != "") != (f.kind.priority && !(ok && plain)) {
			f.w.violate(kindNodeName, "%s/%s is not a documented name", f.kind.itemsDir, name)
			continue
		}
		if !f.kind.priority || !ok || plain {
			continue
		}
		if want := fmt.Sprintf("%08x", uint32(prio)^0x80000000); m[2] != want {
			f.w.violate(kindNodeName, "item %d (priority %d) is named %s, not with p%s", k, prio, name, want)
		}
	}
}

// checkReceipts records a violation if a session owns more than one
// receipt: each queue value keeps one (the machine's processes have one
// queue value per session).
func (f *queueFamily) checkReceipts(names []string) {
	if !f.kind.strict {
		return
	}
	count := map[int64]int{}
	f.mu.Lock()
	plainSessions := maps.Clone(f.plainSessions)
	f.mu.Unlock()
	for _, name := range names {
		if !strings.HasPrefix(name, "_r_") {
			continue
		}
		if o := f.w.owner(f.kind.itemsDir + "/" + name); o != 0 {
			count[o]++
			// The producer of a priority queue may also have a plain
			// Queue value on the directory (plainQueue): two values.
			limit := 1
			if plainSessions[o] {
				limit = 2
			}
			if count[o] == limit+1 {
				f.w.violate(kindReceipts, "session %#x owns more than one receipt in %s", o, f.kind.itemsDir)
			}
		}
	}
}

// checkClaimed records a violation if c's Take or TryTake returned it
// while c's session, still live, owns no claim: the package hands out an
// item only once its claim is made. (A claim deleted by a third party, or
// with the session, meanwhile excuses it; deletes is the count of third-party
// claim deletes when the call began.)
func (f *queueFamily) checkClaimed(c *client, it *queue.Item, deletes int) {
	f.mu.Lock()
	excused := f.claimDeletes != deletes
	f.mu.Unlock()
	if excused || !f.w.sessionLive(c) {
		return
	}
	for _, name := range f.w.children(queueDir + "/claims") {
		if f.w.owner(queueDir+"/claims/"+name) == c.conn.SessionID() {
			return
		}
	}
	f.w.violate(kindItemWithoutClaim, "p%d's Take returned item %s, and its session owns no claim", c.idx, it.Data())
}

// stale starts an Ack or Release, drawn, on an item an idle consumer
// acknowledged or released before; it must fail with ErrClaimLost.
func (f *queueFamily) stale(t *rapid.T) {
	var cs []*client
	for _, c := range f.consumers() {
		f.mu.Lock()
		n := len(f.done[c.idx])
		f.mu.Unlock()
		if n > 0 {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "stale")
	f.mu.Lock()
	items := f.done[c.idx]
	f.mu.Unlock()
	it := items[rapid.IntRange(0, len(items)-1).Draw(t, "item")]
	op := rapid.SampledFrom([]string{"Ack", "Release"}).Draw(t, "op")
	// "ErrClaimLost at once": without a request, so even under a done
	// context.
	done := rapid.Bool().Draw(t, "done context")
	c.start("take", func(ctx context.Context) error {
		beginQueueOp(c)
		if done {
			dctx, cancel := context.WithCancel(ctx)
			cancel()
			ctx = dctx
		}
		var err error
		if op == "Ack" {
			err = it.Ack(ctx)
		} else {
			err = it.Release(ctx)
		}
		switch {
		case err == nil:
			f.w.violate(kindCallOnAnItemNotHeld, "p%d's %s succeeded on item %s, acknowledged or released before", c.idx, op, it.Data())
		case !errors.Is(err, queue.ErrClaimLost) && done:
			f.w.violate(kindCallOnAnItemNotHeld, "p%d's %s on item %s, acknowledged or released before, returned %v, not ErrClaimLost at once", c.idx, op, it.Data(), err)
		case !errors.Is(err, queue.ErrClaimLost):
			f.checkError(c, "stale "+op, err)
		}
		return err
	})
}

// checkClaims records a violation if a client with nothing under way
// (no call, no request in flight) and a live session owns a claim of the
// locking queue: the machine's consumers end every call with the item
// acknowledged or released, and the package deletes a claim that a failed
// Take may have made, so a claim left behind would keep its item from
// every consumer until the session ends.
func (f *queueFamily) checkClaims() {
	if !f.kind.strict || !f.kind.locking {
		return
	}
	var owners map[int64]*client
	for _, name := range f.w.children(queueDir + "/claims") {
		if owners == nil {
			owners = f.w.owners()
		}
		c, ok := owners[f.w.owner(queueDir+"/claims/"+name)]
		// (A client that failed to authenticate can delete nothing: its
		// claims go with its session, at the server's timeout.)
		if ok && !c.busy("") && !f.w.inFlight(c) && !f.w.sw.AuthFailed(c.conn.Index()) {
			f.w.violate(kindClaimLeftBehind, "p%d has nothing under way and still owns the claim %s", c.idx, name)
		}
	}
}

// checkACLs records a violation if a node of the queue does not have the
// ACL its queue values were given.
func (f *queueFamily) checkACLs() {
	if !f.kind.strict {
		return
	}
	var paths []string
	var walk func(p string)
	walk = func(p string) {
		paths = append(paths, p)
		for _, name := range f.w.children(p) {
			walk(p + "/" + name)
		}
	}
	walk(queueDir)
	for _, p := range paths {
		acl, _, err := f.w.observer.GetACL(f.w.ctx, p)
		if err == nil && !slices.Equal(acl, queueACL) {
			f.w.violate(kindACL, "%s has the ACL %v, not the queue's %v", p, acl, queueACL)
		}
	}
}

// itemNumber reads an item's number from its data.
func itemNumber(data []byte) (int, bool) {
	if data == nil {
		return 0, false
	}
	k, err := strconv.Atoi(strings.TrimPrefix(string(data), "item-"))
	return k, err == nil
}

// deliver records that c received the item with data.
func (f *queueFamily) deliver(c *client, data string) {
	k, err := strconv.Atoi(strings.TrimPrefix(data, "item-"))
	if err != nil {
		f.w.violate(kindGarbageDelivered, "p%d received %q", c.idx, data)
		return
	}
	f.mu.Lock()
	f.delivered[k]++
	n := f.delivered[k]
	before := f.snapshots[c.idx]
	f.mu.Unlock()
	c.note("received item %d", k)
	// The package's known limit (recipes/queue/doc.go, "claims deleted by
	// hand"): an Ack whose reply was lost while a third party deleted its
	// claim, and another consumer claimed and acknowledged the item, both
	// return nil.
	f.mu.Lock()
	limit := f.kind.locking && f.claimGone[k]
	f.mu.Unlock()
	if n > 1 && !limit {
		f.w.violate(kindDuplicateDelivery, "item %d delivered %d times (last to p%d)", k, n, c.idx)
	}
	if f.kind.priority {
		now := f.present()
		for _, i := range before {
			if slices.Contains(now, i) && f.precedes(i, k) {
				f.w.violate(kindPriorityOrder, "p%d received item %d (priority %d) while item %d (priority %d) was waiting", c.idx, k, f.prio[k], i, f.prio[i])
			}
		}
	}
}

// precedes reports whether item i must come out before item j.
func (f *queueFamily) precedes(i, j int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prio[i] != f.prio[j] {
		return f.prio[i] < f.prio[j]
	}
	return i < j
}

// present returns the items in the queue directory now, read by the
// observer.
func (f *queueFamily) present() []int { return f.presentOf(f.w.children(f.kind.itemsDir)) }

// presentOf returns the items of the listing names of the items directory.
func (f *queueFamily) presentOf(names []string) []int {
	var out []int
	for _, name := range names {
		if k, ok := f.itemAt(name); ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// itemAt returns the number of the item called name in the items
// directory, read by the observer once: no one writes an item node, and a
// name (its GUID in it) is never made twice.
func (f *queueFamily) itemAt(name string) (int, bool) {
	if !strings.Contains(name, "qn-") {
		return 0, false // a receipt
	}
	f.mu.Lock()
	k, ok := f.itemNums[name]
	f.mu.Unlock()
	if ok {
		return k, true
	}
	data, _, err := f.w.observer.Get(f.w.ctx, f.kind.itemsDir+"/"+name)
	if err != nil {
		return 0, false
	}
	k, err = strconv.Atoi(strings.TrimPrefix(string(data), "item-"))
	if err != nil {
		return 0, false
	}
	f.mu.Lock()
	f.itemNums[name] = k
	f.mu.Unlock()
	return k, true
}

// applied records, for a delete of an item (alone or in a multi) that the
// server applied, the consumer call that sent it.
func (f *queueFamily) applied(c *client, r *zkmem.Request) {
	record := func(p string) {
		if !strings.HasPrefix(p, f.kind.itemsDir+"/") || c.idx >= len(f.calls) {
			return
		}
		// The call that sent the delete, which may have returned (cancelled)
		// before the server applied it; failing that, the client's latest.
		if id, ok := f.w.sender(c.idx, p); ok {
			f.attempts[p] = id
			return
		}
		f.attempts[p] = f.calls[c.idx]
	}
	switch r.Op {
	case zkmem.OpDelete:
		record(r.Path)
	case zkmem.OpMulti:
		for _, op := range r.Ops {
			if d, ok := op.(*zksim.DeleteOp); ok {
				record(d.Path)
			}
		}
	}
}

// trackRemovals notes, for each item gone since the last look, the call
// whose delete removed it.
func (f *queueFamily) trackRemovals(names []string) {
	now := map[string]bool{}
	for _, name := range names {
		p := f.kind.itemsDir + "/" + name
		now[p] = true
		if _, ok := f.names[p]; !ok {
			if k, ok := f.itemAt(name); ok {
				f.names[p] = k
			}
		}
	}
	for p := range f.seen {
		if now[p] {
			continue
		}
		if k, ok := f.names[p]; ok {
			if id, ok := f.attempts[p]; ok {
				f.removedBy[k] = id
			}
		}
	}
	f.seen = now
}

func (f *queueFamily) check() {
	names := f.w.children(f.kind.itemsDir) // one listing for the checks of this step
	f.noteEmpty(names)
	f.trackRemovals(names)
	f.checkReceipts(names)
	f.checkNames(names)
	f.checkClaims()
	present := f.presentOf(names)
	f.mu.Lock()
	for _, k := range present {
		f.added[k] = true
	}
	added := make([]int, 0, len(f.added))
	for k := range f.added {
		if !f.deleted[k] && !f.withdrawn[k] {
			added = append(added, k)
		}
	}
	f.mu.Unlock()
	if f.kind.priority || f.kind.locking || len(present) == 0 {
		return
	}
	// FIFO: with one producer, an item added after the oldest one still
	// present must still be present.
	oldest := present[0]
	for _, j := range added {
		if j > oldest && !slices.Contains(present, j) {
			f.w.violate(kindFIFOOrder, "item %d was removed while the earlier item %d is still queued", j, oldest)
		}
	}
}

// live drains the queue: the producer stops, consumers take until it is
// empty, then the waiting ones are cancelled and the books are checked.
func (f *queueFamily) live() bool {
	w := f.w
	if w.clients[0].busy("") {
		return false
	}
	f.mu.Lock()
	for i, ch := range f.holds {
		close(ch) // the consumers holding an item go on
		delete(f.holds, i)
	}
	f.mu.Unlock()
	present := f.present()
	if len(present) > 0 {
		for _, c := range w.clients[1:] {
			if !c.busy("") && (!f.kind.priority || c.idx == 1) {
				f.take(c, true, "")
			}
		}
		return false
	}
	busy := false
	for _, c := range w.clients[1:] {
		if c.busy("") {
			busy = true
			if w.inFlight(c) {
				return false // still working
			}
		}
	}
	if busy {
		f.mu.Lock()
		f.draining = true
		f.mu.Unlock()
		for _, c := range w.clients[1:] {
			c.stop("take")
		}
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checkACLs()
	var missing []int
	for k := range f.added {
		if f.delivered[k] == 0 && !f.deleted[k] && !f.withdrawn[k] {
			missing = append(missing, k)
		}
	}
	if f.kind.locking {
		// The locking queue deletes an item only with its Ack: an item
		// gone from the queue was delivered, or its Ack failed after it
		// may have been applied. No allowance per failed call.
		var lost []int
		for _, k := range missing {
			if !f.uncertain[k] && !slices.Contains(present, k) {
				lost = append(lost, k)
			}
		}
		if len(lost) > 0 {
			slices.Sort(lost)
			w.violate(kindLostItems, "items %v were offered, never acknowledged, and are gone from the queue", lost)
		}
		return true
	}
	// An item lost must have been removed by a consumer call that failed
	// (the package documents that loss), each failed call losing at most
	// one.
	var lost []int
	excused := map[int]bool{}
	slices.Sort(missing)
	for _, k := range missing {
		id, ok := f.removedBy[k]
		if ok && f.failedIDs[id] && !excused[id] {
			excused[id] = true
			continue
		}
		lost = append(lost, k)
	}
	if len(lost) > 0 {
		w.violate(kindLostItems, "items %v were offered but never delivered, and no failed consumer call removed them (%d calls failed)", lost, f.failed)
	}
	return true
}

func (f *queueFamily) stuck() string {
	return fmt.Sprintf("items still queued: %v", f.present())
}

// sloppyKind is the FIFO queue with sloppy consumers (the producer is the
// real queue).
var sloppyKind = queueKind{
	name:     "FIFO queue, sloppy consumers",
	itemsDir: queueDir,
	offer:    fifoKind.offer,
	consumer: func(c *client) consumer {
		if c.idx == 0 {
			return queue.New(c.recipeConn(), queueDir, queue.WithACL(queueACL))
		}
		return fifoTaker{c, sloppyTake}
	},
}

// lockingConsumer takes an item of a LockingQueue and acknowledges it: the
// item counts as delivered once Ack succeeds. An item it could not
// acknowledge (its call was cancelled, say) it hands back, as the package
// asks: a claim left behind keeps the item from every consumer until the
// session ends.
type lockingConsumer struct{ q *queue.LockingQueue }

func (l lockingConsumer) Take(ctx context.Context) ([]byte, error) {
	it, err := l.q.Take(ctx)
	if err != nil {
		return nil, err
	}
	return it.Data(), ackOrRelease(ctx, it)
}

func (l lockingConsumer) TryTake(ctx context.Context) ([]byte, error) {
	it, err := l.q.TryTake(ctx)
	if err != nil {
		return nil, err
	}
	return it.Data(), ackOrRelease(ctx, it)
}

// Len counts the items, claimed or not.
func (l lockingConsumer) Len(ctx context.Context) (int, error) { return l.q.Len(ctx) }

// lockingEnds are the ways a locking-queue consumer's call ends once it
// has an item: "" is Ack (and Release if the Ack failed, as
// lockingConsumer does); the others exercise Release and the calls on an
// item no longer held ("release cancelled": Release under a done context); "hold" keeps the item until the Finish action (or
// the drain) and then acknowledges it, so that faults and third-party
// deletes strike while it is held. (A second Ack is not drawn: after a lost reply Ack
// takes an item that is gone as acknowledged, so it may succeed.)
var lockingEnds = []string{"", "", "release", "release after ack", "ack after release", "hold", "release cancelled"}

// drawEnd draws how a locking-queue consumer's call ends ("" for other
// queues).
func (f *queueFamily) drawEnd(t *rapid.T) string {
	if !f.kind.strict || !f.kind.locking {
		return ""
	}
	return rapid.SampledFrom(lockingEnds).Draw(t, "end")
}

// lockingCall takes an item of q (Take, or TryTake unless wait) and ends
// the call as end says. It reports whether the item was delivered (acked
// once). Release must hand the item back; a Release after the Ack and an
// Ack after the Release must fail with ErrClaimLost (the item is no longer
// ours), never succeed.
func (f *queueFamily) lockingCall(ctx context.Context, c *client, q *queue.LockingQueue, wait bool, end string) ([]byte, bool, error) {
	var (
		it  *queue.Item
		err error
	)
	f.mu.Lock()
	deletes := f.claimDeletes
	f.mu.Unlock()
	conn := began(c)
	if wait {
		it, err = q.Take(ctx)
		f.checkSession(c, conn, ctx, "Take", err)
	} else {
		it, err = q.TryTake(ctx)
		f.checkSession(c, conn, ctx, "TryTake", err)
	}
	if err != nil {
		return nil, false, err
	}
	if _, ok := itemNumber(it.Data()); !ok {
		f.w.violate(kindItemData, "p%d's Take returned an item with the data %q, which no Offer wrote", c.idx, it.Data())
	}
	f.checkClaimed(c, it, deletes)
	// notOurs checks a call on an item that is no longer ours.
	notOurs := func(op string, err error) {
		switch {
		case err == nil:
			f.w.violate(kindCallOnAnItemNotHeld, "p%d's %s succeeded on an item it no longer held", c.idx, op)
		case !errors.Is(err, queue.ErrClaimLost):
			f.checkError(c, op, err)
		}
	}
	switch end {
	case "release cancelled":
		// Release under a done context, the claim still ours: it fails
		// with the context's error (the package doc), not ErrClaimLost,
		// which would tell the caller there is nothing left to release.
		dctx, cancel := context.WithCancel(ctx)
		cancel()
		owned := f.ownsClaim(c)
		if err := f.release(dctx, c, it); errors.Is(err, queue.ErrClaimLost) && owned && f.w.sessionLive(c) {
			f.w.violate(kindClaimLostSaid, "p%d's Release under a done context returned %v while its session owned the claim", c.idx, err)
		}
		return nil, false, nil
	case "release", "ack after release":
		if err := f.release(ctx, c, it); err != nil {
			return nil, false, err
		}
		if end == "ack after release" {
			notOurs("Ack after Release", it.Ack(ctx))
		}
		return nil, false, nil
	}
	if end == "hold" {
		ch := make(chan struct{})
		f.mu.Lock()
		f.holds[c.idx] = ch
		f.held[c.idx] = it
		f.mu.Unlock()
		c.note("holds item %s", it.Data())
		select {
		case <-ch:
		case <-ctx.Done():
			f.mu.Lock()
			delete(f.holds, c.idx)
			f.mu.Unlock()
		}
	}
	acked, err := f.finishHold(ctx, c, it)
	if err != nil {
		return it.Data(), false, err
	}
	if !acked {
		return nil, false, nil // released (HeldRace)
	}
	f.noteDone(c, it)
	// The Ack deletes the item and our claim in one multi: it cannot
	// succeed on an item a third party deleted first. (Unless the third
	// party deleted the claim too: after a lost reply, Ack takes a claim
	// and an item both gone for its own multi applied, as the package
	// documents; nobody else was given the item.)
	if k, ok := itemNumber(it.Data()); ok {
		f.mu.Lock()
		gone := f.deleted[k] && !f.claimGone[k]
		f.mu.Unlock()
		if gone {
			f.w.violate(kindAckOfADeletedItem, "p%d's Ack of item %d succeeded, but a third party had deleted the item", c.idx, k)
		}
	}
	if end == "release after ack" {
		notOurs("Release after Ack", it.Release(ctx))
	}
	return it.Data(), true, nil
}

// ownsClaim reports whether c's session owns a claim.
func (f *queueFamily) ownsClaim(c *client) bool {
	for _, name := range f.w.children(queueDir + "/claims") {
		if f.w.owner(queueDir+"/claims/"+name) == c.conn.SessionID() {
			return true
		}
	}
	return false
}

// noteDone records that c acknowledged or released it.
func (f *queueFamily) noteDone(c *client, it *queue.Item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done[c.idx] = append(f.done[c.idx], it)
}

// ackOrRelease acknowledges it, or releases it if the Ack failed while
// the claim may still be ours.
func ackOrRelease(ctx context.Context, it *queue.Item) error {
	err := it.Ack(ctx)
	if err != nil && !errors.Is(err, queue.ErrClaimLost) {
		_ = it.Release(context.WithoutCancel(ctx))
	}
	return err
}

var lockingKind = queueKind{
	name:     "locking queue",
	locking:  true,
	strict:   true,
	itemsDir: queueDir + "/items",
	offer: func(c *client, ctx context.Context, data []byte, _ int32) error {
		return c.w.fam.(*queueFamily).producer(c).(lockingConsumer).q.Offer(ctx, data)
	},
	consumer: func(c *client) consumer {
		return lockingConsumer{queue.NewLocking(queueConn(c), queueDir, queue.WithACL(queueACL))}
	},
}
