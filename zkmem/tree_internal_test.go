package zkmem

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/zksim/zksim"
)

// TestTreeIndexCollisions runs random creates and deletes on a server whose
// path index has only four hash values, so that nearly every node lives in
// the overflow map, and checks every lookup against a plain set of paths.
func TestTreeIndexCollisions(t *testing.T) {
	srv := NewServer(Options{})
	defer srv.Close()
	// Narrow the hash and index the system nodes again under it.
	tr := srv.tree
	var nodes []*node
	var walk func(n *node)
	walk = func(n *node) {
		nodes = append(nodes, n)
		for _, c := range n.appendChildren(nil) {
			walk(c)
		}
	}
	walk(tr.root)
	tr.mask = 3
	clear(tr.nodes)
	for _, n := range nodes {
		tr.index(n)
	}

	c, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	live := map[string]bool{"/": true, "/zookeeper": true, "/zookeeper/quota": true, "/zookeeper/config": true}
	var all []string
	for i := 0; i < 40; i++ {
		all = append(all, "/"+strconv.Itoa(i))
		for j := 0; j < 5; j++ {
			all = append(all, "/"+strconv.Itoa(i)+"/"+strconv.Itoa(j))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for step := 0; step < 5000; step++ {
		p := all[r.IntN(len(all))]
		if r.IntN(2) == 0 {
			_, err := c.Create(ctx, p, nil, zksim.ModePersistent, zksim.OpenACL())
			switch {
			case err == nil:
				live[p] = true
			case !live[parentPath(p)] && zksim.CodeOf(err) == zksim.ErrNoNode.Code,
				live[p] && zksim.CodeOf(err) == zksim.ErrNodeExists.Code:
			default:
				t.Fatalf("create %s: %v", p, err)
			}
		} else {
			err := c.Delete(ctx, p, -1)
			switch {
			case err == nil:
				delete(live, p)
			case !live[p] && zksim.CodeOf(err) == zksim.ErrNoNode.Code,
				live[p] && zksim.CodeOf(err) == zksim.ErrNotEmpty.Code:
			default:
				t.Fatalf("delete %s: %v", p, err)
			}
		}
		for _, q := range append(all, "/", "/zookeeper", "/zookeeper/config") {
			if n := tr.get(q); (n != nil) != live[q] || (n != nil && n.path != q) {
				t.Fatalf("step %d: get(%s) = %v, want present=%v", step, q, n, live[q])
			}
		}
	}
	if len(tr.overflow) == 0 {
		t.Fatal("no node went to overflow: the test tests nothing")
	}
	if got, want := len(tr.nodes)+len(tr.overflow), len(live); got != want {
		t.Fatalf("index holds %d nodes, tree %d", got, want)
	}
}
