package property_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/explore"
	"github.com/zksim/zksim/zkmem"
)

// TestZkmemModel checks zkmem against the plain map model of the tree
// (model_test.go): every create (all modes but TTL), delete, set, get,
// exists, children and multi of several sessions, with right and wrong
// versions, and session close, expiry, disconnect and reconnect. After every
// step the whole tree (data, children and every Stat field but the times)
// must equal the model's. It runs beside the recipe machines (their
// phase: phases_test.go), from its seed as they do.
func TestZkmemModel(t *testing.T) {
	inPhase(t, recipePhase)
	explore.CheckPropertyFrom(t, testSeed(t), func(t *rapid.T) {
		m := newZkmemMachine(t)
		defer m.close()
		t.Repeat(rapid.StateMachineActions(m))
	})
}

const modelSessions = 3

type zkmemMachine struct {
	ctx      context.Context
	srv      *zkmem.Server
	observer *zkmem.Conn
	conns    []*zkmem.Conn
	model    *treeModel
}

func newZkmemMachine(t *rapid.T) *zkmemMachine {
	m := &zkmemMachine{
		ctx: context.Background(),
		// Containers are never reaped during a run (the model does not reap).
		srv:   zkmem.NewServer(zkmem.Options{ContainerCheckInterval: time.Hour}),
		model: newTreeModel(),
	}
	for i := 0; i <= modelSessions; i++ {
		c, err := m.srv.Connect(zkmem.WithSessionTimeout(time.Hour))
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		m.model.zxid++ // createSession
		m.model.sessions[c.SessionID()] = &modelSession{alive: true, state: zksim.StateConnected}
		if i == 0 {
			m.observer = c
		} else {
			m.conns = append(m.conns, c)
		}
	}
	return m
}

func (m *zkmemMachine) close() {
	for _, c := range m.conns {
		_ = c.Close()
	}
	_ = m.observer.Close()
	m.srv.Close()
}

// Check compares the whole tree and the zxid with the model.
func (m *zkmemMachine) Check(t *rapid.T) {
	if d := m.model.diff(m.ctx, m.observer); d != "" {
		t.Fatalf("tree differs from the model: %s", d)
	}
	if got := m.srv.LastZxid(); got != m.model.zxid {
		t.Fatalf("last zxid %#x, model %#x", got, m.model.zxid)
	}
}

// session draws one of the client sessions.
func (m *zkmemMachine) session(t *rapid.T) (*zkmem.Conn, *modelSession) {
	i := rapid.IntRange(0, len(m.conns)-1).Draw(t, "session")
	c := m.conns[i]
	return c, m.model.sessions[c.SessionID()]
}

// control returns the control handle of c's session: nil only once c is
// closed and its session gone, when there is nothing left to control.
func (m *zkmemMachine) control(t *rapid.T, c *zkmem.Conn, s *modelSession) *zkmem.Control {
	ctl := m.srv.Control(c.SessionID())
	if ctl == nil && (s.state != zksim.StateClosed || s.alive) {
		t.Fatalf("no control handle for session %#x in state %v (alive %v)", c.SessionID(), s.state, s.alive)
	}
	return ctl
}

var modelNames = []string{"a", "b", "c"}

// anyPath draws an existing user path or a made-up one (whose parent may
// be missing).
func (m *zkmemMachine) anyPath(t *rapid.T) string {
	if rapid.Bool().Draw(t, "existing") {
		paths := m.model.userPaths()
		if len(paths) > 1 {
			return rapid.SampledFrom(paths[1:]).Draw(t, "path") // not "/"
		}
	}
	depth := rapid.IntRange(1, 3).Draw(t, "depth")
	p := ""
	for range depth {
		p += "/" + rapid.SampledFrom(modelNames).Draw(t, "name")
	}
	return p
}

// createPath draws a path to create: a child of an existing node or of a
// made-up one.
func (m *zkmemMachine) createPath(t *rapid.T, mode zksim.CreateMode) string {
	var parent string
	if rapid.IntRange(0, 4).Draw(t, "parentKind") > 0 {
		parent = rapid.SampledFrom(m.model.userPaths()).Draw(t, "parent")
	} else {
		parent = m.anyPath(t)
	}
	if parent == "/" {
		parent = ""
	}
	if mode.IsSequential() {
		return parent + "/" + rapid.SampledFrom([]string{"s-", "q-", ""}).Draw(t, "prefix")
	}
	return parent + "/" + rapid.SampledFrom(modelNames).Draw(t, "name")
}

var modelModes = []zksim.CreateMode{
	zksim.ModePersistent, zksim.ModeEphemeral, zksim.ModePersistentSequential,
	zksim.ModeEphemeralSequential, zksim.ModeContainer,
}

func drawData(t *rapid.T) []byte {
	if rapid.IntRange(0, 3).Draw(t, "nilData") == 0 {
		return nil
	}
	return rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "data")
}

// drawVersion draws a version for path: -1, the right one, or wrong ones.
func (m *zkmemMachine) drawVersion(t *rapid.T, p string) int32 {
	var cur int32
	if n := m.model.nodes[p]; n != nil {
		cur = n.version
	}
	return rapid.SampledFrom([]int32{-1, cur, cur, cur + 1, 0}).Draw(t, "version")
}

// expectErr fails unless got is the error want (both by code), or both nil.
func expectErr(t *rapid.T, what string, got, want error) {
	t.Helper()
	if (got == nil) != (want == nil) || (got != nil && !errors.Is(got, want)) {
		t.Fatalf("%s: error %v, model %v", what, got, want)
	}
}

// write runs a write for the model: it fails with the Conn's state error,
// or consumes a zxid and applies f.
func (m *zkmemMachine) write(s *modelSession, f func() error) error {
	if err := connErr(s.state); err != nil {
		return err
	}
	m.model.zxid++
	return f()
}

func (m *zkmemMachine) Create(t *rapid.T) {
	c, s := m.session(t)
	mode := rapid.SampledFrom(modelModes).Draw(t, "mode")
	p := m.createPath(t, mode)
	data := drawData(t)
	got, err := c.Create(m.ctx, p, data, mode, zksim.OpenACL())
	var want string
	wantErr := m.write(s, func() error {
		var err error
		want, err = m.model.create(c.SessionID(), p, data, mode)
		return err
	})
	expectErr(t, fmt.Sprintf("create %s %v", p, mode), err, wantErr)
	if got != want {
		t.Fatalf("create %s %v: path %q, model %q", p, mode, got, want)
	}
}

func (m *zkmemMachine) Delete(t *rapid.T) {
	c, s := m.session(t)
	p := m.anyPath(t)
	v := m.drawVersion(t, p)
	err := c.Delete(m.ctx, p, v)
	wantErr := m.write(s, func() error { return m.model.delete(p, v) })
	expectErr(t, fmt.Sprintf("delete %s v%d", p, v), err, wantErr)
}

func (m *zkmemMachine) Set(t *rapid.T) {
	c, s := m.session(t)
	p := m.anyPath(t)
	v := m.drawVersion(t, p)
	data := drawData(t)
	st, err := c.Set(m.ctx, p, data, v)
	var want *zksim.Stat
	wantErr := m.write(s, func() error {
		var err error
		want, err = m.model.set(p, data, v)
		return err
	})
	expectErr(t, fmt.Sprintf("set %s v%d", p, v), err, wantErr)
	if d := statDiff(st, want); d != "" {
		t.Fatalf("set %s: stat %s", p, d)
	}
}

// Read does a get, an exists or a children call and checks what it says.
func (m *zkmemMachine) Read(t *rapid.T) {
	c, s := m.session(t)
	p := m.anyPath(t)
	kind := rapid.SampledFrom([]string{"get", "exists", "children"}).Draw(t, "read")
	wantErr := connErr(s.state)
	var want *zksim.Stat
	if wantErr == nil {
		if m.model.nodes[p] == nil {
			wantErr = zksim.ErrNoNode
		} else {
			want = m.model.stat(p)
		}
	}
	switch kind {
	case "get":
		data, st, err := c.Get(m.ctx, p)
		expectErr(t, "get "+p, err, wantErr)
		if d := statDiff(st, want); d != "" {
			t.Fatalf("get %s: stat %s", p, d)
		}
		if want != nil && !sameData(data, m.model.nodes[p].data) {
			t.Fatalf("get %s: data %s, model %s", p, showData(data), showData(m.model.nodes[p].data))
		}
	case "exists":
		ok, st, err := c.Exists(m.ctx, p)
		if errors.Is(wantErr, zksim.ErrNoNode) {
			wantErr = nil
		}
		expectErr(t, "exists "+p, err, wantErr)
		if ok != (want != nil) {
			t.Fatalf("exists %s: %v, model %v", p, ok, want != nil)
		}
		if d := statDiff(st, want); d != "" {
			t.Fatalf("exists %s: stat %s", p, d)
		}
	case "children":
		names, st, err := c.Children(m.ctx, p)
		expectErr(t, "children "+p, err, wantErr)
		if d := statDiff(st, want); d != "" {
			t.Fatalf("children %s: stat %s", p, d)
		}
		if want != nil && len(names) != len(m.model.nodes[p].children) {
			t.Fatalf("children %s: %v, model %v", p, names, m.model.nodes[p].children)
		}
	}
}

func (m *zkmemMachine) Multi(t *rapid.T) {
	c, s := m.session(t)
	n := rapid.IntRange(1, 3).Draw(t, "ops")
	ops := make([]zksim.Op, n)
	for i := range ops {
		switch rapid.IntRange(0, 3).Draw(t, "op") {
		case 0:
			mode := rapid.SampledFrom(modelModes).Draw(t, "mode")
			ops[i] = &zksim.CreateOp{Path: m.createPath(t, mode), Data: drawData(t), Mode: mode, ACL: zksim.OpenACL()}
		case 1:
			p := m.anyPath(t)
			ops[i] = &zksim.DeleteOp{Path: p, Version: m.drawVersion(t, p)}
		case 2:
			p := m.anyPath(t)
			ops[i] = &zksim.SetOp{Path: p, Data: drawData(t), Version: m.drawVersion(t, p)}
		case 3:
			p := m.anyPath(t)
			ops[i] = &zksim.CheckOp{Path: p, Version: m.drawVersion(t, p)}
		}
	}
	res, err := c.Multi(m.ctx, ops...)
	var want []zksim.OpResult
	wantErr := m.write(s, func() error {
		after, r, err := m.model.multi(c.SessionID(), ops)
		m.model.nodes, want = after.nodes, r
		return err
	})
	what := fmt.Sprintf("multi %s", describeOps(ops))
	expectErr(t, what, err, wantErr)
	if len(res) != len(want) {
		t.Fatalf("%s: %d results, model %d", what, len(res), len(want))
	}
	for i := range res {
		g, w := res[i], want[i]
		expectErr(t, fmt.Sprintf("%s: result %d", what, i), g.Err, w.Err)
		if g.Path != w.Path {
			t.Fatalf("%s: result %d path %q, model %q", what, i, g.Path, w.Path)
		}
		if d := statDiff(g.Stat, w.Stat); d != "" {
			t.Fatalf("%s: result %d stat %s", what, i, d)
		}
	}
}

func describeOps(ops []zksim.Op) string {
	s := ""
	for _, op := range ops {
		s += fmt.Sprintf("[%s %s]", reflect.TypeOf(op).Elem().Name(), op.OpPath())
	}
	return s
}

// Close closes a session: if connected, its ephemerals go in one
// transaction; a disconnected Conn cannot tell the server, whose session
// lives on until it expires.
func (m *zkmemMachine) Close(t *rapid.T) {
	c, s := m.session(t)
	_ = c.Close()
	if s.state == zksim.StateConnected && s.alive {
		m.model.endSession(c.SessionID())
	}
	if s.state != zksim.StateClosed {
		s.state = zksim.StateClosed
	}
	m.reopen(t, c)
}

// reopen replaces a finished Conn by a new session, so that the machine
// keeps three live ones most of the time.
func (m *zkmemMachine) reopen(t *rapid.T, old *zkmem.Conn) {
	if !rapid.Bool().Draw(t, "reopen") {
		return
	}
	c, err := m.srv.Connect(zkmem.WithSessionTimeout(time.Hour))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	m.model.zxid++
	m.model.sessions[c.SessionID()] = &modelSession{alive: true, state: zksim.StateConnected}
	for i := range m.conns {
		if m.conns[i] == old {
			m.conns[i] = c
		}
	}
	_ = old.Close()
}

// Expire expires a session on the server.
func (m *zkmemMachine) Expire(t *rapid.T) {
	c, s := m.session(t)
	ok := slices.Contains(m.srv.SessionIDs(), c.SessionID())
	if ok != s.alive {
		t.Fatalf("session live = %v, model says alive = %v", ok, s.alive)
	}
	if ctl := m.control(t, c, s); ctl != nil {
		ctl.Expire()
	}
	if s.alive {
		m.model.endSession(c.SessionID())
		if s.state == zksim.StateConnected {
			s.state = zksim.StateExpired
		}
	}
	if got := c.State(); got != s.state {
		t.Fatalf("state after expiry %v, model %v", got, s.state)
	}
	if s.state == zksim.StateExpired {
		m.reopen(t, c)
	}
}

func (m *zkmemMachine) Disconnect(t *rapid.T) {
	c, s := m.session(t)
	if ctl := m.control(t, c, s); ctl != nil {
		ctl.Disconnect()
	}
	if s.state == zksim.StateConnected {
		s.state = zksim.StateDisconnected
	}
	if got := c.State(); got != s.state {
		t.Fatalf("state after Disconnect %v, model %v", got, s.state)
	}
}

func (m *zkmemMachine) Reconnect(t *rapid.T) {
	c, s := m.session(t)
	ctl := m.control(t, c, s)
	if ctl == nil {
		return
	}
	err := ctl.Reconnect()
	var wantErr error
	switch {
	case s.state == zksim.StateDisconnected && s.alive:
		s.state = zksim.StateConnected
	case s.state == zksim.StateDisconnected:
		s.state, wantErr = zksim.StateExpired, zksim.ErrSessionExpired
	default:
		wantErr = connErr(s.state)
	}
	expectErr(t, "reconnect", err, wantErr)
	if got := c.State(); got != s.state {
		t.Fatalf("state after Reconnect %v, model %v", got, s.state)
	}
}
