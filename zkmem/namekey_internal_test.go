package zkmem

import (
	"math/rand/v2"
	"testing"
)

// nodeLess must order siblings exactly as their names compare, whether or
// not the names fit in the 8-byte key.
func TestNodeLessMatchesNameOrder(t *testing.T) {
	names := []string{"", "a", "a\x01", "ab", "abcdefg", "abcdefgh", "abcdefgh0", "abcdefgi", "abcdefh",
		"b", "lock-0000000001", "lock-0000000010", "lock-000000001", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\xff", "é"}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab\x01\x7f\xc3\xa9"
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.IntN(12))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		names = append(names, string(b))
	}
	mk := func(name string) *node {
		n := &node{path: "/p/" + name, nameAt: 3}
		n.key = nameKey(n.name())
		return n
	}
	for _, x := range names {
		for _, y := range names[:200] {
			a, b := mk(x), mk(y)
			if nodeLess(a, b) != (x < y) || nodeLess(b, a) != (y < x) {
				t.Fatalf("nodeLess(%q, %q) disagrees with string order", x, y)
			}
		}
	}
}
