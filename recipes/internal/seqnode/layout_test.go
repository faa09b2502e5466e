package seqnode

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

func names(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

const (
	guidA = "_c_6f1b2c3d-2a4b-4c5d-8e9f-0123456789ab-"
	guidB = "_c_0a1b2c3d-2a4b-4c5d-8e9f-0123456789ab-"
	hexA  = "6f1b2c3d2a4b4c5d8e9f0123456789ab"
	hexB  = "0a1b2c3d2a4b4c5d8e9f0123456789ab"
)

// TestOrderAcrossWrapByLayout orders the same sequence numbers, across
// the int32 wrap, in each layout: ours as serial numbers (creation
// order), Curator's and kazoo's as text, as those libraries compare them,
// so that a recipe in their layout agrees with them even where the text
// order is not the creation order.
func TestOrderAcrossWrapByLayout(t *testing.T) {
	seqs := []string{"2147483646", "2147483647", "-2147483648", "-2147483647", "-000000001", "0000000000"}
	var zk, cur, kz []string
	for i, s := range seqs {
		g, h := guidA, hexA
		if i%2 == 1 {
			g, h = guidB, hexB
		}
		zk = append(zk, g+"lock-"+s)
		cur = append(cur, g+"lock-"+s)
		kz = append(kz, h+"__lock__"+s)
	}
	// Given in reverse, so that no order survives by accident.
	rev := func(s []string) []string { s = slices.Clone(s); slices.Reverse(s); return s }

	// Serial order is creation order across the wrap, for numbers that
	// span fewer than 2^31 creations (the first four).
	nodes, foreign := Zksim.Order(rev(zk[:4]), "lock-")
	if foreign != "" {
		t.Fatalf("zksim: foreign %q", foreign)
	}
	if got, want := names(nodes), zk[:4]; !slices.Equal(got, want) {
		t.Errorf("zksim order\n got %q\nwant %q", got, want)
	}

	nodes, foreign = Curator.Order(rev(cur), "lock-")
	if foreign != "" {
		t.Fatalf("curator: foreign %q", foreign)
	}
	// Java's String.compareTo on the text after "lock-": "-" sorts before
	// digits, and among the negatives "-0..." before "-2...", and
	// "-2147483647" before "-2147483648".
	wantCur := []string{cur[4], cur[3], cur[2], cur[5], cur[0], cur[1]}
	if got := names(nodes); !slices.Equal(got, wantCur) {
		t.Errorf("curator order\n got %q\nwant %q", got, wantCur)
	}

	nodes, foreign = Kazoo.Order(rev(kz), "__lock__")
	if foreign != "" {
		t.Fatalf("kazoo: foreign %q", foreign)
	}
	wantKz := []string{kz[4], kz[3], kz[2], kz[5], kz[0], kz[1]}
	if got := names(nodes); !slices.Equal(got, wantKz) {
		t.Errorf("kazoo order\n got %q\nwant %q", got, wantKz)
	}
}

// TestCuratorOrderCountsEveryChild: Curator sorts every child of the
// directory, a name without the marker by the whole name, so a recipe in
// its layout waits for what Curator would wait for. Read-write names are
// cut after __READ__, then after __WRIT__, and their markers are kept for
// the read rule.
func TestCuratorOrderCountsEveryChild(t *testing.T) {
	children := []string{guidA + "lock-0000000005", "0000000003-odd", guidB + "lock-0000000004", "zzz"}
	nodes, _ := Curator.Order(children, "lock-")
	want := []string{"0000000003-odd", guidB + "lock-0000000004", guidA + "lock-0000000005", "zzz"}
	if got := names(nodes); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}

	rw := []string{guidA + "__WRIT__0000000007", guidB + "__READ__0000000006"}
	nodes, _ = Curator.Order(rw, "__READ__", "__WRIT__")
	if nodes[0].Marker != "__READ__" || nodes[1].Marker != "__WRIT__" || nodes[1].Seq != 7 {
		t.Errorf("got %+v", nodes)
	}
}

// TestKazooOrderOnlyItsPatterns: kazoo counts only names that end in one
// of its patterns and a sequence.
func TestKazooOrderOnlyItsPatterns(t *testing.T) {
	children := []string{hexA + "__rlock__0000000002", hexB + "__lock__0000000003", "other", hexA + "__lock__0000000001"}
	nodes, foreign := Kazoo.Order(children, "__lock__")
	if foreign != "" {
		t.Fatalf("foreign %q", foreign)
	}
	want := []string{hexA + "__lock__0000000001", hexB + "__lock__0000000003"}
	if got := names(nodes); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	nodes, _ = Kazoo.Order(children, "__rlock__", "__lock__")
	if len(nodes) != 3 || nodes[1].Marker != "__rlock__" {
		t.Errorf("read-write: got %+v", nodes)
	}
}

// TestForeign: each layout refuses the contender nodes of the libraries
// it cannot order as they do, and only those.
func TestForeign(t *testing.T) {
	kazooLock := hexA + "__lock__0000000001"
	kazooRead := hexA + "__rlock__-2147483648"
	curatorRW := guidA + "__WRIT__0000000002"
	curatorLatch := guidA + "latch-0000000002"
	shared := guidA + "lock-0000000003"
	ours := guidA + "n_0000000004"
	mutex, election := []string{"lock-"}, []string{"n_"}
	for _, c := range []struct {
		l       Layout
		markers []string
		child   string
		foreign bool
	}{
		{Zksim, mutex, kazooLock, true}, {Zksim, mutex, kazooRead, true}, {Zksim, mutex, curatorRW, true}, {Zksim, mutex, curatorLatch, true},
		{Zksim, mutex, shared, false}, {Zksim, mutex, ours, false}, {Zksim, mutex, "locks", false},
		{Zksim, election, shared, true}, {Zksim, election, ours, false},
		{Curator, mutex, kazooLock, true}, {Curator, mutex, ours, true}, {Curator, mutex, guidA + "read-0000000001", true},
		{Curator, mutex, shared, false}, {Curator, mutex, curatorRW, false}, {Curator, mutex, "anything", false},
		{Kazoo, mutex, shared, true}, {Kazoo, mutex, curatorRW, true}, {Kazoo, mutex, ours, true},
		{Kazoo, mutex, kazooLock, false}, {Kazoo, mutex, kazooRead, false}, {Kazoo, mutex, "locks", false},
	} {
		if got := c.l.Foreign(c.child, c.markers...); got != c.foreign {
			t.Errorf("%v.Foreign(%q, %q) = %v, want %v", c.l, c.child, c.markers, got, c.foreign)
		}
	}
}

// TestKazooNames: a kazoo GUID names nodes as kazoo does, and the
// protected-create helpers find them by it.
func TestKazooNames(t *testing.T) {
	g := Kazoo.GUIDFor("6f1b2c3d-2a4b-4c5d-8e9f-0123456789ab")
	if g != hexA {
		t.Fatalf("GUIDFor = %q", g)
	}
	if got := ProtectedName(g, "__lock__"); got != hexA+"__lock__" {
		t.Errorf("ProtectedName = %q", got)
	}
	if !HasGUID(hexA+"__lock__0000000001", g) || HasGUID(hexB+"__lock__0000000001", g) {
		t.Error("HasGUID")
	}
	if Zksim.GUIDFor("x-y") != "x-y" || Curator.GUIDFor("x-y") != "x-y" {
		t.Error("GUIDFor changes a zksim or Curator GUID")
	}
}

// orderCases is testdata/order.json: names (across the int32 wrap) in the
// order the server might list them, and in the order Curator's
// LockInternals.getSortedChildren and kazoo's Lock put them. The clients
// package checks the same file against Curator and kazoo themselves.
type orderCases map[string]struct {
	Marker string   `json:"marker"`
	Names  []string `json:"names"`
	Sorted []string `json:"sorted"`
}

func TestOrderAsTheLibrariesDo(t *testing.T) {
	b, err := os.ReadFile("testdata/order.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases orderCases
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for lib, l := range map[string]Layout{"curator": Curator, "kazoo": Kazoo} {
		c := cases[lib]
		nodes, _ := l.Order(c.Names, c.Marker)
		if got := names(nodes); !slices.Equal(got, c.Sorted) {
			t.Errorf("%s order\n got %q\nwant %q", lib, got, c.Sorted)
		}
	}
}
