package zkmem

import (
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/google/btree"
	"github.com/zksim/zksim"
)

// Server is an in-memory ZooKeeper server. It is safe for concurrent use.
// Create one with NewServer, open sessions with Connect, and Close it when
// done: Close also closes every Conn it handed out.
type Server struct {
	opts Options
	// seqStart, if set, gives a new node's first sequence number
	// (SetSequenceStart).
	seqStart func(path string) int32
	// secret keys the session passwords (SetSessionSecret).
	secret sessionSecret

	mu           sync.Mutex
	closed       bool
	zxid         int64 // last zxid handed out
	tree         *tree
	acls         aclInterner
	sessions     map[int64]*Session
	nextSession  int64
	dataWatches  *watchTable
	childWatches *watchTable
	epoch        uint64             // watch-trigger epoch, see watchTable.trigger
	fired        []*Session         // scratch list of sessions to notify
	txnBuf       txn                // the transaction in the making; one at a time
	conns        map[*Conn]struct{} // every Conn not yet closed
	reapable     *btree.BTreeG[*node]
	reapTimer    *time.Timer
	// ens is the ensemble whose committed state this server holds, nil for
	// a standalone server (ensemble.go).
	ens *Ensemble
	// epochs, in an ensemble member's view, is the ensemble's epoch
	// counter (its core's epoch), which every member's view shares: a
	// session that moves between members must never meet an epoch it was
	// fired in already, or it misses the event (nil: epoch).
	epochs *uint64
}

// firstSessionID is the id of the first session a server hands out: server
// id 1 in the top byte, as a ZooKeeper server with myid 1 would.
const firstSessionID = int64(1) << 56

// NewServer returns a running server with a fresh tree holding only the
// /zookeeper system nodes. It panics if opts.Validate reports an error:
// check options that come from a user with Validate first.
func NewServer(opts Options) *Server {
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	s := &Server{
		opts:         opts.withDefaults(),
		acls:         aclInterner{byKey: make(map[string]*aclList)},
		sessions:     make(map[int64]*Session),
		conns:        make(map[*Conn]struct{}),
		nextSession:  firstSessionID,
		dataWatches:  newWatchTable(),
		childWatches: newWatchTable(),
		reapable:     btree.NewG[*node](8, func(a, b *node) bool { return a.path < b.path }),
		secret:       newSessionSecret(),
	}
	read := s.acls.intern(zksim.ReadACL())
	s.tree = newTree(s.acls.intern(zksim.OpenACL()), read)
	s.tree.sorted = s.opts.SortedChildren
	return s
}

// Options returns the server's options with defaults filled in.
func (s *Server) Options() Options {
	o := s.opts
	o.SASLUsers = maps.Clone(o.SASLUsers)
	return o
}

// LastZxid returns the zxid of the last transaction the server applied.
func (s *Server) LastZxid() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.zxid
}

// Close shuts the server down. Every Conn it handed out is closed as by
// Conn.Close, except that nothing is deleted: pending watches receive
// EventNotWatching with ErrClosing and later calls fail with ErrClosing.
// Timers stop. Close is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.reapTimer != nil {
		s.reapTimer.Stop()
	}
	for _, sess := range s.sessions {
		if sess.expiryTimer != nil {
			sess.expiryTimer.Stop()
		}
		if sess.delayTimer != nil {
			sess.delayTimer.Stop()
		}
		sess.dropHeld()
		if _, inProcess := sess.sink.(*connSink); !inProcess && sess.connected {
			sess.sink.Closed(zksim.ErrClosing)
		}
	}
	owners := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		owners = append(owners, c)
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i].sess.id < owners[j].sess.id })
	s.mu.Unlock()
	for _, c := range owners {
		c.finish(zksim.StateClosed, zksim.ErrClosing)
	}
}

// txn is one transaction in the making: its zxid and time, the watch events
// it will fire once it commits, and (inside a multi) how to undo it.
type txn struct {
	zxid   int64
	now    int64 // see clock
	hasNow bool
	events []pendingEvent
	undo   []func()
	multi  bool
	// fx lists, in order, the nodes the transaction inserted into and
	// removed from the tree; recorded only for an ensemble (ensemble.go).
	fx []effect
	// acled lists the nodes whose ACL it set (setACL fires no event);
	// recorded only for an ensemble.
	acled []*node
	// eph lists, in order, the adds to and removals from the sessions'
	// sets of ephemerals; recorded only while a member diverges.
	eph []ephEffect
}

type pendingEvent struct {
	typ  zksim.EventType
	path string
	acl  *aclList // who may hear of it
}

// begin starts a transaction: every write, failed or not, consumes a zxid.
// Transactions are applied one at a time under s.mu, so one txn value is
// reused.
func (s *Server) begin() *txn {
	s.zxid++
	t := &s.txnBuf
	clear(t.events)
	clear(t.eph)
	*t = txn{zxid: s.zxid, events: t.events[:0], fx: t.fx[:0], acled: t.acled[:0], eph: t.eph[:0]}
	return t
}

// clock returns the transaction's time in milliseconds since the epoch, the
// same for every op of a multi. The clock is read on first use only:
// deletes and failed writes never need it, and time.Now was ~5% of a write.
func (t *txn) clock() int64 {
	if !t.hasNow {
		t.now, t.hasNow = time.Now().UnixMilli(), true
	}
	return t.now
}

// fire records a watch event. As on a server with the CVE-2024-23944 fix
// (3.8.4+, and Debian's 3.8.0), an event reaches only the sessions with READ
// on acl; a watch that fires for a session without it is consumed silently.
func (t *txn) fire(typ zksim.EventType, path string, acl *aclList) {
	t.events = append(t.events, pendingEvent{typ, path, acl})
}

// onUndo records how to undo a step of a multi. Only a multi rolls back, so
// callers test t.multi before building the closure: a closure that captures
// its variables is a heap allocation, which a plain write need not pay.
func (t *txn) onUndo(f func()) {
	if t.multi {
		t.undo = append(t.undo, f)
	}
}

func (t *txn) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = nil
	t.events = nil
	t.fx = t.fx[:0]
	clear(t.eph)
	t.eph = t.eph[:0]
}

// commit fires the transaction's watch events in the order its operations
// produced them.
func (s *Server) commit(t *txn) {
	if s.ens != nil {
		s.ens.seal(t) // the members fire the events as they apply it
		return
	}
	for _, e := range t.events {
		s.trigger(e.typ, e.path, e.acl)
	}
}

// trigger fires the watches an event touches, as DataTree does: data
// watches for NodeCreated/NodeDataChanged/NodeDeleted, child watches for
// NodeChildrenChanged, and for NodeDeleted the node's child watches too,
// each session hearing once.
func (s *Server) trigger(typ zksim.EventType, path string, acl *aclList) {
	counter := &s.epoch
	if s.epochs != nil {
		counter = s.epochs
	}
	*counter++
	epoch := *counter
	fired := s.fired[:0]
	switch typ {
	case zksim.EventNodeChildrenChanged:
		fired = s.childWatches.trigger(path, typ, epoch, fired)
	case zksim.EventNodeDeleted:
		fired = s.dataWatches.trigger(path, typ, epoch, fired)
		fired = s.childWatches.trigger(path, typ, epoch, fired)
	default:
		fired = s.dataWatches.trigger(path, typ, epoch, fired)
	}
	if len(fired) > 1 {
		sortSessions(fired)
	}
	ev := zksim.Event{Type: typ, State: zksim.StateConnected, Path: path}
	for _, sess := range fired {
		if checkACL(acl, zksim.PermRead, sess.auth) == nil {
			sess.notify(ev, s.zxid)
		}
	}
	clear(fired)
	s.fired = fired[:0]
}
