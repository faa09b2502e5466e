package zkmem

import (
	"fmt"
	"strings"
	"time"

	"github.com/zksim/zksim"
)

// A RemoteSession is the server side of a session whose client is outside
// the process, reached through a transport such as package zkwire: the
// transport decodes requests, runs them through Do and sends what Do hands
// back. Unlike a Conn it keeps no client-side state: watches live on the
// server only, and a reconnecting client re-registers its own with the
// setWatches request.
//
// It is the seam the wire server binds to until zkmem's transport-neutral
// session API replaces it.
type RemoteSession struct {
	conn *Conn // owns the server's session record; its client side is unused
}

// OpenRemote opens a session for a remote client. timeout is the timeout
// the client asked for (negotiated as Connect does). events receives every
// watch event for the session, in the server's order, with the server's
// lock held: it must only queue the event, never call the server. It fails
// with ErrClosing once the server is closed.
func (s *Server) OpenRemote(timeout time.Duration, events func(zksim.Event)) (*RemoteSession, error) {
	c, err := s.Connect(WithSessionTimeout(timeout), WithEventTransport(events))
	if err != nil {
		return nil, err
	}
	return &RemoteSession{conn: c}, nil
}

// NegotiateTimeout returns the timeout the server grants a client asking
// for d: d clamped to [MinSessionTimeout, MaxSessionTimeout].
func (s *Server) NegotiateTimeout(d time.Duration) time.Duration { return s.negotiateTimeout(d) }

// ID returns the session id.
func (r *RemoteSession) ID() int64 { return r.conn.sess.id }

// Timeout returns the negotiated session timeout.
func (r *RemoteSession) Timeout() time.Duration { return r.conn.sess.timeout }

// Attach records that a connection to the session is up again (the
// client reconnected within the timeout): its expiry clock stops. It fails
// with ErrSessionExpired if the session is gone.
func (r *RemoteSession) Attach() error {
	s := r.conn.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := r.conn.sess
	if sess.dead || s.closed {
		return zksim.ErrSessionExpired
	}
	if sess.expiryTimer != nil {
		sess.expiryTimer.Stop()
		sess.expiryTimer = nil
	}
	sess.paused = false
	sess.connected = true
	return nil
}

// Detach records that the session's connection closed: the server drops its
// watches and expires it unless a connection attaches within its timeout.
func (r *RemoteSession) Detach() {
	s := r.conn.srv
	s.mu.Lock()
	s.disconnect(r.conn.sess)
	s.mu.Unlock()
}

// Alive reports whether the session is neither closed nor expired.
func (r *RemoteSession) Alive() bool {
	s := r.conn.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	return !r.conn.sess.dead && !s.closed
}

// Expire makes the server expire the session now (Server.ExpireSession).
func (r *RemoteSession) Expire() bool { return r.conn.srv.ExpireSession(r.conn.sess.id) }

// The requests Do serves beyond the Op constants of faults.go.
const (
	OpCheck        = "check"
	OpMultiRead    = "multiRead"
	OpSetWatches   = "setWatches"
	OpCheckWatches = "checkWatches"
	OpWhoAmI       = "whoAmI"
	OpPing         = "ping"
	OpCloseSession = "closeSession"
	OpReconfig     = "reconfig"
	OpError        = "error" // a request the server could not decode: a write's error txn
	OpDeleteCont   = "deleteContainer"
)

// RemoteRequest is one request for Do. Op says which fields count.
type RemoteRequest struct {
	Op      string
	Path    string
	Data    []byte
	Version int32
	ACL     []zksim.ACL
	Mode    zksim.CreateMode
	TTL     int64 // -1 for a create without TTL
	Watch   bool
	Ops     []zksim.Op // multi
	Reads   []RemoteRead
	Scheme  string // addAuth
	Auth    []byte
	Kind    int32 // addWatch mode; checkWatches/removeWatches watcher type
	RelZxid int64 // setWatches
	DataW   []string
	ExistW  []string
	ChildW  []string
	PersW   []string
	RecW    []string
	Kinds   []int32 // the transport's own tag per multi op, unused by Do
}

// RemoteRead is one read of a multiRead.
type RemoteRead struct {
	Children bool // getChildren, else getData
	Path     string
}

// RemoteResult is the result of one op of a multi or multiRead.
type RemoteResult struct {
	Err      error
	Path     string
	Stat     zksim.Stat
	Data     []byte
	Children []string
}

// RemoteIdentity is one identity of a session, as whoAmI reports it.
type RemoteIdentity struct {
	Scheme string
	User   string
}

// RemoteResponse is what Do hands back: the zxid for the reply header, the
// error, and the fields the op fills.
type RemoteResponse struct {
	Zxid       int64
	Err        error
	Path       string
	Stat       zksim.Stat
	Data       []byte
	Children   []string
	ACL        []zksim.ACL
	Results    []RemoteResult
	Count      int32
	Identities []RemoteIdentity
	// AuthFailed: an addAuth the server refused; it then closes the
	// connection.
	AuthFailed bool
}

// Do runs one request and calls reply with its response while still holding
// the server's lock, so that the transport queues the reply after every
// watch event the server produced before it and before any it produces
// later. reply must not block or call the server. A session that is gone
// gets ErrSessionExpired.
func (r *RemoteSession) Do(req *RemoteRequest, reply func(*RemoteResponse)) {
	s := r.conn.srv
	sess := r.conn.sess
	s.mu.Lock()
	defer s.mu.Unlock()
	var resp RemoteResponse
	if sess.dead || s.closed {
		resp.Err = zksim.ErrSessionExpired
		resp.Zxid = s.zxid
		reply(&resp)
		return
	}
	s.doRemote(sess, req, &resp)
	resp.Zxid = s.zxid
	reply(&resp)
}

func (s *Server) doRemote(sess *session, req *RemoteRequest, resp *RemoteResponse) {
	switch req.Op {
	case OpPing, OpSync:
	case OpCreate:
		t := s.begin()
		path, n, err := s.create(t, sess, req.Path, copyBytes(req.Data), req.Mode, req.ACL, req.TTL)
		s.commit(t)
		resp.Err = err
		if err == nil {
			resp.Path = path
			n.fillStat(&resp.Stat)
		}
	case OpDelete:
		t := s.begin()
		resp.Err = s.delete(t, sess, req.Path, req.Version)
		s.commit(t)
	case OpDeleteCont:
		t := s.begin()
		resp.Err = s.deleteContainer(t, req.Path)
		s.commit(t)
	case OpSetData:
		t := s.begin()
		n, err := s.setData(t, sess, req.Path, copyBytes(req.Data), req.Version)
		s.commit(t)
		if resp.Err = err; err == nil {
			n.fillStat(&resp.Stat)
		}
	case OpCheck:
		s.begin()
		resp.Err = s.check(sess, req.Path, req.Version)
	case OpSetACL:
		t := s.begin()
		n, err := s.setACL(t, sess, req.Path, req.ACL, req.Version)
		if resp.Err = err; err == nil {
			n.fillStat(&resp.Stat)
		}
	case OpReconfig:
		s.begin()
		resp.Err = zksim.ErrReconfigDisabled
	case OpError:
		s.begin()
		resp.Err = zksim.ErrMarshallingError
	case OpExists:
		if strings.IndexByte(req.Path, 0) >= 0 {
			resp.Err = zksim.ErrBadArguments
			return
		}
		n := s.tree.get(req.Path)
		if req.Watch {
			sess.addWatch(s.dataWatches, req.Path, modeStandard)
		}
		if n == nil {
			resp.Err = zksim.ErrNoNode
			return
		}
		n.fillStat(&resp.Stat)
	case OpGetData:
		n, err := s.getData(sess, req.Path)
		if resp.Err = err; err == nil {
			resp.Data = n.data
			n.fillStat(&resp.Stat)
			if req.Watch {
				sess.addWatch(s.dataWatches, req.Path, modeStandard)
			}
		}
	case OpGetChildren:
		n, err := s.getData(sess, req.Path)
		if resp.Err = err; err == nil {
			resp.Children = n.childNames()
			n.fillStat(&resp.Stat)
			if req.Watch {
				sess.addWatch(s.childWatches, req.Path, modeStandard)
			}
		}
	case OpGetACL:
		acl, st, err := s.getACL(sess, req.Path)
		if resp.Err = err; err == nil {
			resp.ACL, resp.Stat = acl, *st
		}
	case OpGetAllChildrenNumber:
		n, err := s.getData(sess, req.Path)
		if resp.Err = err; err == nil {
			resp.Count = countDescendants(n)
		}
	case OpGetEphemerals:
		prefix := req.Path
		if strings.TrimSpace(prefix) == "/" || strings.TrimSpace(prefix) == "" {
			prefix = ""
		}
		resp.Children = []string{}
		if sess.ephemerals != nil {
			sess.ephemerals.Ascend(func(n *node) bool {
				if strings.HasPrefix(n.path, prefix) {
					resp.Children = append(resp.Children, n.path)
				}
				return true
			})
		}
	case OpMulti:
		resp.Results = s.remoteMulti(sess, req.Ops)
	case OpMultiRead:
		resp.Results = make([]RemoteResult, len(req.Reads))
		for i, rd := range req.Reads {
			n, err := s.getData(sess, rd.Path)
			res := &resp.Results[i]
			if res.Err = err; err != nil {
				continue
			}
			if rd.Children {
				res.Children = n.childNames()
			} else {
				res.Data = n.data
				n.fillStat(&res.Stat)
			}
		}
	case OpAddAuth:
		id, ok := authenticate(req.Scheme, req.Auth)
		if !ok {
			resp.Err, resp.AuthFailed = zksim.ErrAuthFailed, true
			return
		}
		for _, a := range sess.auth {
			if a == id {
				return
			}
		}
		sess.auth = append(sess.auth, id)
	case OpWhoAmI:
		for _, a := range sess.auth {
			user := a.id
			if a.scheme == "digest" {
				user, _, _ = strings.Cut(a.id, ":")
			}
			resp.Identities = append(resp.Identities, RemoteIdentity{Scheme: a.scheme, User: user})
		}
	case OpSetWatches:
		s.setWatches(sess, req.RelZxid, req.DataW, req.ExistW, req.ChildW, req.PersW, req.RecW)
	case OpAddWatch:
		switch req.Kind {
		case 0: // PERSISTENT
			sess.addWatch(s.dataWatches, req.Path, modePersistent)
			sess.addWatch(s.childWatches, req.Path, modePersistent)
		case 1: // PERSISTENT_RECURSIVE: the data table only
			sess.addWatch(s.dataWatches, req.Path, modeRecursive)
		default:
			resp.Err = zksim.ErrMarshallingError
		}
	case OpCheckWatches, OpRemoveWatches:
		found := false
		look := func(t *watchTable) {
			if req.Op == OpCheckWatches {
				if _, ok := t.has(req.Path, sess); ok {
					found = true
				}
			} else if _, ok := sess.removeWatch(t, req.Path); ok {
				found = true
			}
		}
		switch req.Kind {
		case 1: // Children
			look(s.childWatches)
		case 2: // Data
			look(s.dataWatches)
		case 3: // Any
			look(s.childWatches)
			look(s.dataWatches)
		}
		if !found {
			resp.Err = zksim.ErrNoWatcher
		}
	case OpCloseSession:
		sess.connected = false
		s.endSession(sess)
		delete(s.conns, sess.owner)
	default:
		resp.Err = fmt.Errorf("%w: op %q", zksim.ErrUnimplemented, req.Op)
	}
}

// deleteContainer applies a deleteContainer request
// (PrepRequestProcessor): only an empty container or TTL node goes.
func (s *Server) deleteContainer(t *txn, path string) error {
	n := s.tree.get(path)
	if n == nil {
		return zksim.ErrNoNode
	}
	if n.kind != kindContainer && n.kind != kindTTL {
		return fmt.Errorf("%w: %q is not a container", zksim.ErrBadArguments, path)
	}
	if n.numChildren() > 0 {
		return zksim.ErrNotEmpty
	}
	s.deleteNode(t, n)
	return nil
}

// remoteMulti is Server.multi keeping each create's Stat, which a create2
// in a multi reports.
func (s *Server) remoteMulti(sess *session, ops []zksim.Op) []RemoteResult {
	t := s.begin()
	t.multi = true
	results := make([]RemoteResult, len(ops))
	for i, op := range ops {
		var err error
		res := &results[i]
		switch o := op.(type) {
		case *zksim.CreateOp:
			ttl := int64(-1)
			if o.Mode.IsTTL() {
				ttl = o.TTL.Milliseconds()
			}
			var n *node
			if res.Path, n, err = s.create(t, sess, o.Path, copyBytes(o.Data), o.Mode, o.ACL, ttl); err == nil {
				n.fillStat(&res.Stat)
			}
		case *zksim.DeleteOp:
			err = s.delete(t, sess, o.Path, o.Version)
		case *zksim.SetOp:
			var n *node
			if n, err = s.setData(t, sess, o.Path, copyBytes(o.Data), o.Version); err == nil {
				n.fillStat(&res.Stat)
			}
		case *zksim.CheckOp:
			err = s.check(sess, o.Path, o.Version)
		default:
			err = fmt.Errorf("%w: unknown multi op %T", zksim.ErrBadArguments, op)
		}
		if err != nil {
			t.rollback()
			for j := range results {
				switch {
				case j < i:
					results[j] = RemoteResult{}
				case j == i:
					results[j] = RemoteResult{Err: err}
				default:
					results[j] = RemoteResult{Err: zksim.ErrRuntimeInconsistency}
				}
			}
			return results
		}
	}
	s.commit(t)
	return results
}

// ServerStats are the figures the four-letter words srvr, stat and mntr
// report.
type ServerStats struct {
	Nodes      int   // znodes, the root and system nodes included
	Ephemerals int   // ephemeral znodes
	Watches    int   // server-side watches, by path and session
	WatchPaths int   // paths watched
	DataSize   int64 // bytes of paths and data, as ApproximateDataSize
	Sessions   int   // live sessions
	LastZxid   int64
}

// Stats returns the server's figures for the four-letter words.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStats{Nodes: len(s.tree.nodes) + len(s.tree.overflow), Sessions: len(s.sessions), LastZxid: s.zxid}
	for _, n := range s.tree.nodes {
		st.DataSize += int64(len(n.path) + len(n.data))
	}
	for _, n := range s.tree.overflow {
		st.DataSize += int64(len(n.path) + len(n.data))
	}
	for _, sess := range s.sessions {
		if sess.ephemerals != nil {
			st.Ephemerals += sess.ephemerals.Len()
		}
	}
	for _, t := range []*watchTable{s.dataWatches, s.childWatches} {
		st.WatchPaths += len(t.paths)
		for _, e := range t.paths {
			st.Watches += len(e)
		}
	}
	return st
}
