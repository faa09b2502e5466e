package zkmem

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
)

// Conn is an in-process client connection to a Server, owning one session.
// It implements zksim.Conn, zksim.PersistentWatcher, zksim.EphemeralsLister
// and zksim.ChildCounter, and carries the test controls described in the
// package documentation.
type Conn struct {
	srv  *Server
	sess *session // fixed at Connect; its fields are guarded by srv.mu
	cfg  connConfig

	// lastZxid is the zxid of the last reply this client saw; guarded by
	// srv.mu. A reconnect re-registers watches relative to it.
	lastZxid int64

	mu         sync.Mutex // guards the client-side state below
	state      zksim.State
	dataW      map[string][]chan zksim.Event
	existW     map[string][]chan zksim.Event
	childW     map[string][]chan zksim.Event
	persistent map[string][]*persistentSub
	subs       []*pump.Pump
	hook       func(Request) Fault
	armed      []armedFault
	redial     *time.Timer
	closed     chan struct{} // closed when the Conn is closed
}

var (
	_ zksim.Conn              = (*Conn)(nil)
	_ zksim.PersistentWatcher = (*Conn)(nil)
	_ zksim.EphemeralsLister  = (*Conn)(nil)
	_ zksim.ChildCounter      = (*Conn)(nil)
)

// Connect opens a new session on the server and returns its connection. It
// fails with ErrClosing once the server is closed.
func (s *Server) Connect(opts ...ConnOption) (*Conn, error) {
	cfg := connConfig{sessionTimeout: defaultSessionTimeout}
	for _, o := range opts {
		o(&cfg)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, zksim.ErrClosing
	}
	c.sess = s.openSession(cfg.sessionTimeout, c)
	c.lastZxid = s.zxid
	s.conns[c] = struct{}{}
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
	case zksim.StateConnected:
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

// enter starts a request: it checks the context and the connection, decides
// the request's fault and, unless the request is lost on the way, returns
// with the server locked. Every successful enter is paired with leave.
func (c *Conn) enter(ctx context.Context, op, path string) (Fault, error) {
	if err := ctx.Err(); err != nil {
		return NoFault, err
	}
	c.mu.Lock()
	if err := stateErr(c.state); err != nil {
		c.mu.Unlock()
		return NoFault, err
	}
	var fault Fault
	for i, a := range c.armed {
		if a.op == "" || a.op == op {
			c.armed = append(c.armed[:i], c.armed[i+1:]...)
			fault = a.fault
			break
		}
	}
	hook := c.hook
	armed := fault != NoFault
	c.mu.Unlock()
	if !armed && hook != nil {
		fault = hook(Request{Op: op, Path: path})
	}
	if fault == DropRequest {
		c.faultDrop()
		return fault, zksim.ErrConnectionLoss
	}
	c.srv.mu.Lock()
	if c.srv.closed || !c.sess.connected || c.sess.dead {
		c.srv.mu.Unlock()
		return fault, zksim.ErrConnectionLoss
	}
	return fault, nil
}

// leave finishes a request entered with enter: it unlocks the server and,
// for a lost reply, drops the connection and replaces err.
func (c *Conn) leave(fault Fault, err error) error {
	if fault == LoseReply {
		c.srv.mu.Unlock()
		c.faultDrop()
		return zksim.ErrConnectionLoss
	}
	c.lastZxid = c.srv.zxid
	c.srv.mu.Unlock()
	return err
}

// tooBig handles a request over the server's size limit: the server closes
// the connection without applying it. Called with srv.mu held; unlocks it.
func (c *Conn) tooBig() error {
	c.srv.mu.Unlock()
	c.faultDrop()
	return zksim.ErrConnectionLoss
}

func (c *Conn) tooLarge(size int) bool {
	return requestHeaderSize+size > c.srv.opts.MaxRequestBytes
}

func copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// Create implements zksim.Conn.
func (c *Conn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	return c.create(ctx, path, data, mode, acl, -1)
}

// CreateTTL implements zksim.Conn.
func (c *Conn) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	return c.create(ctx, path, data, mode, acl, ttl.Milliseconds())
}

func (c *Conn) create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl int64) (string, error) {
	if err := zksim.ValidatePath(path, mode.IsSequential()); err != nil {
		return "", err
	}
	fault, err := c.enter(ctx, OpCreate, path)
	if err != nil {
		return "", err
	}
	if c.tooLarge(createSize(path, data, acl, ttl >= 0)) {
		return "", c.tooBig()
	}
	t := c.srv.begin()
	created, _, err := c.srv.create(t, c.sess, path, copyBytes(data), mode, acl, ttl)
	c.srv.commit(t)
	if err = c.leave(fault, err); err != nil {
		return "", err
	}
	return created, nil
}

// Delete implements zksim.Conn.
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	if err := zksim.ValidatePath(path, false); err != nil {
		return err
	}
	fault, err := c.enter(ctx, OpDelete, path)
	if err != nil {
		return err
	}
	t := c.srv.begin()
	err = c.srv.delete(t, c.sess, path, version)
	c.srv.commit(t)
	return c.leave(fault, err)
}

// Set implements zksim.Conn.
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	fault, err := c.enter(ctx, OpSetData, path)
	if err != nil {
		return nil, err
	}
	if c.tooLarge(setDataSize(path, data)) {
		return nil, c.tooBig()
	}
	t := c.srv.begin()
	n, err := c.srv.setData(t, c.sess, path, copyBytes(data), version)
	var st *zksim.Stat
	if err == nil {
		st = n.stat()
	}
	c.srv.commit(t)
	if err = c.leave(fault, err); err != nil {
		return nil, err
	}
	return st, nil
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
	fault, err := c.enter(ctx, OpExists, path)
	if err != nil {
		return false, nil, nil, err
	}
	n := c.srv.tree.get(path)
	var ch chan zksim.Event
	if watch {
		// exists watches live in the data table, present node or not.
		c.sess.addWatch(c.srv.dataWatches, path, modeStandard)
		if fault != LoseReply {
			if n != nil {
				ch = c.register(c.dataW, path)
			} else {
				ch = c.register(c.existW, path)
			}
		}
	}
	var st *zksim.Stat
	if n != nil {
		st = n.stat()
	}
	if err := c.leave(fault, nil); err != nil {
		return false, nil, nil, err
	}
	return n != nil, st, ch, nil
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
	fault, err := c.enter(ctx, OpGetData, path)
	if err != nil {
		return nil, nil, nil, err
	}
	n, err := c.srv.getData(c.sess, path)
	var (
		data []byte
		st   *zksim.Stat
		ch   chan zksim.Event
	)
	if err == nil {
		data, st = copyBytes(n.data), n.stat()
		if watch {
			c.sess.addWatch(c.srv.dataWatches, path, modeStandard)
			if fault != LoseReply {
				ch = c.register(c.dataW, path)
			}
		}
	}
	if err = c.leave(fault, err); err != nil {
		return nil, nil, nil, err
	}
	return data, st, ch, nil
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
	fault, err := c.enter(ctx, OpGetChildren, path)
	if err != nil {
		return nil, nil, nil, err
	}
	n, err := c.srv.getData(c.sess, path) // same checks: NoNode, then READ
	var (
		names []string
		st    *zksim.Stat
		ch    chan zksim.Event
	)
	if err == nil {
		names, st = n.childNames(c.srv.tree.sorted), n.stat()
		if watch {
			c.sess.addWatch(c.srv.childWatches, path, modeStandard)
			if fault != LoseReply {
				ch = c.register(c.childW, path)
			}
		}
	}
	if err = c.leave(fault, err); err != nil {
		return nil, nil, nil, err
	}
	return names, st, ch, nil
}

// Sync implements zksim.Conn. A zkmem server is its own leader, so Sync
// only orders the caller behind the writes before it.
func (c *Conn) Sync(ctx context.Context, path string) (string, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return "", err
	}
	fault, err := c.enter(ctx, OpSync, path)
	if err != nil {
		return "", err
	}
	if err := c.leave(fault, nil); err != nil {
		return "", err
	}
	return path, nil
}

// GetACL implements zksim.Conn.
func (c *Conn) GetACL(ctx context.Context, path string) ([]zksim.ACL, *zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, nil, err
	}
	fault, err := c.enter(ctx, OpGetACL, path)
	if err != nil {
		return nil, nil, err
	}
	acl, st, err := c.srv.getACL(c.sess, path)
	if err = c.leave(fault, err); err != nil {
		return nil, nil, err
	}
	return acl, st, nil
}

// SetACL implements zksim.Conn.
func (c *Conn) SetACL(ctx context.Context, path string, acl []zksim.ACL, version int32) (*zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	fault, err := c.enter(ctx, OpSetACL, path)
	if err != nil {
		return nil, err
	}
	if c.tooLarge(setACLSize(path, acl)) {
		return nil, c.tooBig()
	}
	t := c.srv.begin()
	n, err := c.srv.setACL(t, c.sess, path, acl, version)
	var st *zksim.Stat
	if err == nil {
		st = n.stat()
	}
	if err = c.leave(fault, err); err != nil {
		return nil, err
	}
	return st, nil
}

// AddAuth implements zksim.Conn. Schemes "digest" (auth "user:password")
// and "ip" are known; any other fails with ErrAuthFailed, and, as on a real
// server, the connection is dropped (the session survives).
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	fault, err := c.enter(ctx, OpAddAuth, "")
	if err != nil {
		return err
	}
	id, ok := authenticate(scheme, auth)
	if !ok {
		c.srv.mu.Unlock()
		c.faultDrop()
		return zksim.ErrAuthFailed
	}
	known := false
	for _, a := range c.sess.auth {
		if a == id {
			known = true
		}
	}
	if !known {
		c.sess.auth = append(c.sess.auth, id)
	}
	return c.leave(fault, nil)
}

// GetEphemerals implements zksim.EphemeralsLister.
func (c *Conn) GetEphemerals(ctx context.Context, prefix string) ([]string, error) {
	fault, err := c.enter(ctx, OpGetEphemerals, prefix)
	if err != nil {
		return nil, err
	}
	var paths []string
	if strings.TrimSpace(prefix) == "/" {
		prefix = ""
	}
	if c.sess.ephemerals != nil {
		c.sess.ephemerals.Ascend(func(n *node) bool {
			if strings.HasPrefix(n.path, prefix) {
				paths = append(paths, n.path)
			}
			return true
		})
	}
	if err := c.leave(fault, nil); err != nil {
		return nil, err
	}
	if paths == nil {
		paths = []string{}
	}
	return paths, nil
}

// GetAllChildrenNumber implements zksim.ChildCounter.
func (c *Conn) GetAllChildrenNumber(ctx context.Context, path string) (int32, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return 0, err
	}
	fault, err := c.enter(ctx, OpGetAllChildrenNumber, path)
	if err != nil {
		return 0, err
	}
	var count int32
	n, err := c.srv.getData(c.sess, path) // NoNode, then READ
	if err == nil {
		count = countDescendants(n)
	}
	if err = c.leave(fault, err); err != nil {
		return 0, err
	}
	return count, nil
}
