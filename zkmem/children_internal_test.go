package zkmem

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/zksim/zksim"
)

// refSet is a reference model of the order of a java.util.HashSet<String>
// created with capacity 8, written differently from children.go: it
// remembers when each present name was added and sorts by (bucket,
// insertion), replaying only the rules that decide the table's size.
type refSet struct {
	log     uint // log2 of the table size; 0 before the first add
	seq     int  // insertions so far
	present map[string]int
	hashes  map[string]uint32
	inBin   map[uint32]int // present names per bucket, at the current size
}

func newRefSet() *refSet {
	return &refSet{present: make(map[string]int), hashes: make(map[string]uint32), inBin: make(map[uint32]int)}
}

func (r *refSet) bucket(name string) uint32 {
	h, ok := r.hashes[name]
	if !ok {
		h = javaHash(name)
		r.hashes[name] = h
	}
	return h & (1<<r.log - 1)
}

// resize sets the table size and counts the buckets again.
func (r *refSet) resize(log uint) {
	r.log = log
	clear(r.inBin)
	for p := range r.present {
		r.inBin[r.bucket(p)]++
	}
}

// wouldTreeify reports whether adding name would turn its bucket into a
// tree in Java, which neither this model nor zkmem follow.
func (r *refSet) wouldTreeify(name string) bool {
	return r.log >= treeifyTableLog && r.inBin[r.bucket(name)] >= treeifyBin
}

func (r *refSet) add(name string) {
	if r.log == 0 {
		r.resize(initialTableLog)
	}
	inBin := r.inBin[r.bucket(name)]
	r.present[name] = r.seq
	r.seq++
	r.inBin[r.bucket(name)]++
	if inBin >= treeifyBin && r.log < treeifyTableLog {
		r.resize(r.log + 1)
	}
	if len(r.present) > 3<<r.log/4 {
		r.resize(r.log + 1)
	}
}

func (r *refSet) remove(name string) {
	if _, ok := r.present[name]; ok {
		delete(r.present, name)
		r.inBin[r.bucket(name)]--
	}
}

func (r *refSet) order() []string {
	type keyed struct {
		key  uint64 // bucket, then insertion
		name string
	}
	ks := make([]keyed, 0, len(r.present))
	for p, seq := range r.present {
		ks = append(ks, keyed{uint64(r.bucket(p))<<32 | uint64(seq), p})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.name
	}
	return names
}

// collidingNames returns 2^k distinct names with one String.hashCode:
// "Aa" and "BB" hash alike, and so do all their concatenations.
func collidingNames(k int) []string {
	names := []string{""}
	for i := 0; i < k; i++ {
		var next []string
		for _, n := range names {
			next = append(next, n+"Aa", n+"BB")
		}
		names = next
	}
	return names
}

func TestJavaHash(t *testing.T) {
	// String.hashCode values computed by a JVM, then spread.
	for _, c := range []struct {
		s string
		h int32
	}{
		{"", 0},
		{"a", 97},
		{"zookeeper", 1600681804},
		{"lock-0000000001", -864326685},
		{"é", 233},
		{"中文", 646394},
		{"Aa", 2112},
		{"BB", 2112},
	} {
		u := uint32(c.h)
		if got, want := javaHash(c.s), u^u>>16; got != want {
			t.Errorf("javaHash(%q) = %#x, want %#x", c.s, got, want)
		}
	}
}

// childHistory is a random history of creates, deletes and reads of the
// children of one parent, built with the reference model so that no bucket
// becomes a Java tree.
type childStep struct {
	op   byte // '+', '-', '?' and, for zkmem only, 'm': a failing multi
	name string
	more []string // 'm': names to create before the failing op
}

func randomHistory(r *rand.Rand, pool []string, steps int) []childStep {
	ref := newRefSet()
	var hist []childStep
	for i := 0; i < steps; i++ {
		name := pool[r.IntN(len(pool))]
		switch _, ok := ref.present[name]; {
		case r.IntN(10) == 0:
			hist = append(hist, childStep{op: '?'})
		case r.IntN(20) == 0:
			var more []string
			for j := r.IntN(40); j > 0; j-- {
				if m := pool[r.IntN(len(pool))]; !slices.Contains(more, m) {
					more = append(more, m)
				}
			}
			hist = append(hist, childStep{op: 'm', more: more})
		case ok && r.IntN(3) > 0:
			ref.remove(name)
			hist = append(hist, childStep{op: '-', name: name})
		case !ok && !ref.wouldTreeify(name):
			ref.add(name)
			hist = append(hist, childStep{op: '+', name: name})
		}
	}
	return append(hist, childStep{op: '?'})
}

// replay runs hist on zkmem under /p and returns every read's list; each
// read is also checked against the reference model.
func replay(t *testing.T, hist []childStep) [][]string {
	t.Helper()
	srv := NewServer(Options{})
	defer srv.Close()
	c, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Create(ctx, "/p", nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	ref := newRefSet()
	var reads [][]string
	for i, st := range hist {
		switch st.op {
		case '+':
			if _, err := c.Create(ctx, "/p/"+st.name, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
				t.Fatalf("step %d: create %q: %v", i, st.name, err)
			}
			ref.add(st.name)
		case '-':
			if err := c.Delete(ctx, "/p/"+st.name, -1); err != nil {
				t.Fatalf("step %d: delete %q: %v", i, st.name, err)
			}
			ref.remove(st.name)
		case 'm':
			// Create what is missing, delete what is there, then fail:
			// the children must be left exactly as they were.
			before, _, err := c.Children(ctx, "/p")
			if err != nil {
				t.Fatal(err)
			}
			var ops []zksim.Op
			for _, m := range st.more {
				if _, ok := ref.present[m]; ok {
					ops = append(ops, &zksim.DeleteOp{Path: "/p/" + m, Version: -1})
				} else {
					ops = append(ops, &zksim.CreateOp{Path: "/p/" + m, Mode: zksim.ModePersistent, ACL: zksim.OpenACL()})
				}
			}
			ops = append(ops, &zksim.CheckOp{Path: "/missing", Version: -1})
			if _, err := c.Multi(ctx, ops...); zksim.CodeOf(err) != zksim.ErrNoNode.Code {
				t.Fatalf("step %d: failing multi: %v", i, err)
			}
			after, _, err := c.Children(ctx, "/p")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(before, after) {
				t.Fatalf("step %d: a failed multi changed the order of children:\n%q\n%q", i, before, after)
			}
		case '?':
			got, _, err := c.Children(ctx, "/p")
			if err != nil {
				t.Fatal(err)
			}
			if want := ref.order(); !slices.Equal(got, want) {
				t.Fatalf("step %d: children\n got %q\nwant %q", i, got, want)
			}
			reads = append(reads, got)
		}
	}
	return reads
}

// fullBinHistory fills one bucket with names of equal hash while the
// table is small: the 9th such name doubles the table from 32 to 64
// buckets (HashMap.treeifyBin below 64 buckets), which size alone would
// not. (A 10th would make the bucket a tree, which zkmem does not model.)
func fullBinHistory() []childStep {
	// Fillers in distinct buckets of 32, half of them moving up when the
	// table doubles to 64, so that the doubling shows in the order.
	var fill []string
	used := map[uint32]bool{}
	for k := 0; len(fill) < 9; k++ {
		f := fmt.Sprintf("x%d", k*7)
		if h := javaHash(f); !used[h&31] && h>>5&1 == uint32(len(fill)%2) {
			used[h&31] = true
			fill = append(fill, f)
		}
	}
	var h []childStep
	for i, n := range collidingNames(4)[:9] {
		h = append(h, childStep{op: '+', name: n}, childStep{op: '+', name: fill[i]}, childStep{op: '?'})
	}
	for i := 0; i < 9; i += 3 {
		h = append(h, childStep{op: '-', name: fill[i]}, childStep{op: '?'})
	}
	return append(h, childStep{op: '+', name: fill[0]}, childStep{op: '?'})
}

func namePool(r *rand.Rand, n int) []string {
	pool := collidingNames(4)[:9] // enough to fill one bucket
	pool = append(pool, "zookeeper", "é", "ça", "中文", "ключ", "lock-")
	const alphabet = "abAB09-_.éü"
	letters := []rune(alphabet)
	for len(pool) < n {
		var b strings.Builder
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "lock-%010d", r.IntN(1_000_000))
		} else {
			for j := 1 + r.IntN(6); j > 0; j-- {
				b.WriteRune(letters[r.IntN(len(letters))])
			}
		}
		if s := b.String(); s != "." && s != ".." && !slices.Contains(pool, s) {
			pool = append(pool, s)
		}
	}
	return pool
}

// TestChildOrderMatchesModel replays random histories on zkmem and
// compares every listing with the reference model; failed multis must
// leave the order untouched.
func TestChildOrderMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 17))
	replay(t, fullBinHistory())
	for _, size := range []int{12, 30, 120, 700} {
		for run := 0; run < 4; run++ {
			replay(t, randomHistory(r, namePool(r, size), 6*size))
		}
	}
}

// TestChildOrderMatchesJava replays random histories on a real
// java.util.HashSet (testdata/HashSetOrder.java, when a JDK is installed)
// and on zkmem, and compares every listing.
func TestChildOrderMatchesJava(t *testing.T) {
	java := lookJava(t)
	r := rand.New(rand.NewPCG(8, 18))
	hists := [][]childStep{fullBinHistory()}
	sizes := []int{12, 30, 120, 700, 2000}
	if testing.Short() {
		sizes = sizes[:4]
	}
	for _, size := range sizes {
		hists = append(hists, randomHistory(r, namePool(r, size), 5*size))
	}
	compareWithJava(t, java, "testdata/HashSetOrder.java", hists, "", "/", replay)
}

// lookJava returns the path of the java command, or skips t when there is
// none (fails it under CI=true: .ci/run installs default-jdk-headless).
func lookJava(t *testing.T) string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no java on PATH: .ci/run installs default-jdk-headless, and CI must run this test")
		}
		t.Skip("no java on PATH")
	}
	return java
}

// compareWithJava replays hists on a real java.util.HashSet, with the Java
// program prog run once for all of them (one step per line: "+name",
// "-name", "?" to print the listing, "!" between histories; names get
// prefix), and on zkmem with replay, and fails t at the first listing
// that differs. The program prints each listing on a line, its names
// joined by sep.
func compareWithJava(t *testing.T, java, prog string, hists [][]childStep, prefix, sep string, replay func(*testing.T, []childStep) [][]string) {
	t.Helper()
	var in bytes.Buffer
	for _, h := range hists {
		for _, st := range h {
			switch st.op {
			case '+', '-':
				fmt.Fprintf(&in, "%c%s%s\n", st.op, prefix, st.name)
			case '?':
				in.WriteString("?\n")
			}
		}
		in.WriteString("!\n")
	}
	cmd := exec.Command(java, prog)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, h := range hists {
		got := replay(t, h)
		if len(lines) < len(got) {
			t.Fatalf("history %d: java printed too few lists", i)
		}
		for j, line := range lines[:len(got)] {
			want := []string{}
			if line != "" {
				want = strings.Split(line, sep)
			}
			if !slices.Equal(nonNil(got[j]), want) {
				t.Fatalf("history %d, read %d:\n zkmem %q\n  java %q", i, j, got[j], want)
			}
		}
		lines = lines[len(got):]
	}
	if len(lines) != 0 {
		t.Fatalf("java printed %d lists more than zkmem", len(lines))
	}
}

func nonNil(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}

// TestSortedChildrenOption: the option gives bytewise order.
func TestSortedChildrenOption(t *testing.T) {
	srv := NewServer(Options{SortedChildren: true})
	defer srv.Close()
	c, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	names := []string{"b", "é", "a", "zookeeper2", "A", "lock-0000000010", "lock-0000000002"}
	for _, n := range names {
		if _, err := c.Create(ctx, "/"+n, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := c.Children(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(names), "zookeeper")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("sorted children %q, want %q", got, want)
	}
}
