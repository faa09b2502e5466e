package property_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zksim/zksim"
)

// treeModel is the plain reference model of a ZooKeeper tree that the
// zkmem model test (zkmem_model_test.go) checks zkmem against: a map of
// paths, a zxid counter, and the sessions. It knows only the rules of
// zk-semantics.md, written as simply as possible.
type treeModel struct {
	nodes    map[string]*modelNode
	zxid     int64
	sessions map[int64]*modelSession
}

type modelNode struct {
	data     []byte
	version  int32
	aversion int32
	creates  int32 // child creates: the sequence counter
	deletes  int32 // child deletes
	czxid    int64
	mzxid    int64
	pzxid    int64
	owner    int64 // the session of an ephemeral, else 0
	children map[string]bool
}

// modelSession is what the model knows of one session: whether the server
// still has it, and what its client sees.
type modelSession struct {
	alive bool        // the server has the session
	state zksim.State // what the client's Conn says
}

func newTreeModel() *treeModel {
	m := &treeModel{nodes: map[string]*modelNode{}, sessions: map[int64]*modelSession{}}
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		m.nodes[p] = &modelNode{data: []byte{}, children: map[string]bool{}} // empty, not null
		if p != "/" {
			m.nodes[modelParent(p)].children[modelBase(p)] = true
		}
	}
	m.nodes["/zookeeper/config"].aversion = -1
	return m
}

func modelParent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func modelBase(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

func (m *treeModel) clone() *treeModel {
	c := &treeModel{nodes: make(map[string]*modelNode, len(m.nodes)), zxid: m.zxid, sessions: m.sessions}
	for p, n := range m.nodes {
		cp := *n
		cp.children = maps.Clone(n.children)
		c.nodes[p] = &cp
	}
	return c
}

// paths returns every path of the model, sorted.
func (m *treeModel) paths() []string {
	return slices.Sorted(maps.Keys(m.nodes))
}

// userPaths returns the paths a test may touch: all but the system nodes.
func (m *treeModel) userPaths() []string {
	var out []string
	for _, p := range m.paths() {
		if p != "/zookeeper" && !strings.HasPrefix(p, "/zookeeper/") {
			out = append(out, p)
		}
	}
	return out
}

func (m *treeModel) stat(p string) *zksim.Stat {
	n := m.nodes[p]
	return &zksim.Stat{
		Czxid: n.czxid, Mzxid: n.mzxid, Pzxid: n.pzxid,
		Version: n.version, Cversion: n.creates + n.deletes - m.initialChildren(p), Aversion: n.aversion,
		EphemeralOwner: n.owner, DataLength: int32(len(n.data)), NumChildren: int32(len(n.children)),
	}
}

// initialChildren counts the children a fresh server's nodes start with
// (added without a create, so they count in neither creates nor deletes:
// ZooKeeper's 2*creates-numChildren formula then goes below zero).
func (m *treeModel) initialChildren(p string) int32 {
	switch p {
	case "/":
		return 1
	case "/zookeeper":
		return 2
	}
	return 0
}

// connErr is the error a call gets from its Conn's state, before reaching
// the server.
func connErr(st zksim.State) error {
	switch st {
	case zksim.StateConnected:
		return nil
	case zksim.StateClosed:
		return zksim.ErrClosing
	case zksim.StateExpired:
		return zksim.ErrSessionExpired
	}
	return zksim.ErrConnectionLoss
}

func (m *treeModel) create(sess int64, p string, data []byte, mode zksim.CreateMode) (string, error) {
	parent := m.nodes[modelParent(p)]
	if parent == nil {
		return "", zksim.ErrNoNode
	}
	if mode.IsSequential() {
		p = fmt.Sprintf("%s%010d", p, parent.creates)
	}
	if m.nodes[p] != nil {
		return "", zksim.ErrNodeExists
	}
	if parent.owner != 0 {
		return "", zksim.ErrNoChildrenForEphemerals
	}
	n := &modelNode{data: data, czxid: m.zxid, mzxid: m.zxid, pzxid: m.zxid, children: map[string]bool{}}
	if mode.IsEphemeral() {
		n.owner = sess
	}
	m.nodes[p] = n
	parent.children[modelBase(p)] = true
	parent.creates++
	parent.pzxid = m.zxid
	return p, nil
}

func (m *treeModel) delete(p string, version int32) error {
	parent := m.nodes[modelParent(p)]
	if parent == nil {
		return zksim.ErrNoNode
	}
	n := m.nodes[p]
	if n == nil {
		return zksim.ErrNoNode
	}
	if version != -1 && version != n.version {
		return zksim.ErrBadVersion
	}
	if len(n.children) > 0 {
		return zksim.ErrNotEmpty
	}
	m.remove(p)
	return nil
}

func (m *treeModel) remove(p string) {
	parent := m.nodes[modelParent(p)]
	delete(m.nodes, p)
	delete(parent.children, modelBase(p))
	parent.deletes++
	parent.pzxid = m.zxid
}

func (m *treeModel) set(p string, data []byte, version int32) (*zksim.Stat, error) {
	n := m.nodes[p]
	if n == nil {
		return nil, zksim.ErrNoNode
	}
	if version != -1 && version != n.version {
		return nil, zksim.ErrBadVersion
	}
	n.data = data
	n.version++
	n.mzxid = m.zxid
	return m.stat(p), nil
}

func (m *treeModel) check(p string, version int32) error {
	n := m.nodes[p]
	if n == nil {
		return zksim.ErrNoNode
	}
	if version != -1 && version != n.version {
		return zksim.ErrBadVersion
	}
	return nil
}

// multi applies ops all or nothing, with one zxid; it returns the model
// after the multi (m itself is left alone) and the results.
func (m *treeModel) multi(sess int64, ops []zksim.Op) (*treeModel, []zksim.OpResult, error) {
	c := m.clone()
	res := make([]zksim.OpResult, len(ops))
	for i, op := range ops {
		var err error
		switch o := op.(type) {
		case *zksim.CreateOp:
			res[i].Path, err = c.create(sess, o.Path, o.Data, o.Mode)
		case *zksim.DeleteOp:
			err = c.delete(o.Path, o.Version)
		case *zksim.SetOp:
			res[i].Stat, err = c.set(o.Path, o.Data, o.Version)
		case *zksim.CheckOp:
			err = c.check(o.Path, o.Version)
		}
		if err != nil {
			for j := range res {
				switch {
				case j < i:
					res[j] = zksim.OpResult{}
				case j == i:
					res[j] = zksim.OpResult{Err: err}
				default:
					res[j] = zksim.OpResult{Err: zksim.ErrRuntimeInconsistency}
				}
			}
			m.zxid = c.zxid
			return m, res, err
		}
	}
	return c, res, nil
}

// endSession deletes the session's ephemerals in one transaction, as a
// close or an expiry does.
func (m *treeModel) endSession(sess int64) {
	m.zxid++
	for _, p := range m.paths() {
		if n := m.nodes[p]; n != nil && n.owner == sess {
			m.remove(p)
		}
	}
	m.sessions[sess].alive = false
}

// treeReader is what the model test reads zkmem's tree with.
type treeReader interface {
	Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error)
	Children(ctx context.Context, path string) ([]string, *zksim.Stat, error)
}

// diff compares the whole tree read through r with the model and returns
// the first difference, "" if none.
func (m *treeModel) diff(ctx context.Context, r treeReader) string {
	for _, p := range m.paths() {
		data, st, err := r.Get(ctx, p)
		if err != nil {
			return fmt.Sprintf("get %s: %v", p, err)
		}
		if d := statDiff(st, m.stat(p)); d != "" {
			return fmt.Sprintf("stat of %s: %s", p, d)
		}
		if !sameData(data, m.nodes[p].data) {
			return fmt.Sprintf("data of %s: %s, model %s", p, showData(data), showData(m.nodes[p].data))
		}
		names, _, err := r.Children(ctx, p)
		if err != nil {
			return fmt.Sprintf("children %s: %v", p, err)
		}
		slices.Sort(names)
		want := slices.Sorted(maps.Keys(m.nodes[p].children))
		if !slices.Equal(names, want) {
			return fmt.Sprintf("children of %s: %v, model %v", p, names, want)
		}
	}
	return ""
}

// statDiff compares every Stat field the model knows (all but the times,
// which only have to be ordered).
func statDiff(got, want *zksim.Stat) string {
	if got == nil || want == nil {
		if got != want {
			return fmt.Sprintf("%v, model %v", got, want)
		}
		return ""
	}
	g := *got
	if g.Ctime > g.Mtime {
		return fmt.Sprintf("ctime %d after mtime %d", g.Ctime, g.Mtime)
	}
	g.Ctime, g.Mtime = 0, 0
	if g != *want {
		return fmt.Sprintf("%v, model %v", g, *want)
	}
	return ""
}

// sameData reports whether got is exactly want: null (nil) apart from
// empty, as a real server keeps them.
func sameData(got, want []byte) bool {
	return (got == nil) == (want == nil) && string(got) == string(want)
}

// showData renders data with null apart from empty.
func showData(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("%q", b)
}
