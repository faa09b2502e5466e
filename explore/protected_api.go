package explore

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
)

// The lock machines also call the root package's own recipe,
// recipes.CreateProtectedEphemeralSequential (a protected create written
// against zksim.Conn), under the same faults, and check what it promises:
//
//   - a bad path is refused with zksim.ErrBadArguments, creating nothing;
//   - it creates the missing ancestors of the path, and when the server
//     refuses one (an ancestor whose ACL does not allow CREATE), it
//     returns the server's error, zksim.ErrNoAuth, having created nothing;
//   - after the call's first connection loss it waits for the connection
//     and no more, and keeps to the retry timing after later ones
//     (retrycheck.go, newCallConn);
//   - the node is created in the path's parent, named
//     _c_<GUID>-<name><sequence> with a 36-character GUID (Curator's
//     protected names), and owned by the caller's session;
//   - SequenceOf reads its sequence number back, and CompareSequence
//     orders the nodes of a directory as the server created them (czxid
//     order), across the int32 wrap;
//   - no orphan: an error (a lost reply, a cancelled call, an expired
//     session) leaves no node of the call behind, and a lost reply no
//     second node: every protected node of a live session is one a call
//     returned, or belongs to a call under way (checkProtected).

// protectedPaths are the paths the action draws: in a directory, two
// levels below it (both missing at first), with an empty name, and two
// that are not valid. (Paths under a directory that refuses creates have
// an action of their own, createProtectedRefused, so that a failure
// there is found early and short.) All are under protectedDir, so that the coverage report has one
// area for them (a protected name at the root would make one per GUID).
var protectedPaths = []string{protectedDir + "/p-", protectedNested + "/p-", protectedDir + "/", "p-", protectedDir + "//p-"}

const (
	protectedDir    = "/protected"
	protectedNested = protectedDir + "/a/b"
	// protectedRefused is made by the machine with an ACL that lets
	// anyone read it, and nobody create in it: a create of a child fails
	// with NoAuth (ZooKeeper checks the parent's CREATE permission).
	protectedRefused = protectedDir + "/ro"
)

// protectedReadOnly is protectedRefused's ACL.
var protectedReadOnly = []zksim.ACL{{Perms: zksim.PermRead, Scheme: "world", ID: "anyone"}}

// protectedGUID is the start of a protected name: "_c_", a version-4
// UUID, "-".
var protectedGUID = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-`)

// protectedSeq parses a protected child made for name: the sequence
// number the server appended (%010d, so ten characters, or eleven after
// the int32 wrap).
func protectedSeq(child, name string) (int32, bool) {
	g := protectedGUID.FindString(child)
	if g == "" || !strings.HasPrefix(child[len(g):], name) {
		return 0, false
	}
	s := child[len(g)+len(name):]
	if len(s) < 10 || len(s) > 11 || s[0] == '+' {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err == nil
}

// protectedBook is what the machine knows of the protected nodes.
type protectedBook struct {
	mu      sync.Mutex
	created map[string]protectedNode // by the path a call returned
	// returned says a call returned since checkProtected last looked: a
	// call's nodes appear before it returns (its cleanup lists the
	// directory after its create), so that is when to look.
	returned atomic.Bool
}

type protectedNode struct {
	czxid int64
	seq   int32
}

// createProtected: a client calls CreateProtectedEphemeralSequential.
func (f *lockFamily) createProtected(t *rapid.T) {
	f.createProtectedAt(t, rapid.SampledFrom(protectedPaths).Draw(t, "path"))
}

// createProtectedRefused: a client calls CreateProtectedEphemeralSequential
// for a path two missing levels below protectedRefused, which refuses
// creates: EnsurePath recurses up to it and must return its NoAuth.
func (f *lockFamily) createProtectedRefused(t *rapid.T) {
	f.createProtectedAt(t, protectedRefused+"/a/b/p-")
}

// createProtectedAt: a client calls CreateProtectedEphemeralSequential for
// the path p.
func (f *lockFamily) createProtectedAt(t *rapid.T, p string) {
	var cs []*client
	for _, c := range f.w.awake() {
		if !c.busy("protected") {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "create protected")
	checkSequenceOf(f.w)
	w := f.w
	refused := strings.HasPrefix(p, protectedRefused+"/")
	if refused {
		f.makeRefused()
	}
	conn := newCallConn(w, c, "protected create")
	c.start("protected", func(ctx context.Context) error {
		var created string
		err := conn.call(func() (err error) {
			created, err = recipes.CreateProtectedEphemeralSequential(ctx, conn, p, []byte("x"), zksim.OpenACL())
			return err
		})
		defer f.protected.returned.Store(true)
		bad := zksim.ValidatePath(p, true) != nil
		switch {
		case bad && (err == nil || !errors.Is(err, zksim.ErrBadArguments)):
			w.violate(kindProtectedCreate, "p%d created %q for the bad path %q (error %v), want ErrBadArguments", c.idx, created, p, err)
			return err
		case refused && !errors.Is(err, zksim.ErrNoAuth) && !failedOK(err):
			w.violate(kindProtectedCreate, "p%d's create of %q, under %s whose ACL refuses creates, returned %q, %v; want ErrNoAuth", c.idx, p, protectedRefused, created, err)
			return err
		case err != nil:
			return err
		}
		i := strings.LastIndexByte(p, '/')
		dir, name := p[:max(i, 1)], p[i+1:]
		if !strings.HasPrefix(created, strings.TrimSuffix(dir, "/")+"/") || strings.Contains(created[len(strings.TrimSuffix(dir, "/"))+1:], "/") {
			w.violate(kindProtectedCreate, "p%d's create of %q returned %q, not a child of %s", c.idx, p, created, dir)
			return nil
		}
		child := created[strings.LastIndexByte(created, '/')+1:]
		want, good := protectedSeq(child, name)
		if !good {
			w.violate(kindProtectedCreate, "p%d's create of %q returned %q: not _c_<GUID>-%s<sequence>", c.idx, p, created, name)
			return nil
		}
		if seq, ok := recipes.SequenceOf(child, name); name != "" && (!ok || seq != want) {
			w.violate(kindProtectedCreate, "SequenceOf(%q, %q) = %d, %v; want %d", child, name, seq, ok, want)
		}
		ok, st, _ := w.observer.Exists(w.ctx, created)
		if !ok {
			return nil // its session ended since
		}
		if st.EphemeralOwner != conn.SessionID() {
			w.violate(kindProtectedCreate, "p%d's node %s is owned by session %#x, not its own %#x", c.idx, created, st.EphemeralOwner, conn.SessionID())
		}
		f.protected.mu.Lock()
		defer f.protected.mu.Unlock()
		if f.protected.created == nil {
			f.protected.created = map[string]protectedNode{}
		}
		for q, b := range f.protected.created {
			if q[:strings.LastIndexByte(q, '/')] != created[:strings.LastIndexByte(created, '/')] {
				continue
			}
			if got := recipes.CompareSequence(b.seq, want); cmpSign(got) != cmpSign(int(b.czxid-st.Czxid)) {
				w.violate(kindProtectedCreate, "CompareSequence(%d, %d) = %d, but %s has czxid %#x and %s %#x", b.seq, want, got, q, b.czxid, created, st.Czxid)
			}
		}
		f.protected.created[created] = protectedNode{st.Czxid, want}
		return nil
	})
}

// makeRefused makes protectedRefused, if it is not there, with an ACL
// that refuses creates.
func (f *lockFamily) makeRefused() {
	w := f.w
	for _, d := range []struct {
		p   string
		acl []zksim.ACL
	}{{protectedDir, zksim.OpenACL()}, {protectedRefused, protectedReadOnly}} {
		if _, err := w.observer.Create(w.ctx, d.p, nil, zksim.ModePersistent, d.acl); err == nil {
			w.trace("a third party creates %s", d.p)
		}
	}
}

func cmpSign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// checkSequenceOf checks SequenceOf on names it must refuse.
func checkSequenceOf(w *world) {
	for _, tc := range []struct{ child, name string }{
		{"_c_x-p-0000000001", ""}, {"_c_x-p-0000000001", "q-"}, {"_c_x-p-12", "p-"}, {"_c_x-p-+000000001", "p-"},
	} {
		if seq, ok := recipes.SequenceOf(tc.child, tc.name); ok || seq != 0 {
			w.violate(kindSequence, "SequenceOf(%q, %q) = %d, %v; want 0, false", tc.child, tc.name, seq, ok)
		}
	}
}

// checkProtected: every protected node of a live session in the
// directories the action uses was returned by a call, or belongs to a
// client whose call is under way.
func (f *lockFamily) checkProtected(owners map[int64]*client) {
	w := f.w
	if !f.protected.returned.Swap(false) {
		return
	}
	f.protected.mu.Lock()
	defer f.protected.mu.Unlock()
	for _, dir := range []string{protectedDir, protectedNested} {
		for _, name := range w.children(dir) {
			if !strings.HasPrefix(name, "_c_") {
				continue
			}
			p := strings.TrimSuffix(dir, "/") + "/" + name
			c, ok := owners[w.owner(p)]
			// (Whatever the connection's state: a cleanup waits out any
			// downtime, retry.CleanupContext, until the node is deleted or
			// the client knows its session ended.)
			if _, returned := f.protected.created[p]; !ok || returned || c.busy("protected") || sessionEnded(c.conn.State()) {
				continue
			}
			w.violate(kindOrphan, "%s belongs to p%d, whose protected create has returned without it", p, c.idx)
		}
	}
}
