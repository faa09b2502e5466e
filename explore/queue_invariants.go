package explore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/zkmem"
)

// The queue's invariants, checked after every step (queueFamily.check)
// and as each call returns:
//   - no item is delivered twice (checked as each item is delivered), nor
//     queued twice (two nodes of one Offer's item at once: the receipt
//     makes an Offer add its item once, even after lost replies);
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

func (f *queueFamily) check() {
	names := f.w.children(f.kind.itemsDir) // one listing for the checks of this step
	f.noteEmpty(names)
	f.trackRemovals(names)
	f.checkReceipts(names)
	f.checkNames(names)
	f.checkClaims()
	present := f.presentOf(names)
	for i := 1; i < len(present); i++ {
		if present[i] == present[i-1] && (i == 1 || present[i] != present[i-2]) {
			f.w.violate(kindItemQueuedTwice, "item %d is queued in more than one node", present[i])
		}
	}
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
		m, receipt := f.nameParts(name)
		if receipt {
			continue
		}
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

// nameParts matches name against receiptName, then itemName (the
// submatches, nil if none), remembering the answer: the invariants look at
// every name of the items directory after every step, and a name keeps its
// answer. Called from the machine's goroutine only.
func (f *queueFamily) nameParts(name string) (item []string, receipt bool) {
	if p, ok := f.parts[name]; ok {
		return p.item, p.receipt
	}
	if f.parts == nil {
		f.parts = map[string]nameParts{}
	}
	p := nameParts{receipt: receiptName.MatchString(name)}
	if !p.receipt {
		p.item = itemName.FindStringSubmatch(name)
	}
	f.parts[name] = p
	return p.item, p.receipt
}

// nameParts is what nameParts found of a name.
type nameParts struct {
	item    []string
	receipt bool
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
	if f.seenAll && slices.Equal(names, f.seenNames) {
		return // nothing gone, and every item's number known
	}
	now := map[string]bool{}
	all := true
	for _, name := range names {
		p := f.kind.itemsDir + "/" + name
		now[p] = true
		if _, ok := f.names[p]; !ok {
			if k, ok := f.itemAt(name); ok {
				f.names[p] = k
			} else if strings.Contains(name, "qn-") {
				all = false // an item whose number is still to learn
			}
		}
	}
	f.seenNames, f.seenAll = slices.Clone(names), all
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
