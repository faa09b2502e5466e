package zkmem

import (
	"sort"
	"time"

	"github.com/google/btree"
	"github.com/zksim/zksim"
)

// session is the server's record of a client session.
type session struct {
	srv         *Server
	id          int64
	timeout     time.Duration
	owner       *Conn
	connected   bool
	dead        bool // closed or expired
	auth        []authID
	ephemerals  *btree.BTreeG[*node] // by path: deleted in this order
	dataPaths   map[string]struct{}  // paths in the server's data watch table
	childPaths  map[string]struct{}  // paths in the server's child watch table
	expiryTimer *time.Timer
	paused      bool // connected, but the server hears nothing from it
	firedEpoch  uint64
}

func pathLess(a, b *node) bool { return a.path < b.path }

// negotiateTimeout clamps a requested timeout as ZooKeeperServer does.
func (s *Server) negotiateTimeout(d time.Duration) time.Duration {
	if d < s.opts.MinSessionTimeout {
		d = s.opts.MinSessionTimeout
	}
	if d > s.opts.MaxSessionTimeout {
		d = s.opts.MaxSessionTimeout
	}
	return d
}

// openSession creates a session (a createSession transaction).
func (s *Server) openSession(timeout time.Duration, owner *Conn) *session {
	s.begin()
	sess := &session{
		srv:        s,
		id:         s.nextSession,
		timeout:    s.negotiateTimeout(timeout),
		owner:      owner,
		connected:  true,
		auth:       []authID{{scheme: "ip", id: clientIP}},
		dataPaths:  make(map[string]struct{}),
		childPaths: make(map[string]struct{}),
	}
	s.nextSession++
	s.sessions[sess.id] = sess
	return sess
}

// notify delivers a watch event to the session's client, if connected.
func (sess *session) notify(ev zksim.Event) {
	if !sess.connected {
		return
	}
	if hold := sess.owner.cfg.transport; hold != nil {
		hold(ev)
		return
	}
	sess.owner.receive(ev)
}

func (sess *session) watchSet(t *watchTable) map[string]struct{} {
	if t == sess.srv.dataWatches {
		return sess.dataPaths
	}
	return sess.childPaths
}

func (sess *session) addWatch(t *watchTable, path string, mode watchMode) {
	t.add(path, sess, mode)
	sess.watchSet(t)[path] = struct{}{}
}

func (sess *session) removeWatch(t *watchTable, path string) (watchMode, bool) {
	mode, ok := t.remove(path, sess)
	if ok {
		delete(sess.watchSet(t), path)
	}
	return mode, ok
}

// forgetWatch is called by a watch table that removed a fired watch.
func (sess *session) forgetWatch(t *watchTable, path string) {
	delete(sess.watchSet(t), path)
}

// dropWatches removes every server-side watch of the session, as the server
// does when the session's connection closes.
func (sess *session) dropWatches() {
	for _, t := range []*watchTable{sess.srv.dataWatches, sess.srv.childWatches} {
		set := sess.watchSet(t)
		paths := make([]string, 0, len(set))
		for p := range set {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			t.remove(p, sess)
		}
		clear(set)
	}
}

func (sess *session) addEphemeral(n *node) {
	if sess.ephemerals == nil {
		sess.ephemerals = btree.NewG[*node](8, pathLess)
	}
	sess.ephemerals.ReplaceOrInsert(n)
}

func (sess *session) removeEphemeral(n *node) {
	if sess.ephemerals != nil {
		sess.ephemerals.Delete(n)
	}
}

// disconnect records that the session's connection closed: its watches go,
// and it expires unless a connection is heard from within its timeout.
func (s *Server) disconnect(sess *session) {
	if !sess.connected || sess.dead {
		return
	}
	sess.connected = false
	sess.dropWatches()
	sess.expiryTimer = time.AfterFunc(sess.timeout, func() { s.expireIfSilent(sess) })
}

func (s *Server) expireIfSilent(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if (sess.connected && !sess.paused) || sess.dead || s.closed {
		return
	}
	// A paused client's connection is closed by the server at expiry; the
	// client finds out when it resumes.
	sess.connected = false
	s.endSession(sess)
}

// endSession closes or expires a session in one closeSession transaction:
// every ephemeral goes, in path order, with its watch events.
func (s *Server) endSession(sess *session) {
	if sess.dead {
		return
	}
	sess.dead = true
	if sess.expiryTimer != nil {
		sess.expiryTimer.Stop()
		sess.expiryTimer = nil
	}
	t := s.begin()
	if sess.ephemerals != nil {
		var doomed []*node
		sess.ephemerals.Ascend(func(n *node) bool {
			doomed = append(doomed, n)
			return true
		})
		sess.ephemerals = nil
		for _, n := range doomed {
			s.deleteNode(t, n)
		}
	}
	// The session's own watches fire too (a closing client hears of its
	// ephemerals' deletion before the close completes); then they go.
	s.commit(t)
	sess.dropWatches()
	delete(s.sessions, sess.id)
}

// ExpireSession makes the server expire the session with the given id now,
// as if its client had gone silent for the whole timeout: its ephemerals are
// deleted in one transaction and other sessions' watches fire. A connected
// client learns at once (StateDisconnected, then StateExpired); a paused one
// when it resumes; a disconnected one when it reconnects. It reports whether the session
// existed.
func (s *Server) ExpireSession(id int64) bool {
	s.mu.Lock()
	sess, ok := s.sessions[id]
	if !ok || s.closed {
		s.mu.Unlock()
		return false
	}
	// A connected client hears at once; a paused one when it resumes, a
	// disconnected one when it reconnects.
	tell := sess.connected && !sess.paused
	sess.connected = false
	s.endSession(sess)
	s.mu.Unlock()
	if tell {
		sess.owner.learnExpired(true)
	}
	return true
}

// SessionIDs returns the ids of the live sessions, in order.
func (s *Server) SessionIDs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// SetNextSequence makes the next sequential child created under path get
// sequence number next, as if that many child creates had happened: it sets
// the parent's internal child-create counter, so Stat.Cversion changes to
// match. It exists to test code against the int32 wrap of sequence numbers
// (after 2147483647 comes -2147483648) without two billion creates.
func (s *Server) SetNextSequence(path string, next int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.tree.get(path)
	if n == nil {
		return zksim.ErrNoNode
	}
	n.cversion = next
	return nil
}
