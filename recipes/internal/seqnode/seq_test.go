package seqnode

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	guid := "6f1b2c3d-2a4b-4c5d-8e9f-0123456789ab"
	for _, tc := range []struct {
		name string
		seq  int32
		ok   bool
	}{
		{ProtectedName(guid, "lock-") + "0000000042", 42, true},
		{"lock-0000000000", 0, true},
		{"lock-2147483647", math.MaxInt32, true},
		{"lock--2147483648", math.MinInt32, true},
		{"lock--000000005", -5, true},
		{"lock--1000000000", -1000000000, true},
		{ProtectedName(guid, "read-") + "0000000001", 0, false}, // another marker
		{"lock-42", 0, false},
		{"lock-+000000042", 0, false},
		{"lock-00000000x2", 0, false},
		{"lock-2147483648", 0, false}, // beyond int32
		{"nolock", 0, false},
	} {
		n, ok := Parse(tc.name, "lock-")
		if ok != tc.ok || (ok && n.Seq != tc.seq) {
			t.Errorf("Parse(%q) = %v, %v; want seq %d, %v", tc.name, n.Seq, ok, tc.seq, tc.ok)
		}
	}
}

// TestParseFormat: every int32 formatted as the server does (%010d)
// parses back.
func TestParseFormat(t *testing.T) {
	for _, v := range []int32{0, 1, 9, 999999999, 1000000000, math.MaxInt32, -1, -9, -99999999, -999999999, -1000000000, math.MinInt32} {
		name := fmt.Sprintf("lock-%010d", v)
		n, ok := Parse(name, "lock-")
		if !ok || n.Seq != v {
			t.Errorf("Parse(%q) = %d, %v; want %d", name, n.Seq, ok, v)
		}
	}
}

func TestCompareAcrossWrap(t *testing.T) {
	for _, tc := range []struct{ a, b int32 }{
		{0, 1}, {41, 42}, {-5, -4}, {-1, 0},
		{math.MaxInt32 - 1, math.MaxInt32},
		{math.MaxInt32, math.MinInt32}, // the wrap: the server's next number
		{math.MaxInt32 - 3, math.MinInt32 + 3},
		{math.MinInt32, math.MinInt32 + 1},
	} {
		if Compare(tc.a, tc.b) >= 0 || Compare(tc.b, tc.a) <= 0 {
			t.Errorf("want %d before %d: Compare = %d, reverse %d", tc.a, tc.b, Compare(tc.a, tc.b), Compare(tc.b, tc.a))
		}
	}
	if Compare(7, 7) != 0 {
		t.Error("Compare(7, 7) != 0")
	}
}

// TestSortAcrossWrap sorts names whose numbers straddle the wrap, in
// creation order, however they are listed.
func TestSortAcrossWrap(t *testing.T) {
	created := []int32{math.MaxInt32 - 2, math.MaxInt32 - 1, math.MaxInt32, math.MinInt32, math.MinInt32 + 1}
	var names []string
	for i, v := range created {
		names = append(names, fmt.Sprintf("%s%010d", ProtectedName(fmt.Sprintf("guid%d", 9-i), "lock-"), v))
	}
	want := slices.Clone(names)
	slices.Reverse(names)
	names = append(names, "not-a-lock-node")
	got := ParseAll(names, "lock-")
	if len(got) != len(want) {
		t.Fatalf("parsed %d nodes, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i] {
			t.Fatalf("position %d: %s, want %s", i, got[i].Name, want[i])
		}
	}
}

func TestProtectedNames(t *testing.T) {
	g := NewGUID(nil)
	if len(g) != 36 || g[14] != '4' {
		t.Fatalf("GUID %q is not a version-4 UUID", g)
	}
	if NewGUID(nil) == g {
		t.Fatal("two GUIDs alike")
	}
	name := ProtectedName(g, "lock-") + "0000000007"
	if !HasGUID(name, g) || HasGUID(name, NewGUID(nil)) {
		t.Fatalf("HasGUID wrong for %q", name)
	}
	if got, ok := FindGUID([]string{"x", ProtectedName(NewGUID(nil), "lock-") + "0000000001", name}, g); !ok || got != name {
		t.Fatalf("FindGUID = %q, %v", got, ok)
	}
}
