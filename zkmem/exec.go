package zkmem

import (
	"strings"
	"time"

	"github.com/zksim/zksim"
)

// Do executes one request of the session: the one path every request takes,
// from the in-process Conn and from a wire transport alike. In order:
//
//  1. the fault plane decides the request's fault (see Control): a fault
//     armed for it, else the session's fault hook;
//  2. DropRequest: the request is not applied; the connection closes;
//  3. a session that is not attached (detached, expired, closed, or a
//     closed server) gets zksim.ErrConnectionLoss;
//  4. a request over Options.MaxRequestBytes closes the connection unapplied;
//  5. the request is applied, firing watch events in the server's order;
//  6. LoseReply: the connection closes and no reply goes out; otherwise the
//     reply goes to the Sink (Sink.Reply), under the server's lock, and Do
//     returns it. While a Control.Delay holds the session, the reply waits
//     in order with the session's notifications and Do blocks until it goes.
//
// Whenever the connection closes (Response.Closed) the session is detached
// as by Detach. Do does not keep req.
func (sess *Session) Do(req *Request) Response {
	var resp Response
	sess.do(req, &resp)
	return resp
}

// onMember reports whether the session's requests go through its
// ensemble member (ensDo): an ensemble's session, but a committed view's
// (WithCommittedView).
func (sess *Session) onMember() bool { return sess.srv.ens != nil && !sess.committed }

// do is Do filling in *resp, which the in-process Conn keeps on its stack.
func (sess *Session) do(req *Request, resp *Response) {
	s := sess.srv
	if sess.onMember() {
		sess.ensDo(req, resp)
		return
	}
	s.mu.Lock()
	fault := NoFault
	if len(sess.armed) > 0 || sess.hook != nil {
		fault = sess.decide(req)
	}
	if fault == DropRequest {
		s.disconnect(sess)
		s.mu.Unlock()
		*resp = Response{Err: zksim.ErrConnectionLoss, Fault: DropRequest, Closed: true}
		return
	}
	if s.closed || !sess.connected || sess.dead {
		s.mu.Unlock()
		resp.Err = zksim.ErrConnectionLoss
		return
	}
	if sess.heartbeat && !sess.paused {
		sess.lastHeard = time.Now()
	}
	if req.Size > 0 && requestHeaderSize+req.Size > s.opts.MaxRequestBytes {
		s.disconnect(sess)
		s.mu.Unlock()
		*resp = Response{Err: zksim.ErrConnectionLoss, Closed: true}
		return
	}
	sess.apply(req, resp)
	if resp.unanswered {
		s.disconnect(sess)
		s.mu.Unlock()
		*resp = Response{Err: zksim.ErrConnectionLoss, Closed: true}
		return
	}
	if fault == LoseReply {
		s.disconnect(sess)
		s.mu.Unlock()
		*resp = Response{Err: zksim.ErrConnectionLoss, Fault: LoseReply, Closed: true}
		return
	}
	resp.Zxid = s.zxid
	if sess.delayed() {
		*resp = sess.holdReply(req, *resp)
		return
	}
	sess.sendReply(req, resp)
	if resp.Closed {
		s.disconnect(sess)
	}
	s.mu.Unlock()
}

// sendReply hands a reply to the sink. Called with srv.mu held. The
// in-process Conn's sink is called directly, so that the request and the
// response stay on the caller's stack.
func (sess *Session) sendReply(req *Request, resp *Response) {
	if cs, ok := sess.sink.(*connSink); ok {
		cs.reply(req, resp)
		return
	}
	r, p := *req, *resp
	sess.sink.Reply(&r, &p)
}

// apply applies req to the server. Called with srv.mu held.
func (sess *Session) apply(req *Request, resp *Response) {
	s := sess.srv
	v := sess.view // reads and watches: the session's member's state (s itself standalone)
	switch req.Op {
	case OpCreate:
		ttl := int64(-1)
		if req.TTL >= 0 {
			ttl = req.TTL.Milliseconds()
		}
		t := s.begin()
		var n *node
		resp.Path, n, resp.Err = s.create(t, sess, req.Path, copyBytes(req.Data), req.Mode, req.ACL, ttl)
		if _, inProcess := sess.sink.(*connSink); !inProcess && resp.Err == nil {
			resp.Stat = n.stat() // a wire client's create2 returns it
		}
		s.commit(t)
	case OpDelete:
		t := s.begin()
		resp.Err = s.delete(t, sess, req.Path, req.Version)
		s.commit(t)
	case OpSetData:
		t := s.begin()
		n, err := s.setData(t, sess, req.Path, copyBytes(req.Data), req.Version)
		if err == nil {
			resp.Stat = n.stat()
		}
		resp.Err = err
		s.commit(t)
	case OpExists:
		n := v.tree.get(req.Path)
		if req.Watch {
			// exists watches live in the data table, present node or not.
			sess.addWatch(v.dataWatches, req.Path, modeStandard)
		}
		if n != nil {
			resp.Stat = n.stat()
		}
	case OpGetData:
		n, err := v.getData(sess, req.Path)
		if err == nil {
			resp.Data, resp.Stat = copyBytes(n.data), n.stat()
			if req.Watch {
				sess.addWatch(v.dataWatches, req.Path, modeStandard)
			}
		}
		resp.Err = err
	case OpGetChildren:
		n, err := v.getData(sess, req.Path) // same checks: NoNode, then READ
		if err == nil {
			resp.Children, resp.Stat = n.childNames(v.tree.sorted), n.stat()
			if req.Watch {
				sess.addWatch(v.childWatches, req.Path, modeStandard)
			}
		}
		resp.Err = err
	case OpMulti:
		resp.Results, resp.Err = s.multi(sess, req.Ops)
	case OpCheck:
		resp.Err = v.check(sess, req.Path, req.Version)
	case OpSync:
		resp.Path = req.Path
	case OpGetACL:
		resp.ACL, resp.Stat, resp.Err = v.getACL(sess, req.Path)
	case OpSetACL:
		t := s.begin()
		n, err := s.setACL(t, sess, req.Path, req.ACL, req.Version)
		if err == nil {
			resp.Stat = n.stat()
			if s.ens != nil {
				t.acled = append(t.acled, n)
			}
		}
		resp.Err = err
		s.commit(t) // no events; an ensemble replicates the transaction
	case OpReconfig:
		// PrepRequestProcessor: disabled first; enabled, a standalone
		// server is not a leader and cannot reconfigure, and an ensemble's
		// leader checks the request (reconfig.go). The error is a
		// transaction of its own.
		t := s.begin()
		resp.Err = zksim.ErrReconfigDisabled
		if s.opts.ReconfigEnabled {
			resp.Err = s.reconfig(sess, req.Reconfig)
		}
		s.commit(t)
	case OpAddAuth:
		id, ok := authenticate(req.AuthScheme, req.Auth, sess.addr)
		if !ok {
			// As a real server does, the connection goes after the reply;
			// the session survives.
			resp.Err, resp.Closed = zksim.ErrAuthFailed, true
			return
		}
		if s.superDigest(id) {
			sess.addAuth(authID{scheme: "super"})
		}
		sess.addAuth(id)
	case OpAddWatch:
		var wm watchMode
		switch req.AddWatchMode {
		case zksim.WatchPersistent:
			wm = modePersistent
		case zksim.WatchPersistentRecursive:
			wm = modeRecursive
		default:
			// WatcherMode.fromZooDef throws; FinalRequestProcessor answers
			// any such exception MarshallingError.
			resp.Err = zksim.ErrMarshallingError
			return
		}
		// DataTree.addWatch: a recursive watch lives in the data table only.
		sess.addWatch(v.dataWatches, req.Path, wm)
		if wm != modeRecursive {
			sess.addWatch(v.childWatches, req.Path, wm)
		}
	case OpRemoveWatches, OpCheckWatches:
		switch {
		case !sess.knownWatcherKind(req.WatcherKind):
			resp.Err = zksim.ErrMarshallingError
		case !sess.removeWatches(req.Path, req.WatcherKind, req.Op == OpRemoveWatches):
			resp.Err = zksim.ErrNoWatcher
		}
	case OpGetEphemerals:
		// FinalRequestProcessor: a prefix that trims to "" or "/" lists
		// all; the order is that of a clone of the session's set.
		prefix := req.Path
		if t := javaTrim(prefix); t == "" || t == "/" {
			prefix = ""
		}
		resp.Children = sess.ephemeralsAt().paths(prefix) // the member's applied state
	case OpGetAllChildrenNumber:
		n, err := v.getData(sess, req.Path) // NoNode, then READ
		if err == nil {
			resp.Count = countDescendants(n)
		}
		resp.Err = err
	case OpSetWatches:
		if w := req.SetWatches; w != nil {
			v.setWatches(sess, w.RelativeZxid, w.Data, w.Exist, w.Child, w.Persistent, w.Recursive)
		}
	case OpPing:
		if !sess.heartbeat {
			sess.heartbeat = true
			sess.lastHeard = time.Now()
			sess.startExpiry(sess.timeout)
		}
	case OpWhoAmI:
		// The connection's identities in the order of its hash set, as
		// the server lists them.
		resp.Identities = make([]Identity, len(sess.auth))
		for i, a := range authIterationOrder(sess.auth) {
			id := a.id
			if a.scheme == "digest" {
				// DigestAuthenticationProvider.getUserName: the user only.
				id, _, _ = strings.Cut(id, ":")
			}
			resp.Identities[i] = Identity{Scheme: a.scheme, ID: id}
		}
	case OpCloseSession:
		s.endSession(sess)
	case OpSASL:
		s.sasl(sess, req, resp)
	default:
		resp.Err = zksim.ErrUnimplemented
	}
}

// removeWatches removes (or with remove false, only looks for) the
// session's server-side watches of kind on path, and reports whether there
// were any. A one-shot watch is removed by the kind of its table (Children:
// the child table; Data: the data table; Any: both); a persistent watch,
// which lives in both tables, by Children, Data, Any or Persistent; a
// recursive one by Any or PersistentRecursive.
func (sess *Session) removeWatches(path string, kind zksim.WatcherKind, remove bool) bool {
	s := sess.view
	if _, inProcess := sess.sink.(*connSink); !inProcess {
		return sess.removeWatchesByTable(path, kind, remove)
	}
	found := false
	try := func(t *watchTable, match func(watchMode) bool) {
		if mode, ok := t.has(path, sess); ok && match(mode) {
			found = true
			if remove {
				sess.removeWatch(t, path)
			}
		}
	}
	anyMode := func(watchMode) bool { return true }
	is := func(m watchMode) func(watchMode) bool { return func(x watchMode) bool { return x == m } }
	notRecursive := func(m watchMode) bool { return m != modeRecursive }
	switch kind {
	case zksim.WatcherChildren:
		try(s.childWatches, notRecursive)
		try(s.dataWatches, is(modePersistent))
	case zksim.WatcherData:
		try(s.dataWatches, notRecursive)
		try(s.childWatches, is(modePersistent))
	case zksim.WatcherAny:
		try(s.childWatches, anyMode)
		try(s.dataWatches, anyMode)
	case zksim.WatcherPersistent:
		try(s.childWatches, is(modePersistent))
		try(s.dataWatches, is(modePersistent))
	case zksim.WatcherPersistentRecursive:
		try(s.childWatches, is(modeRecursive))
		try(s.dataWatches, is(modeRecursive))
	}
	return found
}

// knownWatcherKind reports whether the server understands kind. A 3.8
// server knows Children, Data and Any only (WatcherType.fromInt throws on
// any other, which FinalRequestProcessor answers MarshallingError); the
// in-process Conn also removes by the kinds Persistent and
// PersistentRecursive, as a 3.9 server does (ZOOKEEPER-4472).
func (sess *Session) knownWatcherKind(kind zksim.WatcherKind) bool {
	if _, inProcess := sess.sink.(*connSink); inProcess {
		return kind >= zksim.WatcherChildren && kind <= zksim.WatcherPersistentRecursive
	}
	return kind >= zksim.WatcherChildren && kind <= zksim.WatcherAny
}

// removeWatchesByTable is what a 3.8 server does with a removeWatches or
// checkWatches request from a remote client (DataTree.removeWatch and
// containsWatcher): by table, whatever the watch's mode (Children: the
// child table; Data: the data table; Any: both). Other kinds never get
// here (knownWatcherKind).
func (sess *Session) removeWatchesByTable(path string, kind zksim.WatcherKind, remove bool) bool {
	s := sess.view
	found := false
	try := func(t *watchTable) {
		if _, ok := t.has(path, sess); ok {
			found = true
			if remove {
				sess.removeWatch(t, path)
			}
		}
	}
	switch kind {
	case zksim.WatcherChildren:
		try(s.childWatches)
	case zksim.WatcherData:
		try(s.dataWatches)
	case zksim.WatcherAny:
		try(s.childWatches)
		try(s.dataWatches)
	}
	return found
}

// Ping tells the server that the client is alive (OpPing). From the first
// ping on, the session expires when its transport is silent for the whole
// timeout, as a ZooKeeper server expires a client that stopped
// heartbeating; a transport that never pings (the in-process Conn) keeps its
// session while attached. It returns the server's last zxid.
func (sess *Session) Ping() Response { return sess.Do(&Request{Op: OpPing}) }

// Detach tells the server that the session's connection closed: the
// session's watches are dropped server-side, and the session lives until
// its timeout unless a new connection resumes it (Server.ResumeSession).
// The Sink hears nothing more.
func (sess *Session) Detach() {
	s := sess.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disconnect(sess)
	if sess.member != nil {
		// A closeSession its ensemble member had not applied yet waits
		// no more: nobody is left to answer.
		sess.member.failSession(sess)
	}
}

// Close ends the session (OpCloseSession): its ephemerals are deleted in one
// transaction, watchers told. It fails with zksim.ErrConnectionLoss if the
// session is not attached: a client that cannot reach the server cannot
// close its session, which then lives until it expires.
func (sess *Session) Close() error { return sess.Do(&Request{Op: OpCloseSession}).Err }

// copyBytes copies a data buffer, keeping nil (jute's null, length -1)
// apart from empty (length 0) as a real server does: a node created or set
// with empty data reads back empty, one given nil reads back nil. An empty
// copy allocates nothing.
func copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	c := make([]byte, len(b))
	copy(c, b)
	return c
}
