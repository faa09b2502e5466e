package difftest

import (
	"context"
	"path"
	"slices"
	"strings"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
)

// generator draws the steps of one sequence. It reads the current versions
// from an oracle session on the zkmem server (outside the comparison), so
// that "right version" steps use the right one, and remembers the paths
// created so far, the ones watched (to change them, so that watches
// fire), and which are containers.
type generator struct {
	root       string
	oracle     zksim.Conn
	known      []string        // every path created so far
	watched    []string        // every path a watch was set on
	containers map[string]bool // paths ever created as containers
}

func newGenerator(root string, oracle zksim.Conn) *generator {
	return &generator{root: root, oracle: oracle, containers: make(map[string]bool)}
}

// learn records what a step created, as zkmem reported it.
func (g *generator) learn(s step, created []string) {
	for _, p := range created {
		if !slices.Contains(g.known, p) {
			g.known = append(g.known, p)
		}
	}
	if s.kind == opCreate && s.mode.IsContainer() && len(created) == 1 {
		g.containers[created[0]] = true
	}
	if s.watch && !slices.Contains(g.watched, s.path) {
		g.watched = append(g.watched, s.path)
	}
}

// weights of the step kinds, in opKind order.
var kindWeights = []int{
	opCreate: 22, opDelete: 10, opSet: 14, opExists: 10, opGet: 9, opChildren: 9,
	opMulti: 10, opSync: 2, opGetACL: 3, opSetACL: 3, opAddAuth: 3, opClose: 3,
}

func drawKind(t *rapid.T) opKind {
	total := 0
	for _, w := range kindWeights {
		total += w
	}
	n := rapid.IntRange(0, total-1).Draw(t, "kind")
	for k, w := range kindWeights {
		if n < w {
			return opKind(k)
		}
		n -= w
	}
	panic("unreachable")
}

// step draws the next step for one of the open sessions.
func (g *generator) step(t *rapid.T, open []int) step {
	s := step{session: rapid.SampledFrom(open).Draw(t, "session"), kind: drawKind(t)}
	switch s.kind {
	case opCreate:
		s.mode = rapid.SampledFrom(allModes).Draw(t, "mode")
		s.path = g.path(t, "path", freshOrBad)
		if s.mode.IsSequential() && rapid.IntRange(0, 3).Draw(t, "trailing-slash") == 0 {
			s.path = g.parent(t) + "/"
		}
		if s.mode.IsEphemeral() && g.containers[parentOf(s.path)] {
			s.mode = zksim.ModePersistent // see the package doc: containers are never emptied
		}
		s.data = g.data(t)
		s.acl = g.aclKind(t)
	case opDelete:
		s.path = g.path(t, "path", existingOrBad)
		if g.containers[parentOf(s.path)] {
			s.kind = opExists // see the package doc: containers are never emptied
			break
		}
		s.version = g.version(t, s.path)
	case opSet:
		s.path = g.path(t, "path", existingOrBad)
		s.data = g.data(t)
		s.version = g.version(t, s.path)
	case opExists, opGet, opChildren:
		s.path = g.path(t, "path", existingOrBad)
		s.watch = rapid.IntRange(0, 2).Draw(t, "watch") > 0
	case opSync, opGetACL:
		s.path = g.path(t, "path", existing)
	case opSetACL:
		s.path = g.path(t, "path", existing)
		s.acl = g.aclKind(t)
		s.version = g.aclVersion(t, s.path)
	case opAddAuth:
		// Several digest identities per session, a wrong password among
		// them (it still adds an identity), and repeats.
		s.auth = rapid.SampledFrom([]string{"alice:pw", "bob:pw", "carol:pw", "dave:pw", "alice:wrong"}).Draw(t, "auth")
	case opMulti:
		n := rapid.IntRange(1, 4).Draw(t, "multi-ops")
		for range n {
			s.ops = append(s.ops, g.multiOp(t))
		}
	}
	return s
}

// parentOf returns the parent of the node a step on p acts on. For a
// sequential create of "dir/" that is dir itself.
func parentOf(p string) string {
	if dir, ok := strings.CutSuffix(p, "/"); ok {
		return dir
	}
	return path.Dir(p)
}

var allModes = []zksim.CreateMode{
	zksim.ModePersistent, zksim.ModeEphemeral, zksim.ModePersistentSequential, zksim.ModeEphemeralSequential,
	zksim.ModeContainer, zksim.ModePersistentWithTTL, zksim.ModePersistentSequentialWithTTL,
}

// multiModes leaves out what go-zookeeper cannot carry in a multi.
var multiModes = []zksim.CreateMode{
	zksim.ModePersistent, zksim.ModeEphemeral, zksim.ModePersistentSequential, zksim.ModeEphemeralSequential,
}

func (g *generator) multiOp(t *rapid.T) zksim.Op {
	kind := rapid.IntRange(0, 3).Draw(t, "multi-kind")
	if kind == 0 {
		p := g.path(t, "multi-path", freshOrBad)
		mode := rapid.SampledFrom(multiModes).Draw(t, "multi-mode")
		if mode.IsEphemeral() && g.containers[parentOf(p)] {
			mode = zksim.ModePersistent
		}
		return &zksim.CreateOp{Path: p, Data: g.data(t), Mode: mode, ACL: g.aclKind(t).acl()}
	}
	p := g.path(t, "multi-path", existingOrBad)
	switch kind {
	case 1:
		if !g.containers[parentOf(p)] {
			return &zksim.DeleteOp{Path: p, Version: g.version(t, p)}
		}
		fallthrough
	case 2:
		return &zksim.CheckOp{Path: p, Version: g.version(t, p)}
	default:
		return &zksim.SetOp{Path: p, Data: g.data(t), Version: g.version(t, p)}
	}
}

// names are few, so that steps collide, and varied, so that the order of
// children shows: "é" shares a bucket with "a" in a new parent's table,
// "中文" hashes over UTF-16, not UTF-8.
var names = []string{"a", "b", "c", "é", "中文", "k9"}

// badPaths are appended to the root to make paths ZooKeeper rejects. None
// ends in "/." or "/..": for a sequential create ZooKeeper checks path+"1",
// which would make those valid, while go-zookeeper rejects them anyway.
var badPaths = []string{"/a/", "//a", "/a/./b", "/a/../b", "/a\x01", "/\U0001F600", "/a\uFFFF", "/a\uE000"}

// pathKind says what a step wants from a drawn path.
type pathKind int

const (
	existing      pathKind = iota // mostly a created path (reads, sets, deletes)
	fresh                         // mostly a new name under a created path (creates)
	existingOrBad                 // as existing, and now and then a bad path
	freshOrBad                    // as fresh, and now and then a bad path
)

// path draws a path under the root: one created before, a child of the
// root or of a created one (names from a small alphabet, so steps
// collide), a fresh one of depth 1 or 2, or now and then one that both
// clients reject before sending.
func (g *generator) path(t *rapid.T, label string, kind pathKind) string {
	knownShare := 14
	if kind == fresh || kind == freshOrBad {
		knownShare = 3
	}
	how := rapid.IntRange(0, 19).Draw(t, label+"-how")
	switch {
	case how < 4 && len(g.watched) > 0:
		// Changes to watched paths make watches fire.
		return rapid.SampledFrom(g.watched).Draw(t, label+"-watched")
	case how < knownShare && len(g.known) > 0:
		return rapid.SampledFrom(g.known).Draw(t, label+"-known")
	case how < 17:
		return g.parent(t) + "/" + rapid.SampledFrom(names).Draw(t, label+"-name")
	case how == 19 && (kind == existingOrBad || kind == freshOrBad):
		return g.root + rapid.SampledFrom(badPaths).Draw(t, label+"-bad")
	}
	p := g.root
	for range rapid.IntRange(1, 2).Draw(t, label+"-depth") {
		p += "/" + rapid.SampledFrom(names).Draw(t, label+"-name")
	}
	return p
}

// parent draws the root, a created path or a watched one, to create under.
func (g *generator) parent(t *rapid.T) string {
	switch rapid.IntRange(0, 3).Draw(t, "parent") {
	case 1:
		if len(g.known) > 0 {
			return rapid.SampledFrom(g.known).Draw(t, "parent-known")
		}
	case 2:
		if len(g.watched) > 0 {
			return rapid.SampledFrom(g.watched).Draw(t, "parent-watched")
		}
	}
	return g.root
}

// data draws null data (nil), empty data or a few bytes: the server keeps
// null and empty apart, and so must zkmem.
func (g *generator) data(t *rapid.T) []byte {
	d := rapid.SampledFrom([]string{"null", "", "x", "yy", "zzz"}).Draw(t, "data")
	if d == "null" {
		return nil
	}
	return []byte(d)
}

func (g *generator) aclKind(t *rapid.T) aclKind {
	if rapid.IntRange(0, 4).Draw(t, "acl-other") > 0 {
		return aclOpen
	}
	return rapid.SampledFrom([]aclKind{aclRead, aclCreator, aclAlice, aclIPHost, aclIPNet, aclIPElse, aclIPv6, aclIPBad, aclCreatorMix}).Draw(t, "acl")
}

// version draws -1, the node's current version, a wrong one, or a small
// number.
func (g *generator) version(t *rapid.T, p string) int32 {
	return g.pickVersion(t, p, func(st *zksim.Stat) int32 { return st.Version })
}

func (g *generator) aclVersion(t *rapid.T, p string) int32 {
	return g.pickVersion(t, p, func(st *zksim.Stat) int32 { return st.Aversion })
}

func (g *generator) pickVersion(t *rapid.T, p string, field func(*zksim.Stat) int32) int32 {
	current := int32(0)
	if ok, st, err := g.oracle.Exists(context.Background(), p); err == nil && ok {
		current = field(st)
	}
	switch rapid.IntRange(0, 3).Draw(t, "version-kind") {
	case 0:
		return current
	case 1:
		return -1
	case 2:
		return current + 1
	}
	return rapid.Int32Range(0, 3).Draw(t, "version")
}
