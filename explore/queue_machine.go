package explore

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/queue"
)

// The queue machine: client 0 produces, the others consume (Take, and
// TryTake as the action "Poll"), and faults strike.
//
// Its invariants: queue_invariants.go; its calls (Offer, Take, Peek,
// Len): queue_calls.go; the locking queue's Ack and Release:
// queue_locking.go.
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
	// parts: what nameParts found of each name (machine goroutine only).
	parts map[string]nameParts
	// seenNames is the listing trackRemovals saw last, seenAll whether it
	// knew the number of every item in it (machine goroutine only).
	seenNames []string
	seenAll   bool

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
	// lostReplies: the items whose Ack's reply HeldRace had lost, with
	// claimDeletes as the race began.
	lostReplies map[*queue.Item]int
	// racer is the consumer whose Ack or Release HeldRace let go on, until
	// that call returns (nil when none): no other consumer call begins
	// meanwhile (take), even once the Ack has outlasted HeldRace's wait
	// (an ensemble without a quorum, say), so that the race's outcome
	// stays its alone. (The package's known limit: an Ack that lost its
	// reply after a third party deleted its claim, and found claim and
	// item gone because another consumer claimed and acknowledged the
	// item meanwhile, reports it delivered too.)
	racer *client
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
		held: map[int]*queue.Item{}, holdThen: map[int]string{}, lostClaims: map[*queue.Item]bool{}, lostReplies: map[*queue.Item]int{}, cancelAts: map[int]*cancelPoint{}, expireAts: map[int]*expirePoint{}, claimGone: map[int]bool{}, plain: map[int]bool{}, itemNums: map[string]int{}, mayRefuse: map[int]bool{}}
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
