package zkmem

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
)

// eventLog is a Sink that keeps the node events it hears, in order.
type eventLog struct {
	mu  sync.Mutex
	evs []string
}

func (l *eventLog) Reply(*Request, *Response) {}
func (l *eventLog) Closed(error)              {}
func (l *eventLog) Event(ev zksim.Event, _ int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, fmt.Sprintf("%v %s", ev.Type, ev.Path))
}

// ephemerals lists sess's ephemerals as the server orders them.
func ephemerals(t *testing.T, sess *Session) []string {
	t.Helper()
	resp := sess.Do(&Request{Op: OpGetEphemerals, Path: "/"})
	if resp.Err != nil {
		t.Fatal(resp.Err)
	}
	return resp.Children
}

// replayEphemerals runs hist (names become paths under /p) as the
// ephemerals of one session and returns every read's list; a failing
// multi must leave the order untouched. At the end the session closes and
// a watcher must hear its ephemerals go in the order of the last read.
func replayEphemerals(t *testing.T, hist []childStep) [][]string {
	t.Helper()
	srv := NewServer(Options{})
	defer srv.Close()
	admin, err := srv.OpenSession(time.Minute, DefaultClientAddr, new(eventLog))
	if err != nil {
		t.Fatal(err)
	}
	if resp := admin.Do(&Request{Op: OpCreate, Path: "/p", Mode: zksim.ModePersistent, ACL: zksim.OpenACL(), TTL: -1}); resp.Err != nil {
		t.Fatal(resp.Err)
	}
	owner, err := srv.OpenSession(time.Minute, DefaultClientAddr, new(eventLog))
	if err != nil {
		t.Fatal(err)
	}
	present := make(map[string]bool)
	var reads [][]string
	for i, st := range hist {
		switch st.op {
		case '+':
			resp := owner.Do(&Request{Op: OpCreate, Path: "/p/" + st.name, Mode: zksim.ModeEphemeral, ACL: zksim.OpenACL(), TTL: -1})
			if resp.Err != nil {
				t.Fatalf("step %d: create %q: %v", i, st.name, resp.Err)
			}
			present[st.name] = true
		case '-':
			if resp := owner.Do(&Request{Op: OpDelete, Path: "/p/" + st.name, Version: -1}); resp.Err != nil {
				t.Fatalf("step %d: delete %q: %v", i, st.name, resp.Err)
			}
			delete(present, st.name)
		case 'm':
			// Create what is missing, delete what is there, then fail:
			// the set must be left exactly as it was, table size included.
			before := ephemerals(t, owner)
			var ops []zksim.Op
			for _, m := range st.more {
				if present[m] {
					ops = append(ops, &zksim.DeleteOp{Path: "/p/" + m, Version: -1})
				} else {
					ops = append(ops, &zksim.CreateOp{Path: "/p/" + m, Mode: zksim.ModeEphemeral, ACL: zksim.OpenACL()})
				}
			}
			ops = append(ops, &zksim.CheckOp{Path: "/missing", Version: -1})
			resp := owner.Do(&Request{Op: OpMulti, Ops: ops})
			if n := len(resp.Results); resp.Err == nil && (n == 0 || zksim.CodeOf(resp.Results[n-1].Err) != zksim.ErrNoNode.Code) {
				t.Fatalf("step %d: the multi did not fail on its check: %v %v", i, resp.Err, resp.Results)
			}
			if after := ephemerals(t, owner); !slices.Equal(before, after) {
				t.Fatalf("step %d: a failed multi changed the order of ephemerals:\n%q\n%q", i, before, after)
			}
		case '?':
			reads = append(reads, ephemerals(t, owner))
		}
	}
	last := ephemerals(t, owner)
	w := new(eventLog)
	watcher, err := srv.OpenSession(time.Minute, DefaultClientAddr, w)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range last {
		if resp := watcher.Do(&Request{Op: OpExists, Path: p, Watch: true}); resp.Err != nil || resp.Stat == nil {
			t.Fatalf("exists %s: %v %v", p, resp.Stat, resp.Err)
		}
		want = append(want, fmt.Sprintf("%v %s", zksim.EventNodeDeleted, p))
	}
	owner.Do(&Request{Op: OpCloseSession})
	w.mu.Lock()
	got := slices.Clone(w.evs)
	w.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("the watcher heard the closed session's ephemerals go\n  %q\nwant the listing's order\n  %q", got, want)
	}
	return reads
}

// ephemeralHistories are histories of one session's ephemerals: random
// ones of several sizes (names that never fill a bucket), small ones where
// a clone has fewer buckets than the set, and one that fills a bucket of
// the set and of its clone while their tables are small.
func ephemeralHistories(r *rand.Rand, sizes []int) [][]childStep {
	var hists [][]childStep
	// A set starts with 16 buckets: two paths that share their bucket
	// among 8 but not among 16, the later one lower among 16, iterate in
	// the opposite order from a set of 8 buckets, and so does a clone of
	// them (4 buckets), which keeps the set's order within a bucket.
	var x, y string
	for i := 0; x == ""; i++ {
		a, b := fmt.Sprintf("s%d", i), fmt.Sprintf("s%d", i+1)
		if ha, hb := javaHash("/p/"+a), javaHash("/p/"+b); ha&7 == hb&7 && ha&8 != 0 && hb&8 == 0 {
			x, y = a, b
		}
	}
	hists = append(hists, []childStep{{op: '+', name: x}, {op: '+', name: y}, {op: '?'}})
	// 12 paths fill 16 buckets to the threshold: a clone gets 32.
	var twelve []childStep
	for i := range 12 {
		twelve = append(twelve, childStep{op: '+', name: fmt.Sprintf("t%d", i*11)}, childStep{op: '?'})
	}
	hists = append(hists, twelve)
	// 40 grow the set to 64 buckets; down to a few, a clone has 8 to 32.
	var shrink []childStep
	for i := range 40 {
		shrink = append(shrink, childStep{op: '+', name: fmt.Sprintf("e%d", i*7)})
	}
	for i := range 38 {
		shrink = append(shrink, childStep{op: '-', name: fmt.Sprintf("e%d", i*7)}, childStep{op: '?'})
	}
	hists = append(hists, shrink)
	// Nine paths of one hash, with fillers that never share their bucket
	// of 32: the 9th doubles the set from 32 buckets to 64, and so it does
	// a clone of 18 or of 12. (Were the set at 64 already, the 9th would
	// make the bucket a tree in Java, which zkmem does not model.)
	same := collidingNames(4)[:9]
	var fill []string
	for k := 0; len(fill) < 9; k++ {
		if f := fmt.Sprintf("f%d", k); javaHash("/p/"+f)&31 != javaHash("/p/"+same[0])&31 {
			fill = append(fill, f)
		}
	}
	var full []childStep
	for i, n := range same {
		full = append(full, childStep{op: '+', name: n}, childStep{op: '+', name: fill[i]}, childStep{op: '?'})
	}
	for _, f := range fill[:6] {
		full = append(full, childStep{op: '-', name: f}, childStep{op: '?'})
	}
	hists = append(hists, full)
	for _, size := range sizes {
		pool := namePool(r, size+9)[9:] // no names of one hash
		hists = append(hists, randomHistory(r, pool, 6*size))
	}
	return hists
}

// TestEphemeralOrderMatchesJava replays histories of a session's
// ephemerals on a real java.util.HashSet and its clone
// (testdata/EphemeralSetOrder.java, when a JDK is installed) and on zkmem,
// and compares every listing.
func TestEphemeralOrderMatchesJava(t *testing.T) {
	java := lookJava(t)
	// Small sets too: a clone of at most 5 paths has 8 buckets, fewer
	// than the set, whose own size then shows in the order.
	sizes := []int{4, 5, 6, 8, 12, 30, 120, 700}
	if testing.Short() {
		sizes = sizes[:7]
	}
	hists := ephemeralHistories(rand.New(rand.NewPCG(9, 19)), sizes)
	compareWithJava(t, java, "testdata/EphemeralSetOrder.java", hists, "/p/", " ", replayEphemerals)
}

// TestGetEphemeralsPrefix: the prefix is a plain string prefix, one that
// String.trim makes "" or "/" lists all, filtering keeps the server's
// order, and Conn.GetEphemerals sorts what the server sends.
func TestGetEphemeralsPrefix(t *testing.T) {
	srv := NewServer(Options{})
	defer srv.Close()
	owner, err := srv.OpenSession(time.Minute, DefaultClientAddr, new(eventLog))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a", "/ab", "/b", "/abc", "/c", "/a1", "/zz", "/a0"} {
		if resp := owner.Do(&Request{Op: OpCreate, Path: p, Mode: zksim.ModeEphemeral, ACL: zksim.OpenACL(), TTL: -1}); resp.Err != nil {
			t.Fatal(resp.Err)
		}
	}
	all := ephemerals(t, owner)
	if slices.IsSorted(all) {
		t.Fatalf("the server's order %q is path order: pick other paths", all)
	}
	list := func(prefix string) []string {
		resp := owner.Do(&Request{Op: OpGetEphemerals, Path: prefix})
		if resp.Err != nil {
			t.Fatal(resp.Err)
		}
		return resp.Children
	}
	for _, prefix := range []string{"", "/", " / ", "  ", "\x01/\t", "\n"} {
		if got := list(prefix); !slices.Equal(got, all) {
			t.Errorf("prefix %q: %q, want all: %q", prefix, got, all)
		}
	}
	var want []string
	for _, p := range all {
		if strings.HasPrefix(p, "/a") {
			want = append(want, p)
		}
	}
	if got := list("/a"); !slices.Equal(got, want) {
		t.Errorf("prefix /a: %q, want %q", got, want)
	}
	for _, prefix := range []string{"/a ", "\u00a0/", "/x"} {
		if got := list(prefix); len(got) != 0 {
			t.Errorf("prefix %q: %q, want none", prefix, got)
		}
	}

	c, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	mine := []string{"/na", "/nab", "/nb", "/nabc", "/nc", "/na1", "/nzz", "/na0"}
	for _, p := range mine {
		if _, err := c.Create(t.Context(), p, nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
			t.Fatal(err)
		}
	}
	srv.mu.Lock()
	raw := srv.sessions[c.SessionID()].ephemerals.paths("")
	srv.mu.Unlock()
	if slices.IsSorted(raw) {
		t.Fatalf("the server's order %q is path order: pick other paths", raw)
	}
	got, err := c.GetEphemerals(t.Context(), "/")
	if err != nil {
		t.Fatal(err)
	}
	if want := sortedCopy(mine); !slices.Equal(got, want) {
		t.Errorf("Conn.GetEphemerals: %q, want %q", got, want)
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
