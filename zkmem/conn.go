package zkmem

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
)

// Conn is an in-process client connection to a Server, owning one session.
// It implements zksim.Conn, zksim.PersistentWatcher, zksim.EphemeralsLister
// and zksim.ChildCounter. It is a client: every call becomes one Request
// through its Session's Do, and the faults it meets are controlled on the
// server side, through Server.Control(conn.SessionID()).
type Conn struct {
	srv  *Server
	sess *Session // fixed at Connect; its fields are guarded by srv.mu
	cfg  connConfig
	// ens is the ensemble the Conn connected through, nil on a standalone
	// server; at is the position in cfg.members of the member it is (or
	// was last) connected to. Both guarded by srv.mu.
	ens *Ensemble
	at  int

	// lastZxid is the zxid of the last reply this client saw; guarded by
	// srv.mu. A reconnect re-registers watches relative to it.
	lastZxid int64
	// creds are the addAuths that succeeded, in order, which a reconnect
	// sends again; guarded by srv.mu.
	creds []credential

	mu         sync.Mutex // guards the client-side state below
	state      zksim.State
	dataW      map[string][]chan zksim.Event
	existW     map[string][]chan zksim.Event
	childW     map[string][]chan zksim.Event
	persistent map[string][]*persistentSub
	subs       []*pump.Pump
	redial     *time.Timer
	// conns counts the connections the Conn has had (publish bumps it
	// each time the Conn connects): a call that fails with its
	// connection's end drops only the connection it was sent on.
	conns uint64
	// resuming, while not nil, holds the Conn's calls: it closes when the
	// setWatches of a reconnection has gone out (awaitResumed).
	resuming chan struct{}
	closed   chan struct{} // closed when the Conn is closed
	deliver  func(zksim.Event)
}

var (
	_ zksim.Conn              = (*Conn)(nil)
	_ zksim.PersistentWatcher = (*Conn)(nil)
	_ zksim.EphemeralsLister  = (*Conn)(nil)
	_ zksim.ChildCounter      = (*Conn)(nil)
)

// Connect opens a new session on the server and returns its connection. It
// fails with ErrClosing once the server is closed, and with an error naming
// the option for a zero WithClientAddr.
func (s *Server) Connect(opts ...ConnOption) (*Conn, error) {
	if s.ens != nil && !committedView(opts) {
		return s.ens.Connect(opts...)
	}
	c, err := newConn(s, opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, zksim.ErrClosing
	}
	c.sess = s.openSession(c.cfg.sessionTimeout, c.cfg.addr, (*connSink)(c))
	c.sess.committed = s.ens != nil // only a committed view's gets here on an ensemble
	c.lastZxid = s.zxid
	s.conns[c] = struct{}{}
	return c, nil
}

// newConn returns a Conn of s, in StateConnected, with no session yet.
func newConn(s *Server, opts []ConnOption) (*Conn, error) {
	cfg := connConfig{sessionTimeout: defaultSessionTimeout, addr: DefaultClientAddr}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.addr.IsValid() {
		return nil, errors.New("zkmem: WithClientAddr: the zero netip.Addr is no address")
	}
	c := &Conn{
		srv:        s,
		cfg:        cfg,
		state:      zksim.StateConnected,
		dataW:      make(map[string][]chan zksim.Event),
		existW:     make(map[string][]chan zksim.Event),
		childW:     make(map[string][]chan zksim.Event),
		persistent: make(map[string][]*persistentSub),
		closed:     make(chan struct{}),
	}
	if cfg.transport != nil {
		c.deliver = c.receive
	}
	return c, nil
}

// Server returns the server this Conn belongs to.
func (c *Conn) Server() *Server { return c.srv }

// SessionID returns the session's id.
func (c *Conn) SessionID() int64 { return c.sess.id }

// SessionTimeout returns the negotiated session timeout.
func (c *Conn) SessionTimeout() time.Duration { return c.sess.timeout }

// State returns the current session state.
func (c *Conn) State() zksim.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// stateErr is the error a call gets in a state other than connected.
func stateErr(st zksim.State) error {
	switch st {
	case zksim.StateConnected, zksim.StateConnectedReadOnly:
		return nil
	case zksim.StateClosed:
		return zksim.ErrClosing
	case zksim.StateExpired:
		return zksim.ErrSessionExpired
	case zksim.StateAuthFailed:
		return zksim.ErrAuthFailed
	}
	return zksim.ErrConnectionLoss
}

// do sends one request through the session's executor, after checking the
// context and the connection, and realises what the response says about
// the connection: a closed one drops and reconnects after the reconnect
// delay, and a fault turns the outcome into ErrConnectionLoss.
func (c *Conn) do(ctx context.Context, req *Request, resp *Response) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.awaitResumed()
	st, conn := c.state, c.conns
	c.mu.Unlock()
	if err := stateErr(st); err != nil {
		return err
	}
	c.sess.do(req, resp)
	if resp.Closed {
		c.faultDrop(conn)
	}
	if resp.Fault != NoFault {
		return zksim.ErrConnectionLoss
	}
	return resp.Err
}

// connSink is the Conn as its session's Sink: replies and events go
// straight into the client-side watch tables, under the server's lock.
type connSink Conn

// Reply implements Sink.
func (cs *connSink) Reply(req *Request, resp *Response) { cs.reply(req, resp) }

// reply takes in a reply as a client library does: it remembers its zxid
// and registers the watch the request set (ZKWatchManager), before any
// later event can reach the client. Called with srv.mu held.
func (cs *connSink) reply(req *Request, resp *Response) {
	c := (*Conn)(cs)
	c.lastZxid = resp.Zxid
	switch req.Op {
	case OpRemoveWatches:
		if resp.Err == nil || resp.Err == zksim.ErrNoWatcher {
			c.mu.Lock()
			resp.removed = c.takeWatches(req.Path, req.WatcherKind)
			c.mu.Unlock()
		}
		return
	case OpAddWatch:
		if resp.Err == nil {
			sub := &persistentSub{mode: req.AddWatchMode, p: pump.New(pumpBuffer, nil, c.closed)}
			c.mu.Lock()
			c.persistent[req.Path] = append(c.persistent[req.Path], sub)
			c.mu.Unlock()
			resp.sub = sub
		}
		return
	}
	if !req.Watch || resp.Err != nil {
		return
	}
	switch req.Op {
	case OpExists:
		if resp.Stat != nil {
			resp.ch = c.register(c.dataW, req.Path)
		} else {
			resp.ch = c.register(c.existW, req.Path)
		}
	case OpGetData:
		resp.ch = c.register(c.dataW, req.Path)
	case OpGetChildren:
		resp.ch = c.register(c.childW, req.Path)
	}
}

// Event implements Sink.
func (cs *connSink) Event(ev zksim.Event, _ int64) {
	c := (*Conn)(cs)
	if hold := c.cfg.transport; hold != nil {
		hold(ev, c.deliver)
		return
	}
	c.receive(ev)
}

// Closed implements Sink.
func (cs *connSink) Closed(err error) {
	c := (*Conn)(cs)
	switch err {
	case zksim.ErrConnectionLoss:
		c.lostConnection()
	case zksim.ErrSessionExpired:
		c.learnExpired(true)
	case errMemberGone:
		c.lostConnection()
		c.ens.waiting = append(c.ens.waiting, c)
	}
}

func (cs *connSink) reconnect() error { return (*Conn)(cs).reconnect() }

// Create implements zksim.Conn.
func (c *Conn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	return c.create(ctx, path, data, mode, acl, -1)
}

// CreateTTL implements zksim.Conn.
func (c *Conn) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	return c.create(ctx, path, data, mode, acl, ttl)
}

func (c *Conn) create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	if err := zksim.ValidatePath(path, mode.IsSequential()); err != nil {
		return "", err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpCreate, Path: path, Data: data, Mode: mode, ACL: acl, TTL: ttl,
		Size: createSize(path, data, acl, ttl >= 0)}, &resp)
	if err != nil {
		return "", err
	}
	return resp.Path, nil
}

// Delete implements zksim.Conn.
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	if err := zksim.ValidatePath(path, false); err != nil {
		return err
	}
	err := c.do(ctx, &Request{Op: OpDelete, Path: path, Version: version}, new(Response))
	return err
}

// Set implements zksim.Conn.
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpSetData, Path: path, Data: data, Version: version, Size: setDataSize(path, data)}, &resp)
	if err != nil {
		return nil, err
	}
	return resp.Stat, nil
}

// Exists implements zksim.Conn.
func (c *Conn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	ok, st, _, err := c.exists(ctx, path, false)
	return ok, st, err
}

// ExistsW implements zksim.Conn.
func (c *Conn) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	return c.exists(ctx, path, true)
}

func (c *Conn) exists(ctx context.Context, path string, watch bool) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return false, nil, nil, err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpExists, Path: path, Watch: watch}, &resp)
	if err != nil {
		return false, nil, nil, err
	}
	return resp.Stat != nil, resp.Stat, chanOrNil(resp.ch), nil
}

// chanOrNil returns ch as a receive-only channel, nil when ch is nil.
func chanOrNil(ch chan zksim.Event) <-chan zksim.Event {
	if ch == nil {
		return nil
	}
	return ch
}

// Get implements zksim.Conn.
func (c *Conn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	data, st, _, err := c.get(ctx, path, false)
	return data, st, err
}

// GetW implements zksim.Conn.
func (c *Conn) GetW(ctx context.Context, path string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	return c.get(ctx, path, true)
}

func (c *Conn) get(ctx context.Context, path string, watch bool) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, nil, nil, err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpGetData, Path: path, Watch: watch}, &resp)
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Data, resp.Stat, chanOrNil(resp.ch), nil
}

// Children implements zksim.Conn. The names come in the order a real
// ZooKeeper 3.8.0 server returns them after the same history of creates and
// deletes (its hash set's iteration order, see Options.SortedChildren): not
// sorted, not in creation order. Sort them if order matters.
func (c *Conn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	names, st, _, err := c.children(ctx, path, false)
	return names, st, err
}

// ChildrenW implements zksim.Conn.
func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	return c.children(ctx, path, true)
}

func (c *Conn) children(ctx context.Context, path string, watch bool) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, nil, nil, err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpGetChildren, Path: path, Watch: watch}, &resp)
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Children, resp.Stat, chanOrNil(resp.ch), nil
}

// Multi implements zksim.Conn. The ops run in order against the tree as the
// earlier ops left it and share one zxid; the first failure rolls every op
// back and no watch fires. Paths are checked by the server, op by op, so a
// bad path is reported in that op's result.
func (c *Conn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	first := ""
	if len(ops) > 0 && ops[0] != nil {
		first = ops[0].OpPath()
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpMulti, Path: first, Ops: ops, Size: multiSize(ops)}, &resp)
	if err != nil {
		if zksim.CodeOf(err) == zksim.ErrConnectionLoss.Code {
			return nil, err
		}
		return resp.Results, err
	}
	return resp.Results, nil
}

// Sync implements zksim.Conn. A zkmem server is its own leader, so Sync
// only orders the caller behind the writes before it.
func (c *Conn) Sync(ctx context.Context, path string) (string, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return "", err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpSync, Path: path}, &resp)
	if err != nil {
		return "", err
	}
	return resp.Path, nil
}

// GetACL implements zksim.Conn.
func (c *Conn) GetACL(ctx context.Context, path string) ([]zksim.ACL, *zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, nil, err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpGetACL, Path: path}, &resp)
	if err != nil {
		return nil, nil, err
	}
	return resp.ACL, resp.Stat, nil
}

// SetACL implements zksim.Conn.
func (c *Conn) SetACL(ctx context.Context, path string, acl []zksim.ACL, version int32) (*zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpSetACL, Path: path, ACL: acl, Version: version, Size: setACLSize(path, acl)}, &resp)
	if err != nil {
		return nil, err
	}
	return resp.Stat, nil
}

// AddAuth implements zksim.Conn. Schemes "digest" (auth "user:password")
// and "ip" are known; any other fails with ErrAuthFailed, and, as on a real
// server, the connection is dropped (the session survives). The server
// keeps an identity only for the connection that added it; as
// go-zookeeper does, the Conn remembers every AddAuth that succeeded and
// adds it again each time it reconnects (one whose reply was lost is not
// remembered, and is gone after the reconnection). "sasl" is one of the
// schemes it refuses: SASL runs over the wire's SASL request. The digest
// of Options.SuperDigest passes every ACL check.
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	err := c.do(ctx, &Request{Op: OpAddAuth, AuthScheme: scheme, Auth: auth}, new(Response))
	if err == nil {
		c.srv.mu.Lock()
		c.creds = append(c.creds, credential{scheme: scheme, auth: slices.Clone(auth)})
		c.srv.mu.Unlock()
	}
	return err
}

// GetEphemerals implements zksim.EphemeralsLister.
func (c *Conn) GetEphemerals(ctx context.Context, prefix string) ([]string, error) {
	var resp Response
	err := c.do(ctx, &Request{Op: OpGetEphemerals, Path: prefix}, &resp)
	if err != nil {
		return nil, err
	}
	// The server lists them in its own order (see ephemerals.go); the
	// interface promises them sorted.
	slices.Sort(resp.Children)
	return resp.Children, nil
}

// GetAllChildrenNumber implements zksim.ChildCounter.
func (c *Conn) GetAllChildrenNumber(ctx context.Context, path string) (int32, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return 0, err
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpGetAllChildrenNumber, Path: path}, &resp)
	if err != nil {
		return 0, err
	}
	return resp.Count, nil
}
